"""SessionEnd: record how the host's native goal ended before the session goes away, and
charge the turns whose Stop hooks died.

The verdict of a session's last turn (met, cleared, impossible) is written while that
turn's Stop hooks run, so the Stop cannot see it; without this hook forge would learn of
it only at the session's next prompt, which may never come. Sessions with no goal pay
three stats.
"""

REQUIRED: dict[str, type] = {}


def watchdog_seconds(host) -> float:
    """How long this hook may take before its watchdog answers (hooks/dispatch.py): below
    the host's own limit, which its adapter knows."""
    return host.SESSION_END_WATCHDOG_SECONDS


def on_wedged(event: dict | None, seconds: float) -> dict | None:
    """Nothing runs after a session's end to stop: the hook just answers in time (the
    turns it could not charge are charged by the goal's next event, as after any hook that
    did not finish), and says why on stderr (the dispatcher)."""
    return None


def handle(event: dict) -> dict | None:
    from forge_runtime.goal.store import sessions

    involved = sessions.event_involvement(event)
    if sessions.PENDING in involved and sessions.BOUND not in involved:
        from forge_runtime.hooks.goal_handlers import confirm_at_end

        confirm_at_end(event)
        involved = sessions.event_involvement(event)
    if sessions.BOUND not in involved:
        return None
    from forge_runtime.hooks.goal_handlers import on_session_end

    project, binding = on_session_end(event)  # what follows takes the catch-up's binding
    tell_missed(project, binding)
    from forge_runtime import gates

    if gates.in_play(project):  # else nothing to note, nothing to import
        from forge_runtime.errors import ForgeError
        from forge_runtime.gates.goal import note_if_met, session_end_budget

        try:
            note_if_met(project, event, binding, session_end_budget(event))
        except ForgeError:  # a gates record not forge's: no one hears a SessionEnd;
            return None  # `forge goal status` and the next Stop say so
    return None


def tell_missed(project, binding: dict) -> None:
    """The goal's end that a hook recorded and died before telling (`claude -p` ends
    StopFailure's as it exits), told now (notify/missed.py): only for a goal that ended."""
    if (binding.get("goal") or {}).get("status") not in (None, "active"):
        from forge_runtime.notify.missed import note_missed

        note_missed(project.root, project.ledger_root, binding)
