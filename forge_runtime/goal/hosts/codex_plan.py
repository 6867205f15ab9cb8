"""The plan windows Codex CLI reports, read from the end of its rollout file.

Measured against Codex CLI 0.171.0 (tests/host/test_codex_plan_host.py):
- Codex writes one `event_msg` `token_count` per model response, and each carries
  `rate_limits` {"limit_id": "codex", "primary": {...} | null, "secondary": ... }, every
  window `{"used_percent": float, "window_minutes": int, "resets_at": epoch s}`: what the
  response's `x-codex-primary/secondary-*` headers said, and nothing more (a response
  without them writes `null` windows; an API key login with them records them all the same;
  Codex carries nothing over from one response to the next, and no hook input holds them).
- That entry is written after the response's tool calls have run (their
  `function_call_output` comes first), so a PreToolUse hook sees the windows as the
  previous response left them: a response that crosses a ceiling is stopped at the next
  tool call.

A rollout is the agent's to write under `danger-full-access` (or a guard opted out), so a
line it appends must grant nothing: a window's share only rises until it resets, so the
reading keeps, for each window, the highest share its entries show until the clock
passes the window's reset time (`plan.risen`: the reset time kept is the one the window was
first seen with, so a line that moves the reset cannot start a new window early, nor carry
a figure into the window after). A window whose reset time has passed says nothing of the
window now running and is left out.
"""

from __future__ import annotations

import json
import math
import os
import time

from forge_runtime import safeio
from forge_runtime.goal.budget.plan import risen

# the rate_limits fields plan.from_codex reads, and the window (its length in minutes) each
# holds as Codex writes them: the 5-hour one first, the weekly one second
SLOTS = {"primary": 300, "secondary": 10080}
TOKEN = b'"token_count"'
# beside Codex's own fields: when Codex wrote the newest entry (epoch s), which dates the
# copy forge keeps (plan_readings.py)
REPORTED_AT = "reported_at"
# how far back the reading looks: a first cheap read, then up to the goal reader's tail
FIRST_TAIL_BYTES = 64 << 10
MAX_TAIL_BYTES = 1 << 20


def plan_reading(path: str | os.PathLike, now: float | None = None) -> dict | None:
    """The rollout's `rate_limits` as its newest `token_count` entry gives them, each window
    held to the highest share the rollout's tail shows for it (see the module's docstring),
    and when Codex wrote that entry (`reported_at`); None when the tail holds no
    `token_count` at all (no model response yet)."""
    now = time.time() if now is None else now
    size = FIRST_TAIL_BYTES
    while True:
        entries, whole = _token_counts(path, size)
        if entries or whole or size >= MAX_TAIL_BYTES:
            break
        size = MAX_TAIL_BYTES
    if not entries:
        return None
    return _held(entries, now)


def _token_counts(path: str | os.PathLike, size: int) -> tuple[list[tuple[dict, object]], bool]:
    """(`rate_limits`, `timestamp`) of every `token_count` entry in the last `size` bytes,
    oldest first, and whether that was the whole file."""
    try:
        with safeio.reader(path, "rb", follow_links=True) as handle:
            total = os.fstat(handle.fileno()).st_size
            start = max(total - size, 0)
            handle.seek(start)
            data = handle.read(total - start)
    except OSError:
        return [], True
    # the last piece is a line still being written (or nothing); the first, when the read
    # starts inside the file, the rest of a line cut in two
    lines = data.split(b"\n")[1 if start > 0 else 0:-1]
    found = []
    for line in lines:
        if TOKEN not in line:
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        payload = entry.get("payload") if isinstance(entry, dict) else None
        if not isinstance(payload, dict) or entry.get("type") != "event_msg" or \
                payload.get("type") != "token_count":
            continue
        limits = payload.get("rate_limits")
        found.append((limits if isinstance(limits, dict) else {}, entry.get("timestamp")))
    return found, start == 0


def _epoch(stamp) -> int | None:
    """A rollout entry's `timestamp` (`2026-12-04T17:11:14.343Z`) in epoch seconds, by the
    ledger's own arithmetic (`ceilings.epoch`; `datetime` would cost the hot path an
    import), None for what is no real time (it must read back the same)."""
    from forge_runtime.goal.budget.ceilings import epoch

    try:
        seconds = epoch(stamp)
    except (TypeError, ValueError, IndexError):
        return None
    return seconds if time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(seconds)) == stamp[:19] \
        else None


def _window(value) -> dict | None:
    """A window in the shape Codex writes (finite numbers, none below zero), or None."""
    if not isinstance(value, dict):
        return None
    numbers = [value.get(key) for key in ("used_percent", "window_minutes", "resets_at")]
    if not all(isinstance(number, (int, float)) and not isinstance(number, bool)
               and math.isfinite(number) and number >= 0 for number in numbers):
        return None
    return value


def _held(entries: list[tuple[dict, object]], now: float) -> dict:
    """The newest entry's rate_limits with each window, found by its length whichever
    field holds it, at the highest share seen since the clock last passed its reset time
    (`plan.risen`, in Codex's percent, with no slack: the clock alone ends a window); a
    window of another length is no plan window forge reads, and is left out."""
    held: dict[int, dict] = {}
    for limits, _ in entries:
        for field in SLOTS:
            window = _window(limits.get(field))
            if window is None or window["window_minutes"] not in SLOTS.values():
                continue
            minutes = int(window["window_minutes"])
            held[minutes] = risen(held.get(minutes), {
                "used": window["used_percent"], "resets_at": window["resets_at"]}, now, slack=0)
    newest, stamp = entries[-1]
    reading = {key: value for key, value in newest.items() if key not in SLOTS}
    for field, minutes in SLOTS.items():
        window = held.get(minutes)
        reading[field] = {"used_percent": window["used"], "window_minutes": minutes,
                          "resets_at": window["resets_at"]} \
            if window is not None and window["resets_at"] > now else None
    reading[REPORTED_AT] = _epoch(stamp)
    return reading
