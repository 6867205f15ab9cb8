"""The wrap-up turn against the real Claude Code: the model's requests, as the scripted
model server received them, carry FORGE_GOAL_LAST_TURN from the tranche's last turn on,
and no earlier request does.

Each working turn here is one request (the model answers in text), so the main slot's
requests are the goal's turns in order: request n is turn n + 1. The host puts a Stop
hook's `additionalContext` into the next request as a system message, "Stop hook
additional context: ...".
"""

from __future__ import annotations

import json

import pytest
from goal_support import goal_in_state
from session_support import NEVER_MET, guard_goal, model_turns, stop_reasons

pytestmark = pytest.mark.host

OBJECTIVE = "the file never.txt exists"
NO_BLOCK_CAP = {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"}
MARKER = "Stop hook additional context: FORGE_GOAL_LAST_TURN: this is the last turn"
WRAP_UP = "leave .forge/local/state.md's checklist and a note of where you stopped"
# every working response: 1,000 tokens as forge counts them
THOUSAND = """
rules:
  - name: evaluator says not yet
    when: {goal_evaluator: true}
    reply: {verdict: {ok: false, reason: "GOAL-NOT-MET: keep working"}}
  - name: model works
    reply: {text: "Working on it.", usage: {input_tokens: 1000, output_tokens: 0}}
"""


def _told_from(session) -> list[int]:
    """The indexes of the main slot's requests that carry the last-turn notice."""
    return [index for index, body in enumerate(session.model_requests())
            if MARKER in json.dumps(body)]


def test_the_20th_turns_request_is_told_it_is_the_last_and_no_earlier_one(claude_host,
                                                                          project):
    session = claude_host(NEVER_MET).run(f"/goal {OBJECTIVE}", cwd=project, timeout=90,
                                         env=NO_BLOCK_CAP)
    assert session.terminal_reason == "stop_hook_prevented", session.result
    assert model_turns(session) == 20 and len(session.model_requests()) == 20
    told = _told_from(session)
    assert told and told[0] == 19, told  # turn 20's request, the first to carry it
    assert WRAP_UP.replace("leave", "Leave") in json.dumps(session.model_requests()[19])
    # the person saw it too, once, and the budget ended the goal at 20 as before
    shown = [event["content"] for event in session.events
             if event.get("subtype") == "informational"
             and "FORGE_GOAL_LAST_TURN" in str(event.get("content"))]
    assert len(shown) == 1 and shown[0].startswith("Stop says: FORGE_GOAL_LAST_TURN")
    assert "FORGE_GOAL_BUDGET_EXHAUSTED" in stop_reasons(session)[0]
    assert goal_in_state(project)["turn_count"] == 20
    assert all(hook.exit_code == 0 for hook in session.hooks)


def test_a_token_ceiling_reached_within_a_turn_at_pace_tells_that_turn(claude_host,
                                                                       project):
    guard_goal(project, "tranche: {tokens: 3500}")  # 1,000 a turn: turn 4 crosses it
    session = claude_host(THOUSAND).run(f"/goal {OBJECTIVE}", cwd=project, timeout=90,
                                        env=NO_BLOCK_CAP)
    assert session.terminal_reason == "stop_hook_prevented", session.result
    reasons = stop_reasons(session)
    assert len(reasons) == 1 and "the token ceiling" in reasons[0] and "in 4 turns" in \
        reasons[0], reasons
    told = _told_from(session)
    assert told and told[0] == 3, told  # turn 4's request; turns 1-3 heard nothing
    body = json.dumps(session.model_requests()[3])
    assert "at this goal's pace (about 1k tokens a turn) its token ceiling (3k of 3.5k " \
           "used) is reached within it" in body
