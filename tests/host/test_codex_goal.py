"""The goal ledger against the real Codex CLI: a person's native /goal in the TUI, 20 turns.

Codex's native goal auto-continues with no budget of its own (the scripted model never
finishes), so only forge's Stop hook ends the run. A person's `/goal` fires no hook on
Codex: forge confirms it from the rollout file at the goal's first Stop (see
forge_runtime/goal/hosts/codex_transcript.py).
"""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest
from codex_support import (
    OBJECTIVE,
    PROMPT,
    WORKS,
    model_turns,
    native_goal_status,
    run_goal_to_exhaustion,
)
from goal_support import goal_in_state
from tui_support import Tui

from forge_runtime.goal.store.ledger import goal_nonces
from forge_runtime.project import find_project

pytestmark = [pytest.mark.host,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

@pytest.fixture
def codex_tui(tmp_path):
    opened = []

    def make(host, cwd):
        tui = Tui(host, cwd, tmp_path / f"tui-{len(opened) + 1}")
        opened.append(tui)
        tui.wait_for(lambda: PROMPT in tui.screen(), "Codex's prompt")
        return tui

    yield make
    for tui in opened:
        tui.close()


def test_a_persons_goal_in_the_codex_tui_stops_at_20_turns_then_runs_one_more_tranche(
        codex_host, project, codex_tui):
    host = codex_host(WORKS)
    host.install_forge(project)
    tui = codex_tui(host, project)

    reply = run_goal_to_exhaustion(host, tui)
    assert reply["continue"] is False
    lines = reply["stopReason"].splitlines()
    assert lines[0].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: goal ")
    assert "used 20 of 20 turns" in lines[0]
    assert lines[1:] == ["Checkpoint: no checklist steps in .forge/local/state.md",
                         f"Next: /goal {OBJECTIVE}", "  adds one more tranche of 20 turns",
                         "Or: /goal clear"]
    assert "hookSpecificOutput" not in reply
    tui.wait_for(lambda: "FORGE_GOAL_BUDGET_EXHAUSTED" in tui.screen(), "the reason on screen")
    assert model_turns(host) == 20  # Codex started no further goal turn
    goal = goal_in_state(project)
    assert (goal["turn_count"], goal["turn_ceiling"], goal["status"]) == (20, 20, "exhausted")
    session_id = json.loads(tui.hooks("Stop")[0]["stdin"])["session_id"]
    assert native_goal_status(host, session_id) == "paused"

    again = run_goal_to_exhaustion(host, tui, turns_before=20)
    assert "used 40 of 40 turns" in again["stopReason"]
    assert model_turns(host) == 40
    after = goal_in_state(project)
    assert (after["nonce"], after["activation_count"]) == (goal["nonce"], 2)
    assert all(call["exit_code"] == 0 for call in tui.hooks("Stop"))


CREATES_GOAL = """
rules:
  - name: model creates its own goal
    when: {last_user_text_contains: "tidy up"}
    times: 1
    reply: {tool_calls: [{name: create_goal, input: {objective: "model-made goal"}}]}
  - name: model works
    reply: {text: "Working on it."}
"""


def test_a_goal_the_model_creates_never_activates_and_its_loop_is_stopped(
        codex_host, project, codex_tui):
    host = codex_host(CREATES_GOAL)
    host.install_forge(project)
    tui = codex_tui(host, project)

    tui.type("tidy up")
    tui.wait_for(lambda: any("FORGE_GOAL_UNBUDGETED" in call["stdout"]
                             for call in tui.hooks("Stop")), "forge to stop the model's goal")
    stopped = [json.loads(call["stdout"]) for call in tui.hooks("Stop") if call["stdout"]]
    assert len(stopped) == 1 and stopped[0]["continue"] is False
    assert stopped[0]["stopReason"].splitlines()[1] == "Fix: /goal model-made goal"
    assert goal_nonces(find_project(project)) == []  # nothing activated, nothing charged
    assert goal_in_state(project) is None
    session_id = json.loads(tui.hooks("Stop")[0]["stdin"])["session_id"]
    assert native_goal_status(host, session_id) == "paused"
    assert any(r["rule"] == "model creates its own goal" for r in host.server.requests)
    assert model_turns(host) <= 3  # the person's turn and the first goal turn


COMPLETES = """
rules:
  - name: model reports
    when: {last_tool_result_contains: "complete"}
    reply: {text: "The goal is complete."}
  - name: model completes the goal
    when: {last_user_text_contains: "Continue working toward the active thread goal"}
    times: 1
    reply: {tool_calls: [{name: update_goal, input: {status: complete}}]}
  - name: model works
    reply: {text: "Working on it."}
"""


def test_a_goal_the_model_completes_on_codex_ends_with_its_count(codex_host, project, codex_tui):
    host = codex_host(COMPLETES)
    host.install_forge(project)
    tui = codex_tui(host, project)

    tui.type(f"/goal {OBJECTIVE}")
    tui.wait_for(lambda: "Goal achieved" in tui.screen(), "Codex to end its goal")
    tui.type("thanks")  # the session's next turn applies what the last Stop could not see
    goal = tui.wait_for(lambda: (goal_in_state(project) or {}).get("status") == "complete"
                        and goal_in_state(project), "forge to record the goal complete")
    assert goal["turn_count"] == 1  # the one goal turn, in which the model completed it
    assert not any(call["stdout"] for call in tui.hooks("Stop"))


RECREATES = COMPLETES.replace("""  - name: model works""", f"""  - name: model recreates the goal
    when: {{last_user_text_contains: "thanks"}}
    times: 1
    reply: {{tool_calls: [{{name: create_goal, input: {{objective: "{OBJECTIVE}"}}}}]}}
  - name: after a tool
    when: {{last_is_tool_result: true}}
    reply: {{text: "Done."}}
  - name: model works""")


def test_a_goal_the_model_recreates_after_the_bound_goal_ended_never_starts(
        codex_host, project, codex_tui):
    """The session is bound to a goal that ended, and the model calls `create_goal` for
    the same objective, which must not run uncharged. Measured: Codex runs
    PreToolUse for `create_goal`, and forge refuses it in a goal session, so no goal loop
    starts (a goal turn that ran anyway would be stopped and recorded over budget:
    tests/test_hosts_codex.py)."""
    host = codex_host(RECREATES)
    host.install_forge(project)
    tui = codex_tui(host, project)

    tui.type(f"/goal {OBJECTIVE}")
    tui.wait_for(lambda: "Goal achieved" in tui.screen(), "Codex to end its goal")
    tui.type("thanks")  # the model answers with create_goal for the same objective
    tui.wait_for(lambda: any(r["rule"] == "after a tool" for r in host.server.requests),
                 "the model to see create_goal's result")
    denied = [call for call in tui.hooks("PreToolUse")
              if "FORGE_GOAL_ENDED_TURN: create_goal starts" in call["stdout"]]
    assert len(denied) == 1
    session_id = json.loads(denied[0]["stdin"])["session_id"]
    assert native_goal_status(host, session_id) == "complete"  # no new goal loop
    goal = goal_in_state(project)
    assert (goal["status"], goal["turn_count"]) == ("complete", 1)
    rollout = json.loads(denied[0]["stdin"])["transcript_path"]
    triggers = [entry["payload"].get("turn_attribution", {}).get("turn_trigger")
                for entry in map(json.loads, Path(rollout).read_text().splitlines())
                if (entry.get("payload") or {}).get("type") == "task_started"]
    assert triggers.count("goal") == 1, triggers  # the person's goal's turn, none after


def test_a_persons_goal_in_codexs_full_access_is_refused_at_its_first_stop(
        codex_host, project, tui_factory):
    """The real Codex TUI started with `--sandbox danger-full-access` (in no config file):
    forge reads the session's sandbox from the rollout and refuses the goal, pausing it."""
    (project / ".forge" / "guard.yaml").unlink()  # the default posture: no opt-out
    host = codex_host(WORKS)
    host.install_forge(project)
    tui = tui_factory(host, project, ("--sandbox", "danger-full-access"))
    tui.wait_for(lambda: PROMPT in tui.screen(), "Codex's prompt")
    tui.type(f"/goal {OBJECTIVE}")
    tui.wait_for(lambda: any("FORGE_GOAL_UNSANDBOXED" in call["stdout"]
                             for call in tui.hooks("Stop")), "forge to refuse the goal",
                 timeout=60)
    refused = next(json.loads(call["stdout"]) for call in tui.hooks("Stop")
                   if "FORGE_GOAL_UNSANDBOXED" in call["stdout"])
    assert refused["continue"] is False
    lines = refused["stopReason"].splitlines()
    assert "Codex's sandbox_mode is danger-full-access (this session's rollout)" in lines[0]
    assert "Fix: codex --sandbox workspace-write" in lines
    session_id = json.loads(tui.hooks("Stop")[0]["stdin"])["session_id"]
    assert native_goal_status(host, session_id) == "paused"
    assert model_turns(host) == 1, "Codex started no further goal turn"
    assert goal_nonces(find_project(project)) == []
