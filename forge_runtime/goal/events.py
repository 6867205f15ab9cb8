"""The goal side of the host's UserPromptSubmit and Stop events.

Activation is two-phase, because of what the host writes when (measured, HOST.md):
1. UserPromptSubmit sees `/goal X` but cannot tell a person's prompt from one a model
   scheduled, and the transcript that would tell does not exist yet. forge records a
   *pending* activation for the session (objective + prompt_id) and nothing else.
2. The prompt's first Stop reads the transcript: only when it shows the person's
   `/goal` command entry for that prompt_id and the host's `Goal set:` reply does forge
   activate (rules 2-3), bind the session and charge that first turn. Otherwise the
   pending activation is dropped: a model-caused `/goal` never activates.

Each later Stop of a bound session reads only what the transcript gained since the last
event (offset kept in the binding), applies the host's verdicts (met, cleared, impossible)
and charges the turn. A session with no binding and no pending activation costs two stats.
"""

from __future__ import annotations

import os

from forge_runtime import hints
from forge_runtime.errors import ForgeError
from forge_runtime.goal import sessions, transcript
from forge_runtime.goal.objective import normalise, parse_goal_prompt
from forge_runtime.project import Project

EXHAUSTED_CODE = "FORGE_GOAL_BUDGET_EXHAUSTED"
STUCK_CODE = "FORGE_GOAL_STUCK_WARNING"
_END_KIND = {transcript.MET: "complete", transcript.CLEARED: "cancel",
             transcript.IMPOSSIBLE: "cancel"}


def _reader(event: dict):
    """The transcript reader of the host that sent `event`: transcript.py for Claude Code,
    codex_transcript.py for Codex (both offer the same functions and chunk)."""
    from forge_runtime.hosts import transcript_reader

    return transcript_reader(event)


# -- hook replies -------------------------------------------------------------------------

def stop_session(text: str) -> dict:
    """The Stop reply that ends native autonomy."""
    return {"continue": False, "stopReason": text}


def refusal_text(error: ForgeError) -> str:
    return error.hint().render()


def exhausted_hint(goal: dict) -> hints.Hint:
    """The way on from a spent budget: the same words in the Stop reply and `forge goal status`."""
    return hints.next_(f"/goal {goal['objective']}", "adds one more tranche of 20 turns",
                       or_=["/goal clear"])


def exhausted_text(goal: dict) -> str:
    head = (f"{EXHAUSTED_CODE}: goal {goal['nonce']} used {goal['turn_count']} of "
            f"{goal['turn_ceiling']} turns ({goal['activation_count']} x 20); forge stopped it.")
    return head + "\n" + exhausted_hint(goal).render()


def stuck_reply(goal: dict, unchanged: int) -> dict:
    text = (f"{STUCK_CODE}: the checklist and next step in .forge/local/state.md have not "
            f"changed for {unchanged} charged turns ({goal['turn_count']} of "
            f"{goal['turn_ceiling']} used). Tick finished steps or rethink the plan.")
    text += "\n" + hints.next_("forge goal status", "see the budget and next step").render()
    return {"systemMessage": text,
            "hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": text}}


# -- UserPromptSubmit ---------------------------------------------------------------------

def on_prompt(event: dict) -> dict | None:
    """Record a pending `/goal`, and apply verdicts that ended a bound session's goal."""
    goal_prompt = parse_goal_prompt(event["prompt"])
    if goal_prompt is not None and goal_prompt.invisible:
        return {"decision": "block", "reason": hints.error(
            "BLOCKED: this /goal's objective has no visible characters, so forge could "
            "neither show nor budget it", "forge goal status").render()}
    sets_goal = goal_prompt is not None and goal_prompt.sets_goal
    project = sessions.project_for(event)
    involved = sessions.involvement(project.ledger_root, event["session_id"])
    if not sets_goal and sessions.BOUND not in involved:
        return None
    if sessions.BOUND in involved:
        _follow_transcript(project, event)
    if sets_goal:
        from forge_runtime.goal import qualification
        from forge_runtime.sandbox import posture

        try:
            qualification.require(project, os.environ.get("CLAUDE_PLUGIN_ROOT"))
            unsandboxed = posture.goal_notice_once(project, event["session_id"])
        except ForgeError as exc:
            return {"decision": "block", "reason": refusal_text(exc)}
        sessions.write_pending(project.ledger_root, event["session_id"], {
            "objective": goal_prompt.objective, "prompt_id": event.get("prompt_id")})
        if unsandboxed:
            return {"systemMessage": unsandboxed}
    return None


def on_session_end(event: dict) -> None:
    """Apply the verdicts the session's last Stop could not see yet."""
    _follow_transcript(sessions.project_for(event), event)


def _follow_transcript(project: Project, event: dict) -> None:
    """Apply every verdict the transcript gained since the session's last event."""
    binding = sessions.read_binding(project.ledger_root, event["session_id"])
    chunk = _reader(event).read_since(event.get("transcript_path") or "",
                                      binding.get("offset", 0))
    _apply_verdicts(project, binding, chunk.verdicts(), event["session_id"])
    binding.update(offset=chunk.end_offset)
    sessions.write_binding(project.ledger_root, event["session_id"], binding)


def _apply_verdicts(project: Project, binding: dict, verdicts, session: str) -> None:
    from forge_runtime.goal.charging import end
    from forge_runtime.goal.ledger import Ledger

    ledger = Ledger(project.ledger_root, binding["nonce"])
    for verdict in verdicts:
        if verdict.condition is not None and \
                normalise(verdict.condition) != binding.get("objective"):
            continue
        end(ledger, project.state_path, _END_KIND[verdict.outcome], session,
            f"host verdict: {verdict.outcome}")


# -- Stop ---------------------------------------------------------------------------------

def on_stop(event: dict, confirm_pending: bool = True) -> dict | None:
    """Confirm a pending activation, then charge this turn to the session's goal.

    `confirm_pending` is False for `forge ledger charge`, whose transcript path comes from a
    command line rather than the host.
    """
    project = sessions.project_for(event)
    session = event["session_id"]
    involved = sessions.involvement(project.ledger_root, session)
    if not confirm_pending:
        involved.discard(sessions.PENDING)
    if not involved:
        return None
    try:
        return _stop_bound(project, event, involved)
    except ForgeError as exc:
        return stop_session(refusal_text(exc))


def on_unbound_goal(condition: str, why: str = "its binding is missing") -> dict | None:
    """The reply for a session in which the host's native goal `condition` runs (native.py)
    while forge counts no turn of it: its binding deleted, a goal set before forge was
    installed, or a goal forge recorded as ended on a verdict the host did not keep (the
    transcript is a file an agent can append to). End it; the person's `/goal` binds or
    reopens it with the count it had."""
    objective = normalise(condition)
    if not objective:
        return None
    return stop_session(hints.error(
        f"FORGE_GOAL_UNBUDGETED: this session's native /goal runs while forge counts none "
        f"of its turns ({why})", f"/goal {objective}",
        "binds this session again; the objective keeps its count").render())


def _confirm_pending(project: Project, event: dict, binding: dict | None,
                     chunk: transcript.Chunk) -> tuple[dict | None, transcript.Chunk]:
    from forge_runtime.goal import activation, qualification

    session = event["session_id"]
    pending = sessions.read_pending(project.ledger_root, session) or {}
    prompt_id = pending.get("prompt_id")
    set_at = None
    if isinstance(prompt_id, str):
        def confirmed(seen: transcript.Chunk):
            return seen.person_set_goal(prompt_id, str(pending.get("objective")))

        chunk = _reader(event).follow(event.get("transcript_path") or "", chunk, confirmed)
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
    qualification.require(project, os.environ.get("CLAUDE_PLUGIN_ROOT"))
    started = activation.activate(project, pending["objective"], session)
    # the pending note stays until the binding is written (`_stop_bound`): a hook killed in
    # between confirms again at the next Stop (activation binds idempotently) instead of
    # leaving the session unbound with its native goal running unbudgeted
    binding = {"nonce": started.goal["nonce"], "objective": started.goal["objective"],
               "repository": started.goal["repository"]}
    return binding, chunk.after(set_at)


def _stop_bound(project: Project, event: dict, involved: set[str]) -> dict | None:
    from forge_runtime.goal import activation, charging
    from forge_runtime.goal.ledger import ACTIVE, EXHAUSTED, Ledger, tampered

    session = event["session_id"]
    binding = sessions.read_binding(project.ledger_root, session) \
        if sessions.BOUND in involved else None
    offset = binding.get("offset", 0) if binding else 0
    chunk = _reader(event).read_since(event.get("transcript_path") or "", offset)
    if sessions.PENDING in involved:
        binding, chunk = _confirm_pending(project, event, binding, chunk)
    if binding is None:
        return None
    if binding.get("repository") != activation.repository_id(project.ledger_root):
        raise tampered(f"session {session} is bound to a goal of another repository")
    ledger = Ledger(project.ledger_root, binding["nonce"])
    if chunk.last_turn is None and ledger.current().goal["status"] == ACTIVE:
        # a new turn whose entry the host has not written yet, or a repeated Stop
        chunk = _reader(event).follow(event.get("transcript_path") or "", chunk,
                                      lambda seen: seen.last_turn)
    turn = chunk.last_turn or binding.get("last_turn")
    if turn is None:
        raise tampered("the transcript shows no finished turn to charge", "forge goal status")
    running = chunk.running_condition()
    if running is not None and normalise(running) != binding.get("objective"):
        # the host's native goal is not the one this session is bound to (a queued /goal
        # the first Stop could not confirm yet, or a confirmation an agent forged)
        return on_unbound_goal(running, f"this session is bound to goal {binding['nonce']}, "
                                        "another objective")
    verdicts = chunk.verdicts()
    _apply_verdicts(project, binding, [v for v in verdicts if not v.after_last_turn], session)
    result = charging.charge(ledger, project.state_path, turn, session)
    _apply_verdicts(project, binding, [v for v in verdicts if v.after_last_turn], session)
    binding.update(offset=chunk.end_offset, last_turn=turn)
    sessions.write_binding(project.ledger_root, session, binding)
    if sessions.PENDING in involved:
        sessions.drop_pending(project.ledger_root, session)
    if result.goal["status"] == EXHAUSTED:
        return stop_session(exhausted_text(result.goal))
    if result.outcome == charging.ENDED and event.get("stop_hook_active") is True:
        return _ended_but_running(binding, event)
    if result.stuck:
        return stuck_reply(result.goal, result.unchanged_turns)
    return None


def _ended_but_running(binding: dict, event: dict) -> dict | None:
    """A Stop hook continues a session whose goal forge recorded as ended: if the host's
    native goal for that objective still runs, the verdict forge believed was not the
    host's (a forged `met`), so the session stops instead of running uncounted."""
    condition = _reader(event).running_goal(event.get("transcript_path") or "")
    if condition is None or normalise(condition) != binding.get("objective"):
        return None
    return on_unbound_goal(condition, f"goal {binding['nonce']} was recorded as ended")
