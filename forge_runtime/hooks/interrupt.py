"""Interrupt: a person's Esc (or another interrupt) ended the turn, and no Stop follows.

Claude Code 2.1.337 fires it once when an interrupt ends the main conversation's turn (input
`source` user/session/system, `reason` stop/permission_denied/rewind/other, `via`
terminal/client) and ignores its output. An Esc during a tool call, or before the model
answered, fires no Stop, so without this hook the interrupted turn of a goal would wait
for the session's next event to be charged. It is charged here as its Stop would charge it
(hooks/goal_handlers.py `on_stop`, as StopFailure does): a `/goal` still pending is confirmed, the
turn closed by the host's interruption note (goal/hosts/transcript.py) is charged at once, not
late, and the host's verdicts are applied. The reply is the host's to ignore; the ledger is
what this changes. Hosts that do not know the event ignore its entry in hooks.json; their
next event charges the same turn late from the same note.

A session without a goal pays three stats.
"""

from forge_runtime.hooks.charge_only import REQUIRED, on_wedged, watchdog_seconds

__all__ = ["REQUIRED", "handle", "on_wedged", "watchdog_seconds"]


def handle(event: dict) -> dict | None:
    from forge_runtime.hooks.charge_only import charged

    charged(event)
    return None
