"""The Stop that confirms a pending `/goal`: the transcript must show the person's `/goal`
command for that prompt and the host's `Goal set:` reply; only then does forge activate,
bind the session and charge the first turn. A model-caused `/goal` never activates: its
pending note is dropped.
"""

from __future__ import annotations

import os

from forge_runtime.errors import ForgeError
from forge_runtime.goal.events.catch_up import catch_up_sessions
from forge_runtime.goal.events.reading import reader
from forge_runtime.goal.hosts import transcript
from forge_runtime.goal.store import sessions
from forge_runtime.goal.store.layout import goal_dir, remote_state_file
from forge_runtime.goal.store.ledger import TRANCHE
from forge_runtime.goal.store.objective import normalise
from forge_runtime.goal.sync.witness import witnessed_ledger
from forge_runtime.project import Project

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from forge_runtime.goal.events.handed_in import FinalGates, SandboxPosture


def host_posture(project: Project, event: dict) -> dict | None:
    """The host's own sandbox for its session (Codex's kernel layer), as the host's adapter
    reads it (goal/hosts/host_adapter.py); None on Claude Code, whose sandbox is forge's
    settings layer."""
    from forge_runtime.goal.hosts import host_adapter

    handed = host_adapter.adapter(event)
    if handed is None:
        return None
    from pathlib import Path

    return handed.sandbox_posture(Path(project.root), event.get("transcript_path"))


def confirm_pending(project: Project, event: dict, binding: dict | None, chunk: transcript.Chunk,
                    gates: FinalGates, posture: SandboxPosture
                    ) -> tuple[dict | None, transcript.Chunk]:
    """The binding and the rest of the chunk after a person's `/goal` the transcript
    confirms (activated, its first turn still to charge); else the pending note dropped."""
    from forge_runtime.goal.hosts import host_adapter as goal_host
    from forge_runtime.goal.rules import activation, qualification

    session = event["session_id"]
    pending = sessions.read_pending(project.ledger_root, session) or {}
    prompt_id = pending.get("prompt_id")
    set_at = None
    if isinstance(prompt_id, str):
        def confirmed(seen: transcript.Chunk):
            return seen.person_set_goal(prompt_id, str(pending.get("objective")))

        chunk = reader(event).follow(event.get("transcript_path") or "", chunk, confirmed)
        set_at = confirmed(chunk)
        if set_at is None and chunk.person_set_goal(prompt_id, None) is not None:
            # the host did set a goal for the person's prompt, but not the objective forge
            # saw: that goal would run with no budget, so end it (the pending note stays as
            # evidence)
            raise qualification.blocked("the host set a goal for this /goal prompt whose "
                                        "objective forge cannot match to the prompt, so it "
                                        "cannot be budgeted", "forge doctor")
    if set_at is None:  # not a person's /goal: never activates
        sessions.drop_pending(project.ledger_root, session)
        return binding, chunk
    from forge_runtime.goal.hosts.nesting import require_person

    try:  # a session an agent started: its host set a goal no person gave, so it ends
        require_person(str(pending.get("objective")))
    except ForgeError:
        sessions.drop_pending(project.ledger_root, session)
        raise
    qualification.require(project, os.environ.get("CLAUDE_PLUGIN_ROOT"))
    sandbox = posture.for_goal(project, host_posture(project, event))
    recorded = pending.get("recorded")
    from forge_runtime.goal.store import prompt_notes

    note = prompt_notes.found(project.ledger_root, session)
    _catch_up_goal_of(project, str(pending["objective"]), session, gates)
    started = activation.activate(project, pending["objective"], session,
                                  recorded if isinstance(recorded, dict)
                                  else gates.recorded_field(project), sandbox,
                                  activation.clock_start(pending.get("at")),
                                  _prompt_plan(project, event, note),
                                  (note or {}).get("limits"), goal_host.name(event))
    # the pending note stays until the binding is written (`_stop_bound`): a hook killed in
    # between confirms again at the next Stop (activation binds idempotently) instead of
    # leaving the session unbound with its native goal running unbudgeted
    binding = {"nonce": started.goal["nonce"], "objective": started.goal["objective"],
               "repository": started.goal["repository"]}
    from forge_runtime.goal.sync import remote

    published_on = remote.configured(project)
    if published_on is not None or os.path.exists(remote_state_file(
            goal_dir(project.ledger_root, started.goal["nonce"]))):
        # what this person's /goal grants here, whatever tranches a chain that came from a
        # remote (now or before `goal.remote` was taken out) holds
        binding["allowance"] = started.goal["turn_count"] + TRANCHE
    if published_on is not None:  # every later hook of the session publishes without asking
        binding["remote"] = published_on
        if started.notice is not None:  # said once, by the publish step of this Stop
            remote.write_state(witnessed_ledger(project, started.goal["nonce"]),
                               failed=started.notice)
    return binding, chunk.after(set_at)


def _catch_up_goal_of(project: Project, objective: str, session: str,
                      gates: FinalGates) -> None:
    """Before a person's `/goal` applies: the turns its goal's other sessions left owed
    (`catch_up_sessions`), so a new tranche or a new session starts from every turn worked."""
    from forge_runtime.goal.store.objective import objective_hash
    from forge_runtime.goal.store.objective_index import find_nonce

    nonce = find_nonce(project.ledger_root, objective_hash(normalise(objective)))
    if nonce is not None and os.path.isdir(os.path.join(project.ledger_root, nonce)):
        catch_up_sessions(project, nonce, session, gates)


def _prompt_plan(project: Project, event: dict, note: dict | None) -> dict | None:
    """The plan's reading the person's `/goal` prompt found (`note`, goal/store/prompt_notes.py):
    where the goal's own use of the week starts (goal/budget/plan.py), and no higher than what the
    host reports now (`plan.no_higher`): a start set high would hide what the goal uses."""
    if not note or note.get("plan") is None:
        return None
    from forge_runtime.goal.budget import plan
    from forge_runtime.goal.hosts import plan_readings

    return plan.no_higher(note["plan"], plan_readings.current(event, project.ledger_root))
