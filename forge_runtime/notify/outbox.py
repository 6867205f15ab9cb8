"""The record of every message forge sent or tried to send, beside the goal ledger.

    <ledger root>/notify/<key>.json   {"key", "nonce", "end", "at", "time", "status",
                                       "channels", "finished", "error"}

    <ledger root>/notify/<key>.claim  the pid of the sender that took the record

A hook creates the record before it starts the sender (notify/sender.py), exclusively:
the key names what is told (a goal's end record, its stuck warning in a tranche, a
refusal at a ledger head), so a refusal that every later Stop repeats is told once, and
the stuck warning, which the session hears every 5 turns, reaches the person once. The sender
writes what each channel answered: `status` is `sent` when every channel took the
message, `failed` when one did not (each channel's `error` says why), or, for a record
still `sending` after `STALE_SECONDS`, a sender that never finished. `forge goal status`
and `forge doctor` show the failed ones; they are kept.
"""

from __future__ import annotations

import os

from forge_runtime.goal.store.layout import outbox_dir

SENDING, SENT, FAILED = "sending", "sent", "failed"
# longer than a sender may take (sender.DEADLINE_SECONDS) and its start
STALE_SECONDS = 120
_KEY_CHARS = frozenset("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789-_")


def path_of(ledger_root, key: str) -> str:
    name = "".join(char if char in _KEY_CHARS else "_" for char in key)[:120]
    return os.path.join(outbox_dir(ledger_root), f"{name}.json")


def create(ledger_root, key: str, fields: dict) -> str | None:
    """Start the record of `key`; its path, or None when it exists (told already)."""
    from forge_runtime import fastjson, safeio

    root = os.fspath(ledger_root)
    os.close(safeio.open_dir(outbox_dir(root), root, create=True))
    path = path_of(root, key)
    import time

    record = {"key": key, **fields, "at": _now(), "time": time.time(), "status": SENDING}
    if not safeio.create(path, fastjson.dumps(record).encode("utf-8"), root):
        return None
    return path


def claim(path: str, ledger_root) -> bool:
    """The sender's first act: take the record for itself (exclusively, with its pid).
    False when another sender has it: this one was started twice and sends nothing."""
    from forge_runtime import safeio

    return safeio.create(_claim_path(path), str(os.getpid()).encode("ascii"),
                         os.fspath(ledger_root))


def reopen(ledger_root, key: str) -> str | None:
    """The path of `key`'s record when no sender has taken it (one killed as it started:
    `claude -p` ends a StopFailure hook and what it started as it exits), so another may;
    else None (sent, failed, or being sent). A sender that was only slow loses the claim
    to the second one and sends nothing: the message goes out once either way."""
    path = path_of(ledger_root, key)
    record = read(path, ledger_root)
    if record is None or record.get("status") != SENDING or \
            os.path.lexists(_claim_path(path)):
        return None
    return path


def told(ledger_root, key: str) -> bool:
    """Whether a message about `key` was sent, failed, or is being sent."""
    return os.path.lexists(path_of(ledger_root, key)) and reopen(ledger_root, key) is None


def _claim_path(path: str) -> str:
    return path[:-len(".json")] + ".claim"


def finish(path: str, ledger_root, status: str, channels: list[dict],
           error: str | None = None) -> dict:
    """The record of `path` with what the sender found; returned as written."""
    from forge_runtime import fastjson, safeio

    record = read(path, ledger_root) or {}
    record.update(status=status, channels=channels, finished=_now())
    if error is not None:
        record["error"] = error
    safeio.replace(path, fastjson.dumps(record).encode("utf-8"), os.fspath(ledger_root),
                   durable=False)
    return record


def discard(path: str, ledger_root) -> None:
    """Drop the record of a message nobody was to receive (no channel configured)."""
    from forge_runtime import safeio

    safeio.remove(path, os.fspath(ledger_root))


def read(path: str, ledger_root) -> dict | None:
    from forge_runtime import fastjson, safeio

    try:
        record = fastjson.loads(safeio.read_bytes(path, os.fspath(ledger_root)))
    except (OSError, ValueError):
        return None
    return record if isinstance(record, dict) else None


def records(ledger_root) -> list[dict]:
    """Every record, oldest first."""
    directory = outbox_dir(ledger_root)
    try:
        names = sorted(name for name in os.listdir(directory) if name.endswith(".json"))
    except OSError:
        return []
    found = [read(os.path.join(directory, name), ledger_root) for name in names]
    return sorted((record for record in found if record is not None),
                  key=lambda record: (str(record.get("at")), _time(record)))


def _time(record: dict) -> float:
    """When the record was made, to the fraction of a second (`at` is to the second)."""
    made = record.get("time")
    return made if isinstance(made, (int, float)) and not isinstance(made, bool) else 0.0


def failed(ledger_root, nonce: str | None = None) -> list[dict]:
    """The records of messages that did not reach every channel (a sender that never
    finished included), of goal `nonce` or of every goal, oldest first."""
    return [record for record in map(_as_failed, records(ledger_root))
            if record is not None and (nonce is None or record.get("nonce") == nonce)]


def unanswered(ledger_root) -> list[dict]:
    """The failed records that no message sent to every channel has followed since: what
    `forge doctor` reports, until the channels take one again (a goal's end, or `forge
    notify test`)."""
    found: list[dict] = []
    for record in records(ledger_root):
        if record.get("status") == SENT:
            found = []
        elif (failure := _as_failed(record)) is not None:
            found.append(failure)
    return found


def _as_failed(record: dict) -> dict | None:
    """`record` when its message failed; a record still `sending` long after any sender
    would have finished, as failed; else None."""
    if record.get("status") == SENDING:
        import time

        from forge_runtime.goal.budget.ceilings import epoch

        try:
            stale = time.time() - epoch(str(record.get("at"))) > STALE_SECONDS
        except ValueError:
            stale = True
        if not stale:
            return None
        return {**record, "status": FAILED,
                "error": "the sender never finished (killed, or it could not start)"}
    return record if record.get("status") == FAILED else None


def failure_words(record: dict) -> str:
    """One failed record in a line: when, what, and each channel that failed and why."""
    why = record.get("error") or "; ".join(
        f"{channel.get('channel')}: {channel.get('error')}"
        for channel in record.get("channels") or () if channel.get("status") != SENT)
    return f"{record.get('at')} {record.get('end')}: {why}"


def status_lines(ledger_root, nonce: str) -> list[str]:
    """`forge goal status`'s line for the goal's messages that failed, or none."""
    failures = failed(ledger_root, nonce)
    if not failures:
        return []
    more = f" ({len(failures)} failed; forge doctor lists them)" if len(failures) > 1 else ""
    return [f"notify      not sent: {failure_words(failures[-1])}{more}"]


def _now() -> str:
    from forge_runtime.goal.budget.ceilings import now

    return now()
