"""Is the host's native goal running in a session? Read from the transcript's tail.

A Stop hook asks this for a session forge has no binding for while a Stop hook keeps it
going (`stop_hook_active`): the host's native goal there would run with no budget. Standard
library only and no forge import, because that question is asked on the Stop hook's path.
The host writes a `goal_status` attachment when a goal is set (`met: false`, `sentinel`),
after each evaluation (`met`), and when it is cleared (`met: true`, `sentinel`); see
transcript.py and HOST.md.
"""

from __future__ import annotations

import os

from forge_runtime import fastjson, safeio

TAIL_BYTES = 1 << 20  # how far back `running_goal` looks; a goal's verdict follows each turn


def running_goal(path: str | os.PathLike) -> str | None:
    """The condition of the host's native goal if the transcript's newest verdict says it
    still runs (set, or judged not met), else None; reads only the transcript's tail."""
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
        verdict = goal_status(entry)
        if verdict is not None:
            return still_running(verdict)
    return None


def goal_status(entry: object) -> dict | None:
    """The `goal_status` attachment a transcript entry carries, or None."""
    if not isinstance(entry, dict) or entry.get("type") != "attachment":
        return None
    attachment = entry.get("attachment")
    if isinstance(attachment, dict) and attachment.get("type") == "goal_status":
        return attachment
    return None


def still_running(verdict: dict) -> str | None:
    """The condition of a `goal_status` verdict that says the goal still runs (set, or
    judged not met), else None. Shared with transcript.py, which reads whole chunks."""
    running = verdict.get("met") is False and not verdict.get("impossible")
    condition = verdict.get("condition")
    return condition if running and isinstance(condition, str) else None
