"""Final gates in a real goal session: the model runs them, edits a file one gate covers,
and forge's Stop tells its next turn which gate is stale; `forge goal verify-gates` refuses
until that gate runs again. The scripted model runs `forge` through the host's Bash tool,
where the plugin's `bin/` is on PATH."""

from __future__ import annotations

import json

import pytest

from forge_runtime.gates.goal import read_record
from forge_runtime.goal import state
from forge_runtime.project import find_project

pytestmark = pytest.mark.host

OBJECTIVE = "the gates are fresh and passing"
GATES = """\
gates:
  unit-tests:
    command: echo unit tests ran
    boundary: ["src/**"]
  docs:
    command: echo docs built
    boundary: ["docs/**"]
"""

SCRIPT = """
rules:
  - name: evaluator says met
    when: {goal_evaluator: true, conversation_contains: "GATES-VERIFIED"}
    reply: {verdict: {ok: true, reason: "verify-gates found every gate fresh"}}
  - name: evaluator says not yet
    when: {goal_evaluator: true}
    reply: {verdict: {ok: false, reason: "GOAL-NOT-MET: keep working"}}
  - name: model reports verified
    when: {last_tool_result_contains: "is fresh and passing now"}
    reply: {text: "GATES-VERIFIED"}
  - name: model verifies again
    when: {last_tool_result_contains: "[1/1] unit-tests: passed"}
    reply: {tool_calls: [{name: Bash, input: {command: "forge goal verify-gates"}}]}
  - name: model re-runs the stale gate
    when: {last_tool_result_contains: "FORGE_GOAL_UNVERIFIED"}
    reply: {tool_calls: [{name: Bash, input: {command: "forge gate run unit-tests"}}]}
  - name: model reports the stale gate
    when: {last_tool_result_contains: "unit-tests  stale"}
    reply: {text: "I changed the parser."}
  - name: model reports the run
    when: {last_tool_result_contains: "[2/2] docs: passed"}
    reply: {text: "Gates ran."}
  - name: model tries to call it verified
    when: {conversation_contains: "Stop hook additional context: FORGE_GATES_NOT_FRESH"}
    times: 1
    reply: {tool_calls: [{name: Bash, input: {command: "forge goal verify-gates"}}]}
  - name: model edits a file in one gate's boundary
    when: {conversation_contains: "GOAL-NOT-MET"}
    times: 1
    reply:
      tool_calls:
        - {name: Bash, input: {command: "echo 'parse = 2' >> src/parser.py && forge gate status"}}
  - name: model runs the gates
    times: 1
    reply: {tool_calls: [{name: Bash, input: {command: "forge gate run"}}]}
  - name: model works
    reply: {text: "Working on it."}
"""


def _results(session) -> list[str]:
    """The text of every tool result the model received, in order."""
    found = []
    for entry in session.transcript():
        content = (entry.get("message") or {}).get("content")
        if entry.get("type") == "user" and isinstance(content, list):
            for block in content:
                if block.get("type") == "tool_result":
                    inner = block.get("content")
                    found.append(inner if isinstance(inner, str) else json.dumps(inner))
    return found


def test_a_goal_hears_of_the_one_stale_gate_and_cannot_be_verified_until_it_reruns(
        claude_host, project):
    (project / "src").mkdir()
    (project / "src/parser.py").write_text("parse = 1\n")
    (project / "docs").mkdir()
    (project / "docs/index.md").write_text("# parser\n")
    (project / ".forge").mkdir()
    (project / ".forge/gates.yaml").write_text(GATES)
    host = claude_host(SCRIPT)
    session = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=90,
                       args=["--permission-mode", "acceptEdits", "--allowedTools", "Bash"])

    rules = [r["rule"] for r in session.requests if not r["rule"].startswith("evaluator")]
    assert rules == ["model runs the gates", "model reports the run",
                     "model edits a file in one gate's boundary", "model reports the stale gate",
                     "model tries to call it verified", "model re-runs the stale gate",
                     "model verifies again", "model reports verified"], rules
    results = _results(session)
    status = next(text for text in results if "unit-tests  stale" in text)
    assert "docs        fresh" in status
    assert "Next: forge gate run unit-tests\n" in status + "\n"
    refused = next(text for text in results if "FORGE_GOAL_UNVERIFIED" in text)
    assert "unit-tests stale" in refused and "Fix: forge gate run unit-tests" in refused
    assert "Exit code 2" in refused

    # the Stop after the edit told the model, and only then
    replies = [hook.reply for hook in session.hooks_for("Stop")]
    assert replies[0] is None  # every gate fresh after the first turn: nothing to say
    told = replies[1]["hookSpecificOutput"]["additionalContext"]
    assert "unit-tests stale" in told and "docs" not in told
    assert told.endswith("Next: forge gate run unit-tests\n  only these gates' receipts are "
                         "out of date")
    marker = "Stop hook additional context: FORGE_GATES_NOT_FRESH"
    working = [r for r in session.requests if not r["rule"].startswith("evaluator")]
    first_told = next(r for r in working if marker in json.dumps(r["body"]))
    assert first_told["rule"] == "model tries to call it verified"  # the very next request
    assert "unit-tests stale" in json.dumps(first_told["body"])

    # the host judged the goal met after the gate ran again: forge recorded it verified
    forge = find_project(project)
    goal = state.read(forge.state_path).goal
    assert goal["status"] == "complete", session.result
    record = read_record(forge, goal["nonce"])
    assert record["met"]["verified"] is True and record["verified_at"]
    assert all(hook.exit_code == 0 for hook in session.hooks)
