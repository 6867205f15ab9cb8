"""Stop: charge the finished turns to the session's goal; end autonomy at the ceiling.

A session with no goal costs three stat calls and the imports of `sessions`; the goal code
loads only for a session that is bound to a goal (or was, says the goal witness) or has a
`/goal` awaiting confirmation, or that a Stop hook is continuing (`stop_hook_active`): then
the transcript's tail says whether it is the host's native goal running with no binding
(deleted), which forge stops.
Fail closed for a bound session: when the input is malformed or forge itself fails, its
autonomy ends (`continue: false`) instead of running unbudgeted. A session with no goal
gets nothing, whatever happens.
"""

import os

REQUIRED: dict[str, type] = {}


def handle(event: dict) -> dict | None:
    from forge_runtime.goal import sessions

    if not sessions.event_involvement(event):
        if event.get("stop_hook_active") is True:  # a Stop hook keeps this session going
            from forge_runtime.goal.native import running_goal

            condition = running_goal(event.get("transcript_path") or "")
            if condition is not None:  # the host's native goal, with no binding
                from forge_runtime.goal.events import on_unbound_goal

                return on_unbound_goal(condition)
        return None
    from forge_runtime.goal.events import on_stop

    reply = on_stop(event)
    from forge_runtime import gates

    if not gates.in_play(sessions.project_for(event)):
        return reply  # the gates' notices: none without a gates file, and nothing imported
    from forge_runtime.gates.goal import after_stop  # after the charge: it never delays it

    return after_stop(event, reply)


def on_failure(problem: str) -> dict | None:
    """End autonomy when the failing session has a goal (bound, or a `/goal` awaiting
    confirmation: the host's native goal is running); no-op for any other session."""
    from forge_runtime.goal import sessions

    event = {"session_id": os.environ.get("CLAUDE_CODE_SESSION_ID", "")}
    try:
        has_goal = bool(sessions.event_involvement(event))
    except Exception:  # we cannot even tell: a goal might be running, so stop it
        has_goal = True
    return failure_reply(problem) if has_goal else None


def failure_reply(problem: str) -> dict:
    """The reply that ends a goal's autonomy because forge's Stop hook itself failed."""
    from forge_runtime.errors import EXIT_REFUSED, ForgeError

    failure = ForgeError(f"forge's Stop hook failed ({problem}), so this goal's turns cannot "
                         "be counted", "forge goal verify", exit_code=EXIT_REFUSED,
                         code="FORGE_GOAL_HOOK_FAILED")
    return {"continue": False, "stopReason": _with_checkpoint(failure.hint().render())}


def _with_checkpoint(text: str) -> str:
    """The failure text with where the work stands, when that can still be read: the
    reply itself must go out whatever else is broken."""
    try:
        from forge_runtime.goal import checkpoint
        from forge_runtime.project import find_project

        return checkpoint.stamped(text, find_project().state_path)
    except Exception:
        return text
