"""PreToolUse: the guard, and a goal's budget. Deny what a role may not use, what touches
protected paths, and any call of a goal whose tranche is spent.

The host starts this hook for every tool (hooks/hooks.json), reads included: a model that
only reads still makes a model request per call, so a goal's ceilings hold for those too.
A read (Read, Grep, Glob) is no role's to refuse, so the guard answers it from the receipt
key check alone and the call goes on to the budget check, whose first question for a
session without a goal is two stats (goal/store/sessions.py).

Allowing is answering nothing, so the host's own permission flow still applies; the guard
only ever adds denials. Malformed input and any failure inside the guard are denials too
(`on_failure`): the host lets a crashed or timed-out hook through, so the guard must never
be the part that fails open. The rules live in `forge_runtime.guard`.

A hard watchdog (`deadline_seconds`, armed by the dispatcher) ends the process when no
decision is reached in time, whatever step is running: the launcher then answers deny.
"""

import os

from forge_runtime.guard import deny

REQUIRED: dict[str, type] = {"tool_name": str, "tool_input": dict}

DEADLINE_SECONDS = 2.0
# May only shorten the deadline (tests make a decision overrun with it); a larger or
# unreadable value is ignored, so no setting can switch the watchdog off.
DEADLINE_ENV = "FORGE_GUARD_DEADLINE"


def deadline_seconds() -> float:
    """The watchdog's limit for one decision: 2 s, or a shorter FORGE_GUARD_DEADLINE."""
    try:
        wanted = float(os.environ.get(DEADLINE_ENV, DEADLINE_SECONDS))
    except ValueError:
        return DEADLINE_SECONDS
    return wanted if 0 < wanted < DEADLINE_SECONDS else DEADLINE_SECONDS


def handle(event: dict) -> dict | None:
    """The guard's deny, else the goal's: a goal whose tranche is spent on tokens, dollars
    or time denies the call, whatever the tool, so the turn ends at once
    (goal/events/tool_call.py)."""
    from forge_runtime.guard.decide import decide

    hint = decide(event)
    if hint is not None:
        return deny(hint.render())
    from forge_runtime.goal.store import sessions

    root = sessions.event_ledger_root(event)
    if not sessions.involvement(root, event["session_id"]):  # no goal: nothing more imported
        return None
    from forge_runtime.goal.events.tool_call import spent

    reason = spent(event, root)
    return None if reason is None else deny(reason)


def on_failure(problem: str) -> dict:
    from forge_runtime import hints

    hint = hints.error(f"forge guard cannot read this tool call ({problem}), so it denies",
                       "forge doctor", "the guard never lets a call through unchecked")
    return deny(hint.render())
