"""Stop: charge the finished turns to the session's goal; end autonomy at the ceiling.

A session with no goal costs three stat calls and the imports of `sessions`; the goal code
loads only for a session that is bound to a goal (or was, says the goal witness) or has a
`/goal` awaiting confirmation, or that a Stop hook is continuing (`stop_hook_active`): then
the transcript's tail says whether it is the host's native goal running with no binding
(deleted), which forge stops.
Fail closed for a bound session: when the input is malformed or forge itself fails, its
autonomy ends (`continue: false`) instead of running unbudgeted, and so it does when the
interpreter running this hook is killed by a signal that is not the host's timeout (the
launcher then asks `on_killed`), or its launcher while it runs (see
forge_runtime/goal/store/killed_stops.py). A session with no goal gets nothing, whatever happens.
"""

import os

REQUIRED: dict[str, type] = {}


def handle(event: dict) -> dict | None:
    from forge_runtime.goal.store import sessions

    if not sessions.event_involvement(event):
        if event.get("stop_hook_active") is True:  # a Stop hook keeps this session going
            from forge_runtime.goal.hosts.native_goal import running_goal

            condition = running_goal(event.get("transcript_path") or "")
            if condition is not None:  # the host's native goal, with no binding
                from forge_runtime.goal.events.replies import on_unbound_goal

                return on_unbound_goal(condition)
        return None
    from forge_runtime.goal.store import killed_stops
    from forge_runtime.hooks.goal_handlers import charge_stop

    outcome = charge_stop(event)  # the one charge: what follows takes its outcome
    if killed_stops.launcher_gone():  # killed while this Stop ran: someone else's signal
        row = killed_stops.add(outcome.project.ledger_root, event["session_id"], None)
        outcome.reply = _ended_by_kill(outcome.reply, row)
    else:  # this Stop ran: the row of killed ones is broken
        killed_stops.clear(outcome.project.ledger_root)
    from forge_runtime import gates

    if not gates.in_play(outcome.project):
        return outcome.reply  # the gates' notices: none without a gates file, nothing imported
    from forge_runtime.errors import ForgeError
    from forge_runtime.gates.goal import after_stop  # after the charge: it never delays it

    try:
        return after_stop(event, outcome)
    except ForgeError as exc:  # the goal's gates record is not forge's: fail closed
        return {"continue": False, "stopReason": _with_checkpoint(exc.hint().render())}


# Below the host's 30 s (the dispatcher's hard limit follows 3 s later): forge's own run of
# the final gates may take 20 s of it (gates/goal.py).
WATCHDOG_SECONDS = 25.0


def watchdog_seconds(host) -> float:
    """How long this Stop may take before its watchdog answers (hooks/dispatch.py)."""
    return WATCHDOG_SECONDS


def on_wedged(event: dict | None, seconds: float) -> dict | None:
    """The watchdog's answer: a session with a goal (or that cannot be told from one) ends
    its autonomy with FORGE_GOAL_WEDGED and the checkpoint; the turn is charged by the
    session's next event, as for any Stop that did not finish."""
    return wedged_reply("Stop", event, seconds)


def wedged_reply(event_name: str, event: dict | None, seconds: float) -> dict | None:
    """`continue: false` with FORGE_GOAL_WEDGED for a goal's hook whose watchdog fired."""
    from forge_runtime.goal.store import sessions

    asked = event or {"session_id": os.environ.get("CLAUDE_CODE_SESSION_ID", "")}
    try:
        has_goal = bool(sessions.event_involvement(asked))
    except Exception:  # we cannot even tell: a goal might be running, so stop it
        has_goal = True
    if not has_goal:
        return None
    from forge_runtime.errors import EXIT_REFUSED, ForgeError
    from forge_runtime.goal.store.lock import WEDGED

    wedged = ForgeError(f"forge's {event_name} hook did not finish within {seconds:g} s: "
                        "something it reads or waits on (a file in the work tree, the goal "
                        "ledger's lock) blocks it, so this goal's turns cannot be charged "
                        "now; forge ends the goal instead", "forge goal status",
                        exit_code=EXIT_REFUSED, code=WEDGED,
                        rationale="shows the goal and what blocks it; the next event of the "
                                  "session charges every turn missed meanwhile and records "
                                  "the end")
    _owe_wedged_end(asked, wedged.message)
    return {"continue": False, "stopReason": _with_checkpoint(wedged.hint().render())}


def _owe_wedged_end(event: dict, why: str) -> None:
    """Note the wedged end in the session's binding (goal/events.owe_end) for its next event
    to record; the reply ends autonomy whether or not the note could be written."""
    try:
        from forge_runtime.goal.events.catch_up import owe_end
        from forge_runtime.goal.rules.charging import WEDGED as ENDED_WEDGED
        from forge_runtime.goal.store import sessions
        from forge_runtime.goal.store.lock import WEDGED

        owe_end(sessions.project_for(event), event["session_id"], ENDED_WEDGED,
                f"{WEDGED}: {why}")
    except Exception:  # noqa: BLE001 (whatever wedged the hook may fail this too)
        pass


def on_failure(problem: str) -> dict | None:
    """End autonomy when the failing session has a goal (bound, or a `/goal` awaiting
    confirmation: the host's native goal is running); no-op for any other session."""
    from forge_runtime.goal.store import sessions

    event = {"session_id": os.environ.get("CLAUDE_CODE_SESSION_ID", "")}
    try:
        has_goal = bool(sessions.event_involvement(event))
    except Exception:  # we cannot even tell: a goal might be running, so stop it
        has_goal = True
    return failure_reply(problem) if has_goal else None


def on_killed(signal_number: int) -> dict | None:
    """The launcher's answer for a Stop whose interpreter was killed by `signal_number` while
    the launcher lived (so not by the host's timeout): a session with a goal (or that cannot
    be told from one) ends its autonomy, and the kill joins the row of killed Stops; any
    other session gets nothing. The event itself is gone with the killed interpreter: the
    session is the host's CLAUDE_CODE_SESSION_ID, the project its CLAUDE_PROJECT_DIR."""
    from forge_runtime.goal.store import killed_stops, sessions

    event = {"session_id": os.environ.get("CLAUDE_CODE_SESSION_ID", "")}
    try:
        project = sessions.project_for(event)
        if not sessions.involvement(project.ledger_root, event["session_id"]):
            return None
    except Exception:  # we cannot even tell: a goal might be running, so stop it
        project = None
    try:
        row = killed_stops.add(project.ledger_root, event["session_id"], signal_number)
    except Exception:  # the stop matters more than the record: say it without the row
        row = [{"signal": signal_number}]
    return _ended_by_kill(None, row)


def _ended_by_kill(reply: dict | None, row: list[dict]) -> dict:
    """`reply` when it ends autonomy already (the budget, a tampered ledger), else the
    refusal that ends it because of the row of killed Stops this one closes."""
    if reply and reply.get("continue") is False:
        return reply
    from forge_runtime.goal.store import killed_stops

    refusal = killed_stops.refusal(row)
    return {"continue": False, "stopReason": _with_checkpoint(refusal.hint().render())}


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
        from forge_runtime.goal.views import checkpoint
        from forge_runtime.project import find_project

        return checkpoint.stamped(text, find_project().state_path)
    except Exception:
        return text
