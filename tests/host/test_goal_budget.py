"""The goal ledger against the real Claude Code: a person's /goal, 20 turns, then no more.

The scripted evaluator never says the goal is met, so only forge's budget can end the run.
The host ends a turn by itself after 9 consecutive Stop-hook blocks with no tool use (its
native goal loop counts); CLAUDE_CODE_STOP_HOOK_BLOCK_CAP raises that cap so a text-only
model can run a whole tranche.
"""

from __future__ import annotations

import json

import pytest
from goal_support import goal_in_state
from session_support import NEVER_MET, model_turns, stop_reasons

pytestmark = pytest.mark.host

OBJECTIVE = "the file never.txt exists"
NO_BLOCK_CAP = {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"}


def test_a_persons_goal_runs_exactly_20_turns_then_40_in_a_new_session(claude_host, project):
    host = claude_host(NEVER_MET)

    first = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=60, env=NO_BLOCK_CAP)
    assert first.terminal_reason == "stop_hook_prevented", first.result
    assert model_turns(first) == 20
    reasons = stop_reasons(first)
    assert len(reasons) == 1
    assert "FORGE_GOAL_BUDGET_EXHAUSTED" in reasons[0]
    assert "20 of 20 turns" in reasons[0]
    assert reasons[0].splitlines()[1:] == [
        "Checkpoint: no checklist steps in .forge/local/state.md", f"Next: /goal {OBJECTIVE}",
        "  adds one more tranche of 20 turns", "Or: /goal clear"]
    goal = goal_in_state(project)
    assert (goal["turn_count"], goal["turn_ceiling"], goal["status"]) == (20, 20, "exhausted")

    second = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=60, env=NO_BLOCK_CAP)
    assert second.session_id != first.session_id
    assert second.terminal_reason == "stop_hook_prevented", second.result
    assert model_turns(second) == 20
    assert "40 of 40 turns" in stop_reasons(second)[0]
    again = goal_in_state(project)
    assert again["nonce"] == goal["nonce"]
    assert (again["turn_count"], again["activation_count"]) == (40, 2)

    other = host.run("/goal a different objective", cwd=project, timeout=60, env=NO_BLOCK_CAP)
    assert model_turns(other) == 20
    fresh = goal_in_state(project)
    assert fresh["nonce"] != goal["nonce"]
    assert (fresh["turn_count"], fresh["turn_ceiling"]) == (20, 20)
    assert all(hook.exit_code == 0 for hook in first.hooks + second.hooks + other.hooks)


def test_the_stuck_warning_reaches_the_person_and_the_models_next_turn(claude_host, project):
    host = claude_host(NEVER_MET)
    session = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=60, env=NO_BLOCK_CAP)

    warnings = [index for index, hook in enumerate(session.hooks_for("Stop"))
                if hook.reply and "FORGE_GOAL_STUCK_WARNING" in hook.reply.get("systemMessage",
                                                                             "")]
    assert warnings == [5, 10, 15]  # after 5, 10 and 15 charged turns without progress
    # the model: its very next request has a system message with the additionalContext
    bodies = [json.dumps(body) for body in session.model_requests()]
    marker = "Stop hook additional context: FORGE_GOAL_STUCK_WARNING"
    assert [index for index, body in enumerate(bodies) if marker in body][0] == 6
    # the person: the host shows the systemMessage as an informational line
    shown = [event["content"] for event in session.events
             if event.get("subtype") == "informational"
             and "FORGE_GOAL_STUCK_WARNING" in str(event.get("content"))]
    assert len(shown) == 3 and shown[0].startswith("Stop says: FORGE_GOAL_STUCK_WARNING")
    assert goal_in_state(project)["turn_count"] == 20  # advisory only: the budget is unchanged
