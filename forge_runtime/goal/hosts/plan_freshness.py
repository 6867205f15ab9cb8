"""A Claude Code tool call of a goal with plan ceilings is checked against the plan's
figures of the answer that asked for it, not those of an answer before it.

What the host does (Claude Code 2.1.332 and 2.1.337, read in its code and measured in
tests/host/test_goal_plan_host.py):

- It applies an answer's rate-limit headers to the figures it hands its status line when
  the answer's stream ends (its `message_delta`), and in the same step gives the answer's
  entries their final usage and stop reason. Its transcript holds those entries from then
  on; a tool's PreToolUse may start before (the host runs a tool once its block arrives).
- It runs its status line 300 ms after the last change to its messages (a debounce: answers
  that come faster share one run, so a status line can skip answers), with the figures of
  that moment and, as `context_window.current_usage`, the usage of the newest answer among
  its messages. While a tool call waits in PreToolUse nothing of the main thread moves, so
  the run after the answer that asked for it comes about 0.3 s after that answer's end.

So forge's status line keeps beside each reading the usage its input shows and when it
kept it (plan_readings ANSWER and TAKEN), and a main-thread tool call waits
(`reading_for_call`) until the transcript holds the final usage of its answer and a reading
was kept after that answer began (its entry's `timestamp`) with that same usage: that
reading's figures are the answer's own or newer. None in FRESH_WAIT_SECONDS (a host that
draws no status line: `claude -p`, or one not installed; a stream that stalls before its
end; a machine too loaded): the call is denied, nothing runs, and the same call made again
waits anew.

Answers are told apart by their usage (every answer's prompt holds the one before it and
its tool results, so a session's answers do not repeat one) and, where a model's usage
does repeat, by time: a reading kept before the answer began is not of it. A subagent's
answers are in its own transcript and never in the status line's input: its calls, and
Codex's (whose rollout carries each reply's figures), are checked against the newest
reading.
"""

import os
import time

# how long a tool call waits for the figures of its answer: the host's 300 ms debounce and
# one status-line run, within PreToolUse's 2 s deadline with the guard's own checks
FRESH_WAIT_SECONDS = 1.2
POLL_SECONDS = 0.02
# how much of the transcript's end is read for the answer first, and at most (an answer
# with a large tool input, a Write, is one long line)
TAIL_BYTES = 1 << 16
LONGEST_TAIL = 1 << 24
STALE_CODE = "FORGE_GOAL_PLAN_STALE"
_FIELDS = ("input_tokens", "output_tokens", "cache_creation_input_tokens",
           "cache_read_input_tokens")
_NOT_ANSWERS = ("advisor_message", "compaction")


def usage_key(usage) -> list[int] | None:
    """An answer's usage as the host shows it its status line (`current_usage`: input,
    output, cache writes, cache reads), read from the status line's input or from the
    answer's transcript entry alike: the last of its `iterations` that is an answer of the
    model, where it has those, else its own figures. None for what is no usage."""
    if not isinstance(usage, dict):
        return None
    own = [usage.get(name) or 0 for name in _FIELDS]
    if not all(isinstance(value, int) and not isinstance(value, bool) for value in own):
        return None
    iterations = usage.get("iterations")
    if _prompt(own) == 0 or not isinstance(iterations, list):
        return own
    answers = [item for item in iterations
               if not (isinstance(item, dict) and item.get("type") in _NOT_ANSWERS)]
    last = answers[-1] if answers else None
    if not isinstance(last, dict) or last.get("type") not in ("message", "fallback_message"):
        return own
    figures = [last.get(name) for name in _FIELDS]
    if not all(isinstance(value, int) and not isinstance(value, bool) for value in figures) \
            or _prompt(figures) <= 0:
        return own
    return figures


def _prompt(figures: list[int]) -> int:
    return figures[0] + figures[2] + figures[3]


class AnswerWatch:
    """(the final usage (`usage_key`), when it began (epoch s)) of the answer that asked for
    a tool call, once the transcript holds an entry of it written after its stream ended
    (its stop reason set). The first look reads the transcript's end back to the newest
    answer; each later one reads only the lines added since."""

    def __init__(self, path: str, tool_use_id: str) -> None:
        self.path, self.tool_use_id = path, tool_use_id
        self.offset: int | None = None  # where the next look starts (a line's start)

    def usage(self) -> tuple[list[int], float] | None:
        """The answer's final usage and when it began, or None while the transcript holds
        no final entry of it (or one without them)."""
        from forge_runtime import safeio

        try:
            with safeio.reader(self.path, "rb", follow_links=True) as handle:
                size = os.fstat(handle.fileno()).st_size
                if self.offset is not None and self.offset <= size:
                    handle.seek(self.offset)
                    data = handle.read(size - self.offset)
                    self.offset += data.rfind(b"\n") + 1
                    return self._answer(data.split(b"\n")[:-1], history=False)[0]
                return self._first_look(handle, size)
        except (OSError, ValueError):  # no transcript yet, or none forge may read
            return None

    def _first_look(self, handle, size: int) -> tuple[list[int], float] | None:
        span = TAIL_BYTES
        while True:
            start = max(0, size - span)
            handle.seek(start)
            data = handle.read(size - start)
            lines = data.split(b"\n")[:-1]  # the last is unfinished or empty
            found, decided = self._answer(lines if start == 0 else lines[1:], history=True)
            if decided or start == 0 or span >= LONGEST_TAIL:
                self.offset = start + data.rfind(b"\n") + 1
                return found
            span *= 4

    def _answer(self, lines: list[bytes], history: bool
                ) -> tuple[tuple[list[int], float] | None, bool]:
        """(the usage and when it began, whether `lines` decided it), read backwards; in
        the transcript's `history` only while they are entries of its newest answer (an
        older answer's entry says the one asked about is not written yet)."""
        from forge_runtime import fastjson

        needle = self.tool_use_id.encode("utf-8")
        newest = seen = None
        for line in reversed(lines):
            if b'"assistant"' not in line:
                continue
            try:
                entry = fastjson.loads(line)
            except ValueError:
                continue
            message = entry.get("message") if isinstance(entry, dict) and \
                entry.get("type") == "assistant" and entry.get("isSidechain") is not True \
                else None
            if not isinstance(message, dict):
                continue
            if seen is None:
                seen, newest = True, message.get("id")
            elif history and message.get("id") != newest:
                return None, True
            if needle in line and _asks(message, self.tool_use_id):
                usage, began = usage_key(message.get("usage")), _began(entry)
                final = isinstance(message.get("stop_reason"), str)
                return ((usage, began) if final and usage and began else None), True
        return None, seen is not None


def _began(entry: dict) -> float | None:
    """When the host made an entry (its `timestamp`, `2026-12-07T23:41:39.318Z`)."""
    from forge_runtime.goal.budget.ceilings import epoch

    stamp = entry.get("timestamp")
    if not isinstance(stamp, str) or len(stamp) < 20 or not stamp.endswith("Z"):
        return None
    try:
        return epoch(stamp) + float("0" + stamp[19:-1])
    except ValueError:
        return None


def _asks(message: dict, tool_use_id: str) -> bool:
    content = message.get("content")
    return isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_use"
        and block.get("id") == tool_use_id for block in content)


def reading_for_call(event: dict, root: str, tool_use_id: str) -> dict | str:
    """The plan's reading taken after the answer that asked for the tool call
    `tool_use_id` ended, waited for up to FRESH_WAIT_SECONDS; the denial's text when none
    comes. A reading the store does not vouch for fails closed (the tamper error)."""
    from forge_runtime.goal.hosts import plan_readings

    deadline = time.monotonic() + FRESH_WAIT_SECONDS
    answer = AnswerWatch(event.get("transcript_path") or "", tool_use_id)
    session, wanted = event["session_id"], None
    while True:
        if wanted is None:
            wanted = answer.usage()
        kept = plan_readings.claude_with_notes(root, session)
        if wanted is not None and kept is not None and _of(kept, *wanted):
            return plan_readings.bare(kept)
        if time.monotonic() >= deadline:
            return _stale_text(kept is not None)
        time.sleep(POLL_SECONDS)


def _of(kept: dict, usage: list[int], began: float) -> bool:
    """Whether a kept reading is of the answer with `usage` that began at `began`."""
    from forge_runtime.goal.hosts import plan_readings

    taken = kept.get(plan_readings.TAKEN)
    return kept.get(plan_readings.ANSWER) == usage and isinstance(taken, float) and taken > began


def _stale_text(any_reading: bool) -> str:
    """Why the call is denied: no plan figures at all in this session (no status line of
    forge's draws), or none of the answer that asked for the call yet."""
    from forge_runtime import hints

    if not any_reading:
        return hints.error(
            f"{STALE_CODE}: the goal has plan ceilings (.forge/guard.yaml goal.plan), and "
            "forge's status line has shown forge no plan figures in this session (claude -p "
            "draws no status line), so forge cannot tell whether the answer that asked for "
            "this tool call crossed them; forge denies the call, and nothing ran",
            "forge init --statusline", "shows forge the plan's windows in an interactive "
            "session of a subscription login; or remove goal.plan from .forge/guard.yaml"
        ).render()
    return hints.error(
        f"{STALE_CODE}: the goal has plan ceilings, and the host did not run its status line "
        "after the answer that asked for this tool call within "
        f"{FRESH_WAIT_SECONDS:g} s, so forge cannot tell whether that answer crossed them; "
        "forge denies the call, and nothing ran",
        "forge goal status", "the plan's figures as the host last reported them; the same "
        "tool call made again waits anew for the figures of the answer that asks for it"
    ).render()
