"""Interrupt: a person's Esc (or another interrupt) ended the turn, and no Stop follows.

Claude Code 2.1.337 fires it once when an interrupt ends the main conversation's turn (input
`source` user/session/system, `reason` stop/permission_denied/rewind/other, `via`
terminal/client) and ignores its output. An Esc during a tool call, or before the model
answered, fires no Stop, so without this hook the interrupted turn of a goal would wait
for the session's next event to be charged. It is charged here as its Stop would charge it
(goal/events.py `on_stop`, as StopFailure does): a `/goal` still pending is confirmed, the
turn closed by the host's interruption note (goal/transcript.py) is charged at once, not
late, and the host's verdicts are applied. The reply is the host's to ignore; the ledger is
what this changes. Hosts that do not know the event ignore its entry in hooks.json; their
next event charges the same turn late from the same note.

A session without a goal pays three stats.
"""

REQUIRED: dict[str, type] = {}
# Below the host's own limit for Interrupt hooks (30 s, read from the binary); the charge
# may wait on the ledger's lock like a Stop's.
WATCHDOG_SECONDS = 25.0


def watchdog_seconds(host) -> float:
    """How long this hook may take before its watchdog answers (hooks/dispatch.py)."""
    return WATCHDOG_SECONDS


def on_wedged(event: dict | None, seconds: float) -> dict | None:
    """Nothing to answer (the host ignores it): the session's next event charges the turn."""
    return None


def handle(event: dict) -> dict | None:
    from forge_runtime.goal import sessions

    if not sessions.event_involvement(event):
        return None
    from forge_runtime.goal.events import on_stop

    on_stop(event)  # its reply is the host's to ignore; the ledger is what this changes
    return None
