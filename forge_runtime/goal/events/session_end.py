"""SessionEnd: charge the turns and apply the verdicts the session's last Stop could not
see, and confirm a `/goal` whose first turn finished with no Stop."""

from __future__ import annotations

from forge_runtime.goal.events.catch_up import follow_transcript
from forge_runtime.goal.events.reading import reader
from forge_runtime.goal.store import sessions
from forge_runtime.project import Project

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from forge_runtime.goal.events.handed_in import FinalGates, SandboxPosture


def on_session_end(event: dict, gates: FinalGates) -> tuple[Project, dict]:
    """Charge the turns and apply the verdicts the session's last Stop could not see, then
    publish what the session leaves owed (a goal kept on the remote). Returns the project
    and the binding as the catch-up wrote it, for the rest of the hook."""
    project = sessions.project_for(event)
    binding = sessions.read_binding(project.ledger_root, event["session_id"])
    follow_transcript(project, event, binding, gates)
    if binding.get("remote"):
        from forge_runtime.goal.sync.publisher import after_event

        after_event(project, binding, None, now=True)
    return project, binding


def confirm_at_end(event: dict, gates: FinalGates, posture: SandboxPosture) -> None:
    """At SessionEnd, a person's `/goal` no Stop confirmed, whose first turn the transcript
    shows finished: confirm and charge it as its Stop would have. That Stop never ran when
    the turn ended on an API error (measured: `claude -p` ends the StopFailure hook of a
    usage limit as it exits, before it has charged anything) or was killed; the turn ran
    all the same, so it is charged."""
    path = event.get("transcript_path") or ""
    if reader(event).read_since(path, 0).turns():
        from forge_runtime.goal.events.stop import charge_stop

        charge_stop(event, gates, posture)
