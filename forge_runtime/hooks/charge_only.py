"""What the hooks share whose output the host ignores but whose turn forge charges
(StopFailure, Interrupt): the turn is charged as its Stop would charge it, and a wedged
hook answers nothing, leaving the turn to the session's next event.
"""

REQUIRED: dict[str, type] = {}
# Below the host's own limits for these hooks (StopFailure 120 s, Interrupt 30 s, read from
# the binary); the charge may wait on the ledger's lock like a Stop's.
WATCHDOG_SECONDS = 25.0


def watchdog_seconds(host) -> float:
    """How long the hook may take before its watchdog answers (hooks/dispatch.py)."""
    return WATCHDOG_SECONDS


def on_wedged(event: dict | None, seconds: float) -> dict | None:
    """Nothing to answer (the host ignores it): the session's next event charges the turn."""
    return None


def charged(event: dict) -> bool:
    """Charge the event's turn as its Stop would (hooks/goal_handlers.py `on_stop`: a pending
    `/goal` confirmed, verdicts applied); False for a session without a goal (three
    stats)."""
    from forge_runtime.goal.store import sessions

    if not sessions.event_involvement(event):
        return False
    from forge_runtime.hooks.goal_handlers import on_stop

    on_stop(event)  # its reply is the host's to ignore; the ledger is what this changes
    return True
