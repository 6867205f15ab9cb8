"""The prompt after a usage limit: held once, before it reaches the model."""

from __future__ import annotations

from forge_runtime.goal.store import sessions
from forge_runtime.goal.store.ledger import EXHAUSTED
from forge_runtime.project import Project

# the binding's note that the session's next prompt is refused: the host stopped its goal
# at the usage limit (`hold_next_prompt`)
HELD_PROMPT = "held_prompt"


def hold_next_prompt(event: dict) -> None:
    """After the host stopped a goal's turn at its usage limit (StopFailure, once its turn
    is charged), hold the session's next prompt: Claude Code sends its own continuation
    once the limit resets, and a prompt blocked before it reaches the model is one it does
    not retry (measured: "Automatic continue did not run ... send a prompt to continue"),
    so no request is spent on it. A prompt hook cannot tell the host's prompt from a
    person's (the transcript has no entry for it yet), so the next one is held whoever
    sent it, once; it says why and the way on. A goal that goes on after a usage limit
    (`after_usage_limit: continue`) holds nothing."""
    from forge_runtime.goal.budget import ceilings

    project = sessions.project_for(event)
    binding = sessions.read_binding(project.ledger_root, event["session_id"])
    goal = (binding or {}).get("goal")
    if isinstance(goal, dict) and goal.get("status") == EXHAUSTED and \
            ceilings.usage_limited(goal):
        binding[HELD_PROMPT] = ceilings.USAGE_LIMIT
        sessions.write_binding(project.ledger_root, event["session_id"], binding)


def take_held_prompt(project: Project, session: str) -> dict | None:
    """The goal whose usage limit holds this prompt (`hold_next_prompt`), or None; the
    hold is used up either way, so only one prompt is held."""
    binding = sessions.read_binding(project.ledger_root, session) or {}
    if HELD_PROMPT not in binding:
        return None
    del binding[HELD_PROMPT]
    sessions.write_binding(project.ledger_root, session, binding)
    goal = binding.get("goal")
    from forge_runtime.goal.budget import ceilings

    return goal if isinstance(goal, dict) and goal.get("status") == EXHAUSTED and \
        ceilings.usage_limited(goal) else None
