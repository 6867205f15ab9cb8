"""UserPromptSubmit: a person's `/goal` is noted as pending, never activated here.

The prompt hook cannot tell a person's prompt from one a model scheduled, and the
transcript that would tell does not exist yet: forge records a pending activation
(objective, prompt_id, the final gates and the first turn's ceilings) and the prompt's
first Stop confirms it (stop.py). For a bound session the prompt catches up the turns its
Stops missed, and blocks a prompt into a goal that this exhausts or the host sent into an
ended goal.
"""

from __future__ import annotations

import os

from forge_runtime.errors import ForgeError
from forge_runtime.goal.events.catch_up import follow_transcript
from forge_runtime.goal.events.first_turn import first_turn_limits
from forge_runtime.goal.events.held_prompt import take_held_prompt
from forge_runtime.goal.events.replies import (
    ENDED_TURN_CODE,
    ended_hint,
    exhausted_text,
    refusal_text,
)
from forge_runtime.goal.store import sessions
from forge_runtime.goal.store.ledger import ACTIVE
from forge_runtime.goal.store.objective import parse_goal_prompt
from forge_runtime.project import Project

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from forge_runtime.goal.events.handed_in import FinalGates, SandboxPosture

GATES_CHANGED_CODE = "FORGE_GATES_CHANGED"


def on_prompt(event: dict, gates: FinalGates, posture: SandboxPosture) -> dict | None:
    """Record a pending `/goal`; for a bound session, charge the turns its Stops missed and
    apply the verdicts that ended its goal (a prompt into a goal that this exhausts is
    blocked), and tell the model when the prompt starts the tranche's last turn."""
    from forge_runtime import hints

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
        try:
            binding = sessions.read_binding(project.ledger_root, event["session_id"])
            caught_up = follow_transcript(project, event, binding, gates)
        except ForgeError as exc:  # the next Stop fails closed (or this /goal rebinds)
            if not sets_goal:
                return {"systemMessage": refusal_text(exc)}
            caught_up = None
        held = take_held_prompt(project, event["session_id"])
        if not sets_goal and caught_up is not None and caught_up.exhausted_now:
            from forge_runtime.goal.views import checkpoint

            return {"decision": "block", "reason": checkpoint.stamped(exhausted_text(
                caught_up.goal, caught_up.late, caught_up.owed), project.state_path)}
        if held is not None and not sets_goal:
            from forge_runtime.goal.budget import ceilings
            from forge_runtime.goal.views import checkpoint

            return {"decision": "block", "reason": checkpoint.stamped(exhausted_text(
                held, ceiling=ceilings.USAGE_LIMIT), project.state_path)}
        if not sets_goal:
            woken = _host_prompt_held(project, event)
            if woken is not None:
                return woken
            from forge_runtime.goal.views import wrapup

            return wrapup.at_prompt(project, event)
    if sets_goal:
        from forge_runtime.goal.events.confirm import host_posture
        from forge_runtime.goal.hosts.nesting import require_person
        from forge_runtime.goal.rules import qualification

        try:
            require_person(goal_prompt.objective)
            qualification.require(project, os.environ.get("CLAUDE_PLUGIN_ROOT"))
            unsandboxed = posture.goal_notice_once(project, event["session_id"],
                                                   host_posture(project, event))
            # the ceilings the first turn's tool calls are held to before any Stop confirms
            # it (a dollar ceiling with no price table is refused here, as at that Stop)
            first_turn = first_turn_limits(project, goal_prompt.objective, event)
        except ForgeError as exc:
            return {"decision": "block", "reason": refusal_text(exc)}
        # the final gates as the person's prompt finds them, before the model's first turn
        recorded = gates.recorded_field(project)
        sessions.write_pending(project.ledger_root, event["session_id"], {
            "objective": goal_prompt.objective, "prompt_id": event.get("prompt_id"),
            "recorded": recorded, **first_turn})
        changed = gates_notice(project, goal_prompt.objective, recorded, gates)
        if unsandboxed and changed:  # one hint per reply: the gates notice's comes last
            from forge_runtime import hints

            body = hints.split_rendered(unsandboxed)[0]
            return {"systemMessage": "\n".join(body) + "\n\n" + changed}
        if unsandboxed or changed:
            return {"systemMessage": unsandboxed or changed}
    return None


def _host_prompt_held(project: Project, event: dict) -> dict | None:
    """The block for a prompt the host sent on its own (goal/hosts/host_prompts.py: a wake-up, a
    cron, a background task's notice) into a session whose goal has ended: it never reaches
    the model, so the turn it would start costs nothing. A person's prompt goes through."""
    from forge_runtime.goal.hosts import host_prompts

    binding = sessions.read_binding(project.ledger_root, event["session_id"]) or {}
    goal = binding.get("goal")
    if not isinstance(goal, dict) or goal.get("status") in (None, ACTIVE):
        return None
    why = host_prompts.sent_by_host(event, binding)
    if why is None:
        return None
    if host_prompts.forget_fired(binding, event["prompt"]):
        sessions.write_binding(project.ledger_root, event["session_id"], binding)
    from forge_runtime.goal.views import checkpoint

    text = (f"{ENDED_TURN_CODE}: goal {goal.get('nonce')} is {goal['status']}, and this prompt "
            f"is the host's own ({why}), not a person's; forge held it before it reached the "
            "model, so the turn it would start costs nothing.\n" + ended_hint(goal).render())
    return {"decision": "block", "reason": checkpoint.stamped(text, project.state_path)}


def gates_notice(project: Project, objective: str, field: dict,
                 gates: FinalGates) -> str | None:
    """At a person's `/goal`: the FORGE_GATES_CHANGED notice when the final gates it records
    (`field`, read from the gates file now) differ from those the objective's goal last
    recorded, so the person sees a gate an agent's script weakened before it counts."""
    try:
        last = gates.last_changes(project, objective, field)
    except ForgeError as exc:  # the ledger's own check refuses this /goal at its first Stop
        return refusal_text(exc)
    if last is None or not last[1]:
        return None
    nonce, lines = last
    from forge_runtime import hints

    return (f"{GATES_CHANGED_CODE}: this /goal records final gates that differ from those goal "
            f"{nonce} last recorded; it will be judged by these:\n"
            + "".join(f"  - {hints.sanitize(line)}\n" for line in lines)
            + hints.next_("git diff -- .forge/gates.yaml", "see what changed the gates; if "
                          "you did not mean it, restore the file and type the same /goal "
                          "again, which records the gates as they are then").render())
