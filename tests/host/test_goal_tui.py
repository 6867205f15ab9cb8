"""`/goal clear` in the interactive TUI (driven in tmux) marks the goal cancelled.

`/goal clear` fires no hook: forge learns of it from the transcript (a `goal_status`
attachment with `met` and `sentinel`) at the session's next event. The TUI is also where
the host writes its transcript asynchronously, so this test checks that every Stop of the
goal run is charged there too.
"""

from __future__ import annotations

import json
import shutil

import pytest
from session_support import NEVER_MET

from forge_runtime.goal.store import state_file
from forge_runtime.project import find_project

pytestmark = [pytest.mark.host,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

OBJECTIVE = "the file never.txt exists"


def test_goal_clear_in_the_tui_marks_the_goal_cancelled(claude_host, project, tui_factory):
    host = claude_host(NEVER_MET)
    tui = tui_factory(host, project)
    state_path = find_project(project).state_path
    tui.wait_for(lambda: "❯" in tui.screen(), "the TUI prompt")

    tui.type(f"/goal {OBJECTIVE}")
    # the host's own cap on consecutive Stop-hook blocks pauses the goal after 9 turns
    tui.wait_for(lambda: "Goal paused" in tui.screen(), "the native goal to pause")
    goal_stops = len(tui.hooks("Stop"))
    goal = tui.wait_for(lambda: state_path.exists() and state_file.read(state_path).goal,
                        "forge's activation")
    tui.wait_for(lambda: state_file.read(state_path).goal["turn_count"] == goal_stops,
                 "every Stop of the goal run to be charged", timeout=5)
    assert goal["status"] == "active" and goal_stops >= 5

    tui.type("/goal clear")
    tui.wait_for(lambda: "Goal cleared" in tui.screen(), "the host to clear the goal")
    assert len(tui.hooks("UserPromptSubmit")) == 1  # /goal clear fires no hook

    tui.type("thanks, that is all")
    tui.wait_for(lambda: len(tui.hooks("Stop")) == goal_stops + 1, "the next turn's Stop")
    after = state_file.read(state_path).goal
    assert (after["status"], after["turn_count"]) == ("cancelled", goal_stops)
    assert tui.hooks("Stop")[-1]["stdout"] == ""  # a person's own turn: never stopped


NAP_THEN_NEVER_MET = """
rules:
  - name: evaluator says not yet
    when: {goal_evaluator: true}
    reply: {verdict: {ok: false, reason: "GOAL-NOT-MET: keep working"}}
  - name: model rested
    when: {last_is_tool_result: true}
    reply: {text: "Rested."}
  - name: model naps
    when: {last_user_text_contains: "take a nap"}
    reply: {tool_calls: [{name: Bash, input: {command: "sleep 4"}}]}
  - name: model works
    reply: {text: "Working on it."}
"""


def test_a_goal_typed_while_the_agent_is_busy_is_stopped_until_typed_again(
        claude_host, project, tui_factory):
    """Measured: the TUI runs a `/goal` typed mid-turn at once, inside the running turn;
    UserPromptSubmit sees `Goal set: <objective>` (not `/goal ...`) and the transcript a
    `queued_command` attachment, no `/goal` command entry. forge cannot confirm that as a
    person's `/goal`, so the native goal's first continuation is stopped with the way on."""
    host = claude_host(NAP_THEN_NEVER_MET)
    tui = tui_factory(host, project, ["--allowedTools", "Bash"])
    state_path = find_project(project).state_path
    tui.wait_for(lambda: "❯" in tui.screen(), "the TUI prompt")

    tui.type("take a nap")
    tui.wait_for(lambda: any(r["rule"] == "model naps" for r in host.server.requests),
                 "the model to start its nap")
    tui.type(f"/goal {OBJECTIVE}")  # the agent is busy
    tui.wait_for(lambda: "Goal paused" in tui.screen(), "forge to stop the native goal")
    prompts = [json.loads(call["stdin"])["prompt"] for call in tui.hooks("UserPromptSubmit")]
    assert prompts == ["take a nap", f"Goal set: {OBJECTIVE}"]
    stopped = [call for call in tui.hooks("Stop") if call["stdout"]]
    assert len(stopped) == 1 and json.loads(stopped[0]["stdin"])["stop_hook_active"] is True
    lines = json.loads(stopped[0]["stdout"])["stopReason"].splitlines()
    assert lines[0].startswith("Error: FORGE_GOAL_UNBUDGETED: ")
    assert lines[1] == f"Fix: /goal {OBJECTIVE}"

    tui.type(f"/goal {OBJECTIVE}")  # the Fix, typed when the agent is idle
    goal = tui.wait_for(lambda: state_path.exists() and state_file.read(state_path).goal,
                        "forge's activation")
    assert goal["objective"] == OBJECTIVE and goal["status"] == "active"
