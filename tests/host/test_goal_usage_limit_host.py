"""On the real Claude Code: no silent resume after a usage limit.

A subscription login (the host kit's pretend OAuth login) in the interactive TUI, where
Claude Code 2.1.332 continues a goal by itself once its usage limit resets (measured: not
in `-p`, not on an API key). The goal's first turn works; in its second the model server
answers the host's usage-limit refusal (a 429 whose unified limiter says `rejected`, the
window resetting seconds later). The host ends the turn with its synthetic usage-limit
entry and StopFailure (no Stop), waits past the reset (60-120 s measured) and then sends
its own continuation prompt ("Your claude.ai usage limit has reset...", `isMeta`,
`origin.kind: "auto-continuation"`).

- By default forge ends autonomy at the limit: the StopFailure hook charges the turn with
  the usage-limit mark (the goal exhausted, ceiling `usage_limit`) and holds the next
  prompt, so the continuation is blocked before it reaches the model, with
  FORGE_GOAL_USAGE_LIMIT, the checkpoint and `Next: /goal <objective>`; the host says the
  automatic continue did not run and does not retry; no model request follows the limit.
  (Should that prompt get through, its tool calls are denied and its Stop ends the
  session: tests/test_goal_usage_limit.py; measured here before the hold existed.)
- With `goal: {after_usage_limit: continue}` the continuation runs and is charged.

Both sessions wait on the host's clock at once, started early (tests/host/conftest.py).
"""

from __future__ import annotations

import json
import shutil
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
from goal_support import opt_out_of_sandbox
from tui_support import Tui

from forge_runtime import resources
from forge_runtime.goal.store import state_file
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.hostkit.projects import init_git_project
from forge_runtime.hostkit.pytest_plugin import as_script
from forge_runtime.hostkit.runner import Host
from forge_runtime.project import find_project

pytestmark = [pytest.mark.host,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

OBJECTIVE = "the file resumed.txt exists"
SCRIPT = """
name: a goal that meets the plan's usage limit in its second turn
rules:
  - name: evaluator says met
    # the command's output, not its text: a denied call shows the text too
    when: {goal_evaluator: true, conversation_contains: "RESUMED-42"}
    reply: {verdict: {ok: true, reason: "resumed.txt exists"}}
  - name: evaluator says not yet
    when: {goal_evaluator: true}
    reply: {verdict: {ok: false, reason: "GOAL-NOT-MET: keep working"}}
  - name: denied
    when: {last_tool_result_contains: "FORGE_GOAL_USAGE_LIMIT"}
    reply: {text: "Denied, so I stop."}
  - name: continued
    # the host sends it beside the refused request's tool result, in one user message
    when: {last_user_text_contains: "usage limit has reset"}
    reply:
      tool_calls:
        - {name: Bash, input: {command: "touch {cwd}/resumed.txt; echo RESUMED-$((40+2))"}}
  - name: usage limit
    times: 1
    when: {last_is_tool_result: true, conversation_contains: "First step done."}
    reply: {error: {status: 429, usage_limit: {window: five_hour, resets_in: 5}}}
  - name: after a tool
    when: {last_is_tool_result: true}
    reply: {text: "First step done."}
  - name: model works
    reply:
      tool_calls: [{name: Bash, input: {command: "touch {cwd}/step.txt"}}]
"""
WAIT_S = 420  # the host's own wait past the reset, on a loaded machine


def _session(workdir: Path, after: str | None) -> dict:
    project = init_git_project(workdir / "project")
    opt_out_of_sandbox(project)
    if after:
        (project / ".forge" / "guard.yaml").write_text(
            f"goal: {{require_sandbox: false, after_usage_limit: {after}}}\n")
    with Host(workdir / "host", as_script(SCRIPT), login="subscription",
              plugin_dirs=[resources.host_plugin_dir(workdir)]) as host:
        tui = Tui(host, project, workdir / "tui", ["--allowedTools", "Bash"])
        try:
            tui.wait_for(lambda: "❯" in tui.screen(), "the TUI prompt", timeout=60)
            tui.type(f"/goal {OBJECTIVE}")
            started = time.monotonic()
            tui.wait_for(lambda: any(json.loads(call["stdin"]).get("prompt", "").startswith(
                "Your claude.ai usage limit has reset") for call in
                tui.hooks("UserPromptSubmit")), "the host's own continuation", WAIT_S)
            waited = time.monotonic() - started
            # its prompt blocked, or its turn run to its Stop (ended by forge, or met)
            tui.wait_for(lambda: (project / "resumed.txt").exists() or any(
                '"decision":"block"' in call["stdout"].replace(" ", "")
                for call in tui.hooks("UserPromptSubmit")) or any(
                '"continue":false' in call["stdout"].replace(" ", "")
                for call in tui.hooks("Stop")), "the continuation's turn", 60)
            time.sleep(8)  # its last hooks, the transcript's last writes, any retry
            screen = tui.screen()
        finally:
            tui.close()
        rules = [request["rule"] for request in host.server.requests]
    calls = {event: [{"stdin": json.loads(call["stdin"]), "stdout": call["stdout"]}
                     for call in tui.hooks(event)]
             for event in ("UserPromptSubmit", "PreToolUse", "Stop", "StopFailure")}
    forge = find_project(project)
    nonce = state_file.read(forge.state_path).goal["nonce"]
    return {"calls": calls, "rules": rules, "screen": screen, "waited": waited,
            "history": Ledger(forge.ledger_root, nonce).history(),
            "resumed": (project / "resumed.txt").exists(),
            "step": (project / "step.txt").exists()}


def start_early(workdir: Path) -> dict:
    """Both sessions at once; each one's failure is its own test's (`_run`)."""
    with ThreadPoolExecutor(max_workers=2) as pool:
        runs = {name: pool.submit(_session, workdir / name, after)
                for name, after in (("stop", None), ("continue", "continue"))}
    return {name: (run.exception() or run.result()) for name, run in runs.items()}


def _run(started_early: dict, name: str) -> dict:
    run = started_early[name]
    if isinstance(run, BaseException):
        raise run
    return run


def _deny_reasons(calls: list[dict]) -> list[str]:
    return [json.loads(call["stdout"])["hookSpecificOutput"]["permissionDecisionReason"]
            for call in calls if call["stdout"].strip()]


def test_the_hosts_continuation_after_a_usage_limit_is_refused(started_early):
    run = _run(started_early, "stop")
    calls, history = run["calls"], run["history"]
    assert run["step"] and "usage limit" in run["rules"], run["rules"]
    # the host ran StopFailure for the limit, never a Stop, and forge charged the turn there
    (failure,) = calls["StopFailure"]
    assert failure["stdin"]["error"] == "rate_limit" and failure["stdout"] == ""
    limited = [record for record in history if record.get("usage_limit")]
    assert [record["kind"] for record in limited] == ["charge"]
    assert history[-1]["kind"] == "exhaust" and history[-1]["ceiling"] == "usage_limit"
    assert history[-1]["goal"]["turn_count"] == 2

    prompts = [call["stdin"]["prompt"] for call in calls["UserPromptSubmit"]]
    assert len(prompts) == 2 and prompts[0] == f"/goal {OBJECTIVE}"
    assert prompts[1].startswith("Your claude.ai usage limit has reset")
    reply = json.loads(calls["UserPromptSubmit"][1]["stdout"])
    assert reply["decision"] == "block"
    lines = reply["reason"].splitlines()
    assert lines[0].startswith("FORGE_GOAL_USAGE_LIMIT: goal ")
    assert lines[1].startswith("Checkpoint: ") and f"Next: /goal {OBJECTIVE}" in lines
    # nothing reached the model after the limit, and the host did not try again
    assert run["rules"][-1] == "usage limit" and not run["resumed"], run["rules"]
    assert "Automatic continue did not run" in run["screen"]
    assert _deny_reasons(calls["PreToolUse"]) == []


def test_after_usage_limit_continue_lets_the_host_continue_charged(started_early):
    run = _run(started_early, "continue")
    history = run["history"]
    assert run["resumed"] and _deny_reasons(run["calls"]["PreToolUse"]) == []
    limited = next(record for record in history if record.get("usage_limit"))
    assert limited["kind"] == "charge" and limited["goal"]["status"] == "active"
    charges = [record for record in history if record["kind"] == "charge"]
    assert len(charges) >= 3 and charges[-1]["seq"] > limited["seq"]  # the continuation's
    assert not [record for record in history if record["kind"] in ("exhaust", "overrun")]
    assert "FORGE_GOAL" not in "".join(call["stdout"] for call in run["calls"]["Stop"])
