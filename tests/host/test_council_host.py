"""A council on the real host: `forge council` runs eleven claude-agent-sdk sessions against
the scripted model; the advisors' write attempts are denied by forge's guard, and the
chairman's verdict and minority report land in `.forge/councils/`. During a goal, a question
a gate run settles is refused with that gate as `Next:`."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from subagent_support import run_widened

from forge_runtime.hostkit.runner import API_KEY, PASSED_THROUGH_ENV, QUIET_ENV

pytestmark = pytest.mark.host

QUESTION = "Should the parser be table-driven or recursive descent?"
COUNCIL = """
rules:
  - name: peer review
    when: {last_user_text_contains: "Peer review:"}
    reply: {text: "B strongest, then A, E, D, C: B names the real cost."}
  - name: chairman
    when: {system_contains: "chairman of a forge council"}
    reply:
      text: |
        Verdict: recursive descent, kept in one module.
        Reasons: the simplicity and maintainer opinions carried it; reviews ranked them first.
        Minority report: the scale advisor holds that a table wins past 200 rules.
  - name: simplicity advisor tries to write
    when: {system_contains: "simplicity advisor", conversation_lacks: "forge guard"}
    times: 1
    reply: {tool_calls: [{name: Write, input: {file_path: "{cwd}/hacked.txt", content: "x"}}]}
  - name: contrarian advisor tries the shell
    when: {system_contains: "contrarian advisor", conversation_lacks: "forge guard"}
    times: 1
    reply: {tool_calls: [{name: Bash, input: {command: "touch {cwd}/shell-hacked.txt"}}]}
  - name: scale advisor
    when: {system_contains: "scale advisor"}
    reply: {text: "Recommendation: a table. Because: it grows past 200 rules."}
  - name: advisor answers
    reply: {text: "Recommendation: recursive descent. Because: it reads like the grammar."}
"""


def _council(host, project, *words: str) -> subprocess.CompletedProcess:
    """`forge council` as a person's terminal runs it, its SDK sessions aimed at the host
    kit's model server (loopback only)."""
    env = {name: os.environ[name] for name in PASSED_THROUGH_ENV if name in os.environ}
    env.update(QUIET_ENV)
    env.update(HOME=str(host.home), TMPDIR=str(host.tmpdir), CLAUDE_CODE_TMPDIR=str(host.tmpdir),
               ANTHROPIC_BASE_URL=host.server.url, ANTHROPIC_API_KEY=API_KEY,
               CLAUDE_PROJECT_DIR=str(project), NO_COLOR="1")
    host.server.variables["cwd"] = str(project)
    return subprocess.run([sys.executable, "-m", "forge_runtime", "council", *words],
                          cwd=project, env=env, capture_output=True, text=True, timeout=240)


def test_a_council_of_read_only_advisors_records_a_verdict_and_a_minority_report(
        claude_host, project):
    host = claude_host(COUNCIL, plugin_dirs=[])
    done = _council(host, project, QUESTION, "--for", "PRD-001", "--json")
    assert done.returncode == 0, done.stdout + done.stderr
    council = json.loads(done.stdout)["council"]

    # the advisors' writes were denied by the guard, and nothing was written
    assert not (project / "hacked.txt").exists()
    assert not (project / "shell-hacked.txt").exists()
    denials = [json.dumps(r["body"]["messages"][-1]) for r in host.server.requests
               if r["rule"] in ("advisor answers", "scale advisor")
               and "forge guard" in json.dumps(r["body"]["messages"][-1])]
    assert any("the advisor-simplicity role may not use Write" in text for text in denials)
    assert any("the advisor-contrarian role may not use Bash" in text for text in denials)

    # five opinions, five anonymous reviews, one verdict
    rules = [r["rule"] for r in host.server.requests]
    assert rules.count("peer review") == 5 and rules.count("chairman") == 1
    review_prompts = [r for r in host.server.requests if r["rule"] == "peer review"]
    shown = json.dumps(review_prompts[0]["body"]["messages"])
    assert "Opinion A" in shown and "Opinion E" in shown and "scale advisor" not in shown

    text = (project / council["record"]).read_text()
    assert council["record"] == ".forge/councils/COUNCIL-001.md"
    assert "## Verdict\n\nrecursive descent, kept in one module." in text
    assert "## Minority report\n\nthe scale advisor holds that a table wins past 200 rules." \
        in text
    assert "for: PRD-001" in text and "convened_by: agent" in text
    cost = council["cost"]
    assert cost["sessions"] == 11 and cost["turns"] >= 13  # two advisors took a second turn
    assert cost["output_tokens"] and cost["input_tokens"]
    assert council["charged"] == 0 and council["goal"] is None  # no goal ran


GATES = """\
gates:
  unit-tests:
    command: echo unit tests ran
    boundary: ["src/**"]
"""
DURING_A_GOAL = """
rules:
  - name: evaluator says met
    when: {goal_evaluator: true, conversation_contains: "A gate run settles it."}
    reply: {verdict: {ok: true, reason: "the model ran the check"}}
  - name: evaluator says not yet
    when: {goal_evaluator: true}
    reply: {verdict: {ok: false, reason: "GOAL-NOT-MET: keep working"}}
  - name: model accepts the refusal
    when: {last_tool_result_contains: "FORGE_COUNCIL_CHECK_FIRST"}
    reply: {text: "A gate run settles it."}
  - name: model reports the run
    when: {last_tool_result_contains: "unit tests ran"}
    reply: {text: "Gates ran."}
  - name: model asks a council what a gate answers
    when: {conversation_contains: "GOAL-NOT-MET"}
    times: 1
    reply:
      tool_calls:
        - name: Bash
          input:
            command: >-
              echo 'x = 2' >> src/app.py &&
              forge council 'Do the unit tests still pass after my change?'
  - name: model runs the gates
    times: 1
    reply: {tool_calls: [{name: Bash, input: {command: "forge gate run"}}]}
  - name: model works
    reply: {text: "Working on it."}
"""


def test_during_a_goal_a_question_a_gate_settles_is_refused_with_that_gate(claude_host,
                                                                            project):
    (project / "src").mkdir()
    (project / "src/app.py").write_text("x = 1\n")
    (project / ".forge").mkdir(exist_ok=True)
    (project / ".forge/gates.yaml").write_text(GATES)
    host = claude_host(DURING_A_GOAL)
    session = host.run("/goal the unit tests pass", cwd=project, timeout=60,
                       args=["--permission-mode", "acceptEdits", "--allowedTools", "Bash"])
    refused = [r for r in session.requests if r["rule"] == "model accepts the refusal"]
    assert refused, [r["rule"] for r in session.requests]
    result = json.dumps(refused[0]["body"]["messages"][-1])
    assert "Error: FORGE_COUNCIL_CHECK_FIRST: a cheap check settles this question" in result
    assert "unit-tests stale" in result
    assert "Fix: forge gate run unit-tests" in result
    assert not (project / ".forge/councils").exists()
    assert "The decision before the council" not in json.dumps(session.requests)


WIDENED = "WIDENED-ADVISOR: write whatever you like."


def test_a_council_subagent_widened_with_write_tools_is_still_read_only(claude_host, project):
    session = run_widened(claude_host, project, "forge:advisor-contrarian", WIDENED, QUESTION,
                          "advise", tools=["Read", "Write", "Bash"],
                          written="advice.md", ran="advice-ran.txt")
    assert session.terminal_reason == "completed", session.stderr
    denied = {call.stdin["tool_name"]: call.reply["hookSpecificOutput"]
              for call in session.hooks_for("PreToolUse")
              if call.stdin.get("agent_type") == "forge:advisor-contrarian" and call.reply}
    for tool in ("Write", "Bash"):
        assert denied[tool]["permissionDecision"] == "deny"
        assert f"the advisor-contrarian role may not use {tool}" in \
            denied[tool]["permissionDecisionReason"]
    assert not (project / "advice.md").exists() and not (project / "advice-ran.txt").exists()


BROKEN_SHAPE = """
rules:
  - name: peer review ignores the letters
    when: {last_user_text_contains: "Peer review:"}
    reply: {text: "```\\nno ranking at all \\u0007\\n```"}
  - name: chairman answers in prose
    when: {system_contains: "chairman of a forge council"}
    times: 1
    reply: {text: "I would store the rows in SQLite; CSV files grow without an index."}
  - name: chairman answers in shape
    when: {system_contains: "chairman of a forge council"}
    reply:
      text: "Verdict: SQLite.\\nReasons: indexed rows.\\nMinority report: CSV diffs better."
  - name: advisors answer in no shape
    reply: {text: "## Вердикт\\nSQLite, конечно.\\n\\u001b[31m**Verdict** twice Verdict:"}
"""
# The scale advisor's requests fail with an API error (the host retries it, then its
# session ends with "API Error: 400"); the same model otherwise.
SCALE_FAILS = BROKEN_SHAPE.replace("rules:\n", """rules:
  - name: the scale advisor's session fails
    when: {system_contains: "scale advisor"}
    reply: {error: {status: 400, message: "invalid_request_error: not retryable"}}
""", 1)


def test_a_council_whose_model_breaks_the_shape_at_every_step_is_recorded_and_resumed(
        claude_host, project):
    """Advisors answer without their shape, one advisor's session fails with an API error,
    the reviews ignore the letters and the chairman answers in prose: forge keeps every
    answer given, records what is missing, and `--resume` asks only the missing seats until
    the council is whole."""
    failing = claude_host(SCALE_FAILS, plugin_dirs=[])
    first = _council(failing, project, "Should the importer store rows in SQLite or CSV?",
                     "--person")
    assert first.returncode == 2 and "Traceback" not in first.stderr + first.stdout
    assert "Next: forge council --resume COUNCIL-001" in first.stdout
    record = (project / ".forge/councils/COUNCIL-001.md").read_text()
    assert "status: incomplete" in record and "the scale advisor's opinion (" in record
    assert "API Error: 400" in record
    assert record.count("SQLite, конечно.") == 4  # the four opinions given, as said
    assert not any(r["rule"] in ("peer review ignores the letters", "chairman answers in prose")
                   for r in failing.server.requests)

    host = claude_host(BROKEN_SHAPE, plugin_dirs=[])
    resumed = _council(host, project, "--resume", "COUNCIL-001", "--person")
    assert resumed.returncode == 2, resumed.stdout + resumed.stderr
    assert "FORGE_COUNCIL_NO_VERDICT" in resumed.stdout
    rules = [r["rule"] for r in host.server.requests]
    assert rules.count("advisors answer in no shape") == 1  # only the scale advisor again
    assert rules.count("peer review ignores the letters") == 5
    assert rules.count("chairman answers in prose") == 1
    record = (project / ".forge/councils/COUNCIL-001.md").read_text()
    assert "status: unshaped" in record and "resumed: 1" in record
    assert "I would store the rows in SQLite; CSV files grow without an index." in record
    assert "no ranking at all" in record

    before = len(host.server.requests)
    whole = _council(host, project, "--resume", "COUNCIL-001", "--person", "--json")
    assert whole.returncode == 0, whole.stdout + whole.stderr
    council = json.loads(whole.stdout)["council"]
    assert council["status"] == "complete" and council["verdict"] == "SQLite."
    assert [r["rule"] for r in host.server.requests[before:]] == ["chairman answers in shape"]
    assert council["resumed"] == 2 and council["cost"]["sessions"] == 5 + 7 + 1
