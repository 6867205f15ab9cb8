"""Done means verified, in the real host: the host's evaluator judges the goal met at once,
while its final gate fails, and forge keeps the goal going through its Stop hook.

The scripted evaluator says met to every request: only forge's gates (or its budget) can
keep the goal running after the first turn. The gate fails until src/parser.py is really
fixed. Measured here (Claude Code 2.1.332): a Stop whose reply carries model context while
the evaluator says met in parallel gets another model request; the native goal is over
after that verdict (the evaluator is never asked again), and every later Stop still reaches
forge's hook, with `stop_hook_active` true.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import time

import pytest
from goal_support import goal_in_state
from session_support import host_knows_event

from forge_runtime.gates.files import read_record
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.project import find_project

pytestmark = pytest.mark.host

OBJECTIVE = "the parser is fixed"
GATES = 'gates: {unit-tests: {command: grep -q good src/parser.py, boundary: ["src/**"]}}\n'
MET_AT_ONCE = """
  - name: evaluator says met
    when: {goal_evaluator: true}
    reply: {verdict: {ok: true, reason: "the model says the parser is fixed"}}
"""
RUNS_THE_GATE_ELSE_CLAIMS_DONE = """\
  - name: model runs the gate's Next
    when: {conversation_contains: "Next: forge gate run unit-tests"}
    times: 1
    reply: {tool_calls: [{name: Bash, input: {command: "forge gate run unit-tests"}}]}
  - name: model claims done
    reply: {text: "The parser is fixed."}
"""
FIXES_IT = "rules:" + MET_AT_ONCE + """
  - name: model reports the pass
    when: {last_tool_result_contains: "unit-tests: passed"}
    reply: {text: "Fixed: the gate passes."}
  - name: model reads the failure
    when: {last_tool_result_contains: "unit-tests: failed"}
    reply: {text: "unit-tests fails: the parser is not fixed yet."}
  - name: model fixes the work
    when: {conversation_contains: "unit-tests failing"}
    times: 1
    reply:
      tool_calls:
        - {name: Bash, input: {command: "echo good > src/parser.py && forge gate run unit-tests"}}
""" + RUNS_THE_GATE_ELSE_CLAIMS_DONE
NEVER_FIXES_IT = "rules:" + MET_AT_ONCE + """
  - name: model reads the failure
    when: {last_tool_result_contains: "unit-tests: failed"}
    reply: {text: "Still failing."}
  - name: model runs the gate
    when: {conversation_contains: "Next: forge gate run unit-tests"}
    reply: {tool_calls: [{name: Bash, input: {command: "forge gate run unit-tests"}}]}
  - name: model claims done
    reply: {text: "The parser is fixed."}
"""
ARGS = ["--permission-mode", "acceptEdits", "--allowedTools", "Bash"]


def gated_project(project):
    (project / "src").mkdir()
    (project / "src/parser.py").write_text("parse = None\n")
    (project / ".forge").mkdir(exist_ok=True)
    (project / ".forge/gates.yaml").write_text(GATES)


def _working(session) -> list[str]:
    return [r["rule"] for r in session.requests if not r["rule"].startswith("evaluator")]


def _charges(project, nonce: str) -> list[dict]:
    ledger = Ledger(find_project(project).ledger_root, nonce)
    record, found = ledger.current().record, []
    while record["seq"] > 1:
        found.append(record)
        record = ledger.previous(record)
    return [r for r in reversed(found) if r["kind"] == "charge"]


def _forge(project, *words: str) -> tuple[int, str]:
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project)}
    done = subprocess.run([sys.executable, "-m", "forge_runtime", *words], cwd=project,
                          env=env, capture_output=True, text=True, timeout=60)
    return done.returncode, done.stdout


def test_a_goal_met_at_once_goes_on_until_its_gate_passes_and_ends_verified(claude_host,
                                                                            project):
    gated_project(project)
    session = claude_host(FIXES_IT).run(f"/goal {OBJECTIVE}", cwd=project, timeout=90,
                                        args=ARGS)

    assert _working(session) == ["model claims done", "model runs the gate's Next",
                                 "model reads the failure", "model fixes the work",
                                 "model reports the pass"]
    assert [r["rule"] for r in session.requests].count("evaluator says met") == 1
    stops = session.hooks_for("Stop")
    assert [hook.stdin["stop_hook_active"] for hook in stops] == [False, True, True]
    first, failing = (hook.reply["hookSpecificOutput"]["additionalContext"] for hook in stops[:2])
    assert first.startswith("FORGE_GATES_NOT_FRESH: goal ") and "unit-tests never-run" in first
    assert first.endswith("Next: forge gate run unit-tests\n  only these gates' receipts are "
                          "out of date")
    assert "unit-tests failing" in failing
    assert stops[2].reply == {"systemMessage": stops[2].reply["systemMessage"]}
    assert stops[2].reply["systemMessage"].startswith("FORGE_GOAL_VERIFIED: goal ")
    assert session.terminal_reason == "completed", session.result

    goal = goal_in_state(project)
    assert (goal["status"], goal["turn_count"]) == ("complete", 3)  # every turn charged
    record = read_record(find_project(project), goal["nonce"])
    assert record["met"]["verified"] is True and record["verified_at"]
    assert record["met"]["receipts"]["unit-tests"]["confirmed"]["verdict"] == "passed"
    assert not any(charge.get("late") for charge in _charges(project, goal["nonce"]))
    assert "gates       verified at" in _forge(project, "goal", "status")[1]
    assert _forge(project, "goal", "verify-gates")[0] == 0
    assert all(hook.exit_code == 0 for hook in session.hooks)


def test_a_gate_that_never_passes_ends_at_the_ceiling_unverified_with_every_turn_charged(
        claude_host, project):
    gated_project(project)
    session = claude_host(NEVER_FIXES_IT).run(f"/goal {OBJECTIVE}", cwd=project, timeout=120,
                                              args=ARGS)

    assert session.terminal_reason == "stop_hook_prevented", session.result
    stops = session.hooks_for("Stop")
    assert len(stops) == 20
    assert all("hookSpecificOutput" in hook.reply for hook in stops[:19])
    last = stops[-1].reply
    assert last["continue"] is False
    lines = last["stopReason"].splitlines()
    assert "used 20 of 20 turns" in lines[0]
    assert lines[-4].startswith("FORGE_GOAL_UNVERIFIED: goal ") and "unit-tests failing" in \
        lines[-4]
    assert lines[-3:] == [f"Next: /goal {OBJECTIVE}", "  adds one more tranche of 20 turns",
                          "Or: /goal clear"]
    goal = goal_in_state(project)
    assert (goal["status"], goal["turn_count"]) == ("exhausted", 20)
    ended = [entry for entry in session.transcript() if entry.get("type") == "assistant"
             and (entry.get("message") or {}).get("stop_reason") == "end_turn"]
    assert len(ended) == 20  # as many turns as the host ran: none uncharged
    assert not any(charge.get("late") for charge in _charges(project, goal["nonce"]))

    # the stuck warning: the same gate failing the same way for five charged turns
    stuck = [index for index, hook in enumerate(stops[:19]) if "final gate unit-tests has "
             "failed the same way" in hook.reply["hookSpecificOutput"]["additionalContext"]]
    assert stuck == [5, 10, 15]
    warned = stops[5].reply["hookSpecificOutput"]["additionalContext"]
    assert "Next: forge gate run unit-tests" in warned.split("FORGE_GATES_NOT_FRESH")[1]
    marker = "failed the same way for 5 charged turns"
    bodies = [json.dumps(body) for body in session.model_requests()]
    assert any(marker in body for body in bodies)  # it reached the model
    assert all(hook.exit_code == 0 for hook in session.hooks)


NAPS_WHEN_TOLD = "rules:" + MET_AT_ONCE + """
  - name: host names the session
    when: {system_contains: "You are naming a coding session"}
    reply: {text: '{"title": "Parser"}'}
  - name: model rested
    when: {last_is_tool_result: true}
    reply: {text: "Rested."}
  - name: model naps
    when: {conversation_contains: "FORGE_GATES_NOT_FRESH"}
    reply:
      tool_calls: [{name: Bash, input: {command: "python3 -c 'import time; time.sleep(30)'"}}]
  - name: model claims done
    reply: {text: "The parser is fixed."}
"""


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_persons_esc_ends_forges_continuation_at_once(claude_host, project, tui_factory):
    """Measured: Esc during a tool fires no Stop; the goal ends at the person's next prompt
    as the host judged it, met but unverified, with nothing continued after. The turn
    forge's continuation started, which the Esc ended, is charged as a turn of its own: at
    once by the Interrupt hook where the host fires one (2.1.337), late by the person's
    prompt where it does not (2.1.332). (Claude Code refuses a standalone `sleep 30` in
    Bash at once, hence the nap in Python; and Esc while a Stop hook runs cancels that
    hook.)"""
    gated_project(project)
    host = claude_host(NAPS_WHEN_TOLD)
    fires_interrupt = host_knows_event(host, "Interrupt")
    tui = tui_factory(host, project, ["--allowedTools", "Bash"])
    tui.wait_for(lambda: "❯" in tui.screen(), "the TUI prompt")
    tui.type(f"/goal {OBJECTIVE}")
    tui.wait_for(lambda: tui.hooks("PreToolUse"), "forge's continuation after the host's met")
    time.sleep(0.5)  # the nap's Bash is running
    tui.keys("Escape")
    tui.wait_for(lambda: "Interrupted" in tui.screen(), "the interrupt")
    assert len(tui.hooks("Stop")) == 1
    if fires_interrupt:  # the host does not wait for it; a person reading the screen does
        tui.wait_for(lambda: tui.hooks("Interrupt"), "forge's Interrupt hook")

    tui.type("thanks, I will look myself")
    tui.wait_for(lambda: len(tui.hooks("Stop")) == 2, "the person's turn's Stop")
    assert tui.hooks("Stop")[-1]["stdout"] == ""  # nothing keeps the session going
    goal = goal_in_state(project)
    assert (goal["status"], goal["turn_count"]) == ("complete", 2)
    assert _charges(project, goal["nonce"])[-1].get("late", False) is not fires_interrupt
    record = read_record(find_project(project), goal["nonce"])
    assert record["met"]["verified"] is False and "verified_at" not in record
    # 2.1.337 also asks the model for a title of the session when the person's first words
    # arrive (no tools, nothing of the goal's): the host's, not a continuation
    rules = [r["rule"] for r in host.server.requests if r["rule"] != "host names the session"]
    # the last answers the person's prompt (its message ends with the interrupted tool's
    # result): the turn the person drives after the goal ended is never charged
    assert rules == ["model claims done", "evaluator says met", "model naps", "model rested"]


FORGER = """\
import glob, json, os
for path in glob.glob(os.path.join(".git", "forge" + "-goals", "gates", "*.json")):
    if path.endswith("stat-cache.json"):
        continue
    record = json.load(open(path))
    record["confirmed"]["passed"] = True
    for result in record["confirmed"]["results"].values():
        result["verdict"] = "passed"
    json.dump(record, open(path, "w"))
print("forged")
"""
FORGES_THE_RUN = "rules:" + MET_AT_ONCE + """
  - name: model is done
    when: {last_tool_result_contains: "forged"}
    reply: {text: "Done: forge's run passed."}
  - name: model reads the failure
    when: {last_tool_result_contains: "unit-tests: failed"}
    reply: {text: "unit-tests fails."}
  - name: model forges forge's own run
    when: {conversation_contains: "unit-tests failing"}
    times: 1
    reply: {tool_calls: [{name: Bash, input: {command: "python3 forger.py"}}]}
""" + RUNS_THE_GATE_ELSE_CLAIMS_DONE


def test_a_model_that_rewrites_forges_own_run_in_the_ledger_is_stopped_not_verified(
        claude_host, project):
    """Opted out of the kernel layer, a script the guard cannot read reaches the ledger's
    directory: the gates record it rewrites is not the one forge last wrote (the witness
    says), so the next Stop ends the goal's autonomy instead of calling it verified."""
    gated_project(project)
    (project / "forger.py").write_text(FORGER)  # written by the agent earlier, say
    session = claude_host(FORGES_THE_RUN).run(f"/goal {OBJECTIVE}", cwd=project, timeout=90,
                                              args=ARGS)

    assert _working(session) == ["model claims done", "model runs the gate's Next",
                                 "model reads the failure", "model forges forge's own run",
                                 "model is done"]
    assert session.terminal_reason == "stop_hook_prevented", session.result
    last = session.hooks_for("Stop")[-1].reply
    assert last["continue"] is False
    assert last["stopReason"].splitlines()[-2:][0].startswith(
        "Error: FORGE_GOAL_LEDGER_TAMPERED: goal ")
    assert last["stopReason"].splitlines()[-1] == "Fix: forge goal verify-gates"
    goal = goal_in_state(project)
    assert (goal["status"], goal["turn_count"]) == ("active", 3)  # charged, never verified
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project), "HOME": str(session.home)}
    env.pop("XDG_STATE_HOME", None)  # the witness the hooks kept, under the host's home
    done = subprocess.run([sys.executable, "-m", "forge_runtime", "goal", "status"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 2 and "FORGE_GOAL_LEDGER_TAMPERED" in done.stderr
    assert all(hook.exit_code == 0 for hook in session.hooks)
