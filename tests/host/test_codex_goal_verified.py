"""Done means verified on Codex: its model ends its own goal with `update_goal` while the
final gate fails, and forge keeps the goal going through its Stop hook, each continuation a
charged turn.

Measured (Codex CLI 0.171.0): the Stop of the turn in which the model calls `update_goal`
sees the call's result, so forge holds the `complete` at once. Codex takes no model context
on Stop; a block continues the same turn (same `turn_id`, a `hook_prompt` message in the
rollout), and Codex puts no cap on consecutive blocks: forge's ledger is the only bound.
The sessions run in danger-full-access (the project opts out of the kernel layer): commands
Codex runs in its own sandbox hang in the host kit's PID namespace (HOST.md).
"""

from __future__ import annotations

import json
import shutil

import pytest
from codex_support import start_goal
from goal_support import goal_in_state

from forge_runtime.gates.files import read_record
from forge_runtime.project import find_project

pytestmark = [pytest.mark.host,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

GATES = """\
gates:
  unit-tests:
    command: test -f done.txt
    boundary: ["*.txt"]
"""
COMPLETES_AT_ONCE = """
  - name: model completes the goal
    when: {last_user_text_contains: "Continue working toward the active thread goal"}
    times: 1
    reply: {tool_calls: [{name: update_goal, input: {status: complete}}]}
  - name: model reports
    when: {last_tool_result_contains: '"status":"complete"'}
    reply: {text: "The goal is complete."}
"""
FIXES_IT = "rules:" + COMPLETES_AT_ONCE + """
  - name: model does the work
    when: {last_user_text_contains: "FORGE_GATES_NOT_FRESH"}
    times: 1
    reply: {tool_calls: [{name: Bash, input: {command: "echo done > done.txt"}}]}
  - name: model says it is done
    when: {last_is_tool_result: true}
    reply: {text: "Wrote done.txt."}
  - name: model works
    reply: {text: "Working on it."}
"""
NEVER_FIXES_IT = "rules:" + COMPLETES_AT_ONCE + """
  - name: model works
    reply: {text: "Working on it."}
"""


def _stops(tui) -> list[dict]:
    return [json.loads(call["stdout"]) if call["stdout"] else None for call in tui.hooks("Stop")]


def _goal_tui(codex_host, project, tui_factory, script):
    (project / ".forge" / "gates.yaml").write_text(GATES)
    return start_goal(codex_host, project, tui_factory, script)


def test_a_goal_codexs_model_completes_too_early_goes_on_until_its_gate_passes(
        codex_host, project, tui_factory):
    host, tui = _goal_tui(codex_host, project, tui_factory, FIXES_IT)
    tui.wait_for(lambda: (goal_in_state(project) or {}).get("status") == "complete",
                 "forge to end the goal")
    # The ledger says complete while that Stop is still answering: wait for its reply too.
    tui.wait_for(lambda: any("FORGE_GOAL_VERIFIED" in str(stop) for stop in _stops(tui)),
                 "the Stop that ended the goal to be recorded")

    stops = _stops(tui)
    assert stops[0]["decision"] == "block" and "hookSpecificOutput" not in stops[0]
    assert stops[0]["reason"].startswith("FORGE_GATES_NOT_FRESH: goal ")
    assert stops[-1]["systemMessage"].startswith("FORGE_GOAL_VERIFIED: goal ")
    assert "decision" not in stops[-1]
    assert [r["rule"] for r in host.server.requests] == [
        "model completes the goal", "model reports", "model does the work",
        "model says it is done"]
    goal = goal_in_state(project)
    assert goal["turn_count"] == 2 == len(stops)  # the continuation was a charged turn
    record = read_record(find_project(project), goal["nonce"])
    assert record["met"]["verified"] is True
    assert record["met"]["receipts"]["unit-tests"]["confirmed"]["verdict"] == "passed"


def test_a_gate_that_never_passes_on_codex_ends_at_the_ceiling_unverified(
        codex_host, project, tui_factory):
    _, tui = _goal_tui(codex_host, project, tui_factory, NEVER_FIXES_IT)
    tui.wait_for(lambda: (goal_in_state(project) or {}).get("status") == "exhausted",
                 "forge to stop the goal at its ceiling", timeout=60)
    # The ledger says exhausted while that Stop is still answering: wait for its reply too.
    tui.wait_for(lambda: any((stop or {}).get("continue") is False for stop in _stops(tui)),
                 "the Stop that ended the goal to be recorded")

    stops = _stops(tui)
    assert len(stops) == 20 and all(stop["decision"] == "block" for stop in stops[:19])
    assert stops[-1]["continue"] is False
    lines = stops[-1]["stopReason"].splitlines()
    assert "used 20 of 20 turns" in lines[0]
    assert any(line.startswith("FORGE_GOAL_UNVERIFIED: goal ") for line in lines)
    assert goal_in_state(project)["turn_count"] == 20
