"""Is the host's native goal running in a session? Read from the transcript's tail.

A Stop hook asks this for a session forge has no binding for while a Stop hook keeps it
going (`stop_hook_active`): the host's native goal there would run with no budget. It
imports only forge's ground layer and the host contract's plain data, because that question
is asked on the Stop hook's path. The host writes a `goal_status` attachment when a goal
is set (`met: false`, `sentinel`), after each evaluation (`met`, or `met: false` with
`failed` when the evaluator found the goal impossible), and when it is cleared (`met:
true`, `sentinel`); see HOST.md.

Only an attachment of exactly a known shape says what happened (`verdict`): a field or a
value forge has not seen in the host's writers makes it UNKNOWN, which ends forge's goal
(the ledger stops granting turns) and, asked whether the native goal still runs, reads as
"it may" (so a Stop hook stops it rather than letting it run unbudgeted).
"""

from __future__ import annotations

import os

from forge_runtime import fastjson, safeio
from forge_runtime.host_contract import claude_code as _contract

TAIL_BYTES = 1 << 20  # how far back `running_goal` looks; a goal's verdict follows each turn

# What a `goal_status` attachment says: the goal runs (set, or judged not met), or it ended,
# and how; every shape the host writes is in its contract (host_contract/claude_code.py).
RUNNING, MET, CLEARED, IMPOSSIBLE, UNKNOWN = "running", "met", "cleared", "impossible", "unknown"
_SAYS = {"set": RUNNING, "not met": RUNNING, "cleared": CLEARED, "met": MET,
         "failed": IMPOSSIBLE}
# (required fields and values, the optional fields, what it says)
_SHAPES = tuple((required, frozenset(optional), _SAYS[name])
                for name, (required, optional, _) in _contract.GOAL_STATUS.items())


def running_goal(path: str | os.PathLike) -> str | None:
    """The condition of the host's native goal if the transcript's newest verdict says it
    may still run (`may_run`), else None; reads only the transcript's tail."""
    try:
        with safeio.reader(path, "rb", follow_links=True) as handle:
            size = os.fstat(handle.fileno()).st_size
            handle.seek(max(0, size - TAIL_BYTES))
            tail = handle.read()
    except OSError:
        return None
    end = len(tail)
    while (found := tail.rfind(b'"goal_status"', 0, end)) >= 0:
        start, stop = tail.rfind(b"\n", 0, found) + 1, tail.find(b"\n", found)
        end = start
        try:
            entry = fastjson.loads(tail[start:stop if stop >= 0 else len(tail)])
        except ValueError:
            continue
        attachment = goal_status(entry)
        if attachment is not None:
            return may_run(attachment, entry)
    return None


def goal_status(entry: object) -> dict | None:
    """The `goal_status` attachment a transcript entry carries, or None."""
    if not isinstance(entry, dict) or entry.get("type") != "attachment":
        return None
    attachment = entry.get("attachment")
    if isinstance(attachment, dict) and attachment.get("type") == "goal_status":
        return attachment
    return None


def verdict(attachment: dict, entry: dict | None = None) -> str:
    """What a `goal_status` attachment says: RUNNING, MET, CLEARED, IMPOSSIBLE, or UNKNOWN
    for any shape the host's writers do not make (a new field, a value of another type),
    and for an entry the host's own reader passes over (another session's: `remoteSourced`)."""
    if entry is not None and any(entry.get(key) == value
                                 for key, value in _contract.GOAL_STATUS_SKIPPED):
        return UNKNOWN  # the host's own reader passes over it: not this session's verdict
    fields = {key: value for key, value in attachment.items() if key != "type"}
    for required, optional, says in _SHAPES:
        if all(fields.get(key) is value for key, value in required.items()) and \
                fields.keys() <= required.keys() | optional and \
                all(_well_typed(key, fields[key]) for key in optional & fields.keys()):
            return says
    return UNKNOWN


def _well_typed(key: str, value: object) -> bool:
    if key == "condition":
        return isinstance(value, str)
    if key == "reason":
        return value is None or isinstance(value, str)
    return isinstance(value, int) and not isinstance(value, bool)


def still_running(attachment: dict) -> str | None:
    """The condition of a `goal_status` attachment of a running shape (set, or judged not
    met), else None: what a chunk's reader (transcript.py) checks a binding against."""
    if verdict(attachment) != RUNNING:
        return None
    condition = attachment.get("condition")
    return condition if isinstance(condition, str) else None


def may_run(attachment: dict, entry: dict | None = None) -> str | None:
    """`still_running`, and for a shape forge does not know the condition it carries (""
    when none): asked whether the host's native goal still runs, the unknown says it may,
    so the Stop hook stops it rather than let it run unbudgeted."""
    says = verdict(attachment, entry)
    if says not in (RUNNING, UNKNOWN):
        return None
    condition = attachment.get("condition")
    return condition if isinstance(condition, str) else ""
