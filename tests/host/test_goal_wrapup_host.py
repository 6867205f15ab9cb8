"""The wrap-up turn against the real Claude Code: the model's requests, as the scripted
model server received them, carry FORGE_GOAL_LAST_TURN from the tranche's last turn on,
and no earlier request does.

Each working turn here is one request (the model answers in text), so the main slot's
requests are the goal's turns in order: request n is turn n + 1. The host puts a Stop
hook's `additionalContext` into the next request as a system message, "Stop hook
additional context: ...".

Codex 0.171.0 takes no model context on a Stop (its Stop output schema has no
`hookSpecificOutput`), so there the notice is the person's: the TUI shows it, and no
request carries it.
"""

from __future__ import annotations

import json
import shutil

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


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_on_codex_the_person_sees_the_notice_and_no_request_carries_it(codex_host, project,
                                                                       tmp_path):
    from codex_support import PROMPT, WORKS, run_goal_to_exhaustion
    from tui_support import Tui

    host = codex_host(WORKS)
    host.install_forge(project)
    tui = Tui(host, project, tmp_path / "tui")
    try:
        tui.wait_for(lambda: PROMPT in tui.screen(), "Codex's prompt")
        run_goal_to_exhaustion(host, tui)
        replies = [json.loads(call["stdout"]) if call["stdout"].strip() else None
                   for call in tui.hooks("Stop")]
        told = [index for index, reply in enumerate(replies)
                if "FORGE_GOAL_LAST_TURN" in json.dumps(reply)]
        assert told == [18] and set(replies[18]) == {"systemMessage"}, replies[18]
        tui.wait_for(lambda: "FORGE_GOAL_LAST_TURN" in tui.screen(), "the notice on screen")
        assert not [request for request in host.server.requests
                    if "FORGE_GOAL_LAST_TURN" in json.dumps(request["body"])]
    finally:
        tui.close()
