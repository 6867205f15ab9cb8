"""The host kit against the real Claude Code binary: plugins load, hooks fire, replies count."""

from __future__ import annotations

import json
import shutil
import sys
import uuid
from pathlib import Path

import pytest
from session_support import NEVER_MET

from forge_runtime.hostkit import netns
from forge_runtime.hostkit.projects import write_plugin

pytestmark = pytest.mark.host

WRITE_THEN_FINISH = """
name: run one shell command, then finish
rules:
  - name: finish once the tool answered
    when: {last_is_tool_result: true}
    reply: {text: "Finished."}
  - name: first turn runs a command
    reply:
      tool_calls:
        - name: Bash
          input: {command: "echo hello > {cwd}/hello.txt", description: "write hello.txt"}
"""


def test_forge_plugin_loads_cleanly_and_every_hook_sees_the_real_stdin(claude_host, project):
    host = claude_host(WRITE_THEN_FINISH)
    session = host.run("write hello.txt", cwd=project, args=["--allowedTools", "Bash"])

    assert session.exit_code == 0, session.stderr
    assert session.terminal_reason == "completed"
    assert session.plugin_errors() == []
    assert "forge@inline" in [plugin["source"] for plugin in session.init["plugins"]]
    assert (project / "hello.txt").read_text() == "hello\n"
    fired = [hook.event for hook in session.hooks]
    assert fired == ["SessionStart", "UserPromptSubmit", "PreToolUse", "Stop", "SessionEnd"]
    for hook in session.hooks:
        assert hook.stdin["hook_event_name"] == hook.event
        assert hook.stdin["session_id"] == session.session_id
        assert hook.stdin["cwd"] == str(project)
        assert hook.exit_code == 0
    assert session.hooks_for("UserPromptSubmit")[0].stdin["prompt"] == "write hello.txt"
    pre_tool = session.hooks_for("PreToolUse")[0].stdin
    assert pre_tool["tool_name"] == "Bash"
    assert pre_tool["tool_input"]["command"] == f"echo hello > {project}/hello.txt"
    assert [r["rule"] for r in session.requests] == [
        "first turn runs a command", "finish once the tool answered"]


def _hook(code: str) -> dict:
    """An exec-form hook running `code` with this test's Python."""
    return {"type": "command", "command": sys.executable, "args": ["-c", code]}


DENY_BASH = _hook(
    "import json; print(json.dumps({'hookSpecificOutput': {'hookEventName': 'PreToolUse',"
    " 'permissionDecision': 'deny', 'permissionDecisionReason': 'DENIED-BY-TEST'}}))")


def test_a_pretooluse_deny_really_blocks_the_tool(claude_host, project, tmp_path):
    plugin = write_plugin(tmp_path / "denier", "denier",
                          {"PreToolUse": [{"matcher": "Bash", "hooks": [DENY_BASH]}]})
    host = claude_host("""
        rules:
          - name: model reads the refusal
            when: {last_tool_result_is_error: true, last_tool_result_contains: DENIED-BY-TEST}
            reply: {text: "The shell was refused."}
          - name: model tries the shell
            when: {last_is_tool_result: false}
            reply:
              tool_calls: [{name: Bash, input: {command: "touch {cwd}/ran.txt"}}]
        """, plugin_dirs=[plugin])
    session = host.run("touch ran.txt", cwd=project, args=["--permission-mode", "acceptEdits",
                                                          "--allowedTools", "Bash"])

    assert session.terminal_reason == "completed", session.stderr
    assert not (project / "ran.txt").exists()
    assert [r["rule"] for r in session.requests] == ["model tries the shell",
                                                     "model reads the refusal"]
    assert session.result["result"] == "The shell was refused."
    assert session.plugin_errors() == []


def test_stop_continue_false_ends_a_native_goal_session(claude_host, project, tmp_path):
    stopper = _hook("import json; print(json.dumps({'continue': False,"
                    " 'stopReason': 'STOPPED-BY-TEST'}))")
    plugin = write_plugin(tmp_path / "stopper", "stopper", {"Stop": [{"hooks": [stopper]}]})
    host = claude_host(NEVER_MET, plugin_dirs=[plugin])
    session = host.run("/goal the file never.txt exists", cwd=project, timeout=30)

    assert session.terminal_reason == "stop_hook_prevented", session.result
    assert not session.timed_out
    turns = [r for r in session.requests if r["rule"] == "model works"]
    assert len(turns) == 1
    goal_set = [e for e in session.transcript() if "Goal set:" in json.dumps(e)]
    assert goal_set, "the host never recorded the native goal"


def test_a_scripted_529_is_retried_by_the_host(claude_host, project):
    host = claude_host("""
        rules:
          - name: overloaded once
            times: 1
            reply: {error: {status: 529, retry_after: 0}}
          - name: answer
            reply: {text: "Answered after a retry."}
        """)
    session = host.run("hello", cwd=project)

    assert session.terminal_reason == "completed", session.stderr
    assert [r["rule"] for r in session.requests] == ["overloaded once", "answer"]
    assert session.result["result"] == "Answered after a retry."


def _processes_named(marker: str) -> list[int]:
    """Pids whose command line holds `marker`."""
    found = []
    for entry in Path("/proc").iterdir():
        try:
            if entry.name.isdigit() and marker.encode() in (entry / "cmdline").read_bytes():
                found.append(int(entry.name))
        except OSError:
            continue
    return found


@pytest.mark.parametrize("isolate_network", [True, False], ids=["namespaced", "plain"])
def test_a_hung_session_is_killed_at_the_timeout_with_everything_it_started(
        claude_host, project, isolate_network):
    marker = f"hostkit-hang-{uuid.uuid4().hex}"
    host = claude_host({"rules": [{"reply": {"tool_calls": [{"name": "Bash", "input": {
        "command": f"echo started > {{cwd}}/started.txt; exec -a {marker} sleep 300"}}]}}]},
        isolate_network=isolate_network)
    session = host.run("hang", cwd=project, args=["--allowedTools", "Bash"], timeout=8)

    assert session.timed_out
    assert session.exit_code is None
    assert (project / "started.txt").exists(), "the hanging tool never started"
    assert _processes_named(marker) == []


def test_a_namespaced_session_has_only_loopback(claude_host, project):
    available, reason = netns.available()
    if not available:
        pytest.skip(f"this machine cannot isolate sessions: {reason}")
    host = claude_host("""
        rules:
          - when: {last_is_tool_result: true}
            reply: {text: "Listed."}
          - reply:
              tool_calls: [{name: Bash, input: {command: "ip -o link show > {cwd}/links.txt"}}]
        """)
    session = host.run("list the network links", cwd=project, args=["--allowedTools", "Bash"])

    assert session.terminal_reason == "completed", session.stderr
    links = (project / "links.txt").read_text().splitlines()
    assert [line.split(":")[1].strip() for line in links] == ["lo"]
    assert session.isolation.startswith("loopback-only")


def test_plugin_errors_names_a_plugin_the_host_could_not_load(claude_host, project, tmp_path):
    broken = write_plugin(tmp_path / "broken", "broken", {})
    (broken / "hooks" / "hooks.json").write_text("{not json")
    missing = write_plugin(tmp_path / "missing", "missing", {"Stop": [{"hooks": [
        {"type": "command", "command": str(tmp_path / "no-such-hook"), "args": []}]}]})
    host = claude_host({"rules": [{"reply": {"text": "hi"}}]}, plugin_dirs=[broken, missing])
    session = host.run("hi", cwd=project)

    assert session.terminal_reason == "completed"
    errors = "\n".join(session.plugin_errors())
    assert "Failed to load hooks for broken" in errors
    assert "no-such-hook" in errors
    stop = [e for e in session.hook_events if e["hook_event"] == "Stop"]
    assert [(e["outcome"], e["exit_code"]) for e in stop] == [("error", 1)]


def test_a_resumed_session_continues_the_same_conversation(claude_host, project):
    host = claude_host({"rules": [{"reply": {"text": "Noted."}}]})
    first = host.run("remember FIRST-PROMPT", cwd=project)
    again = host.run("and now SECOND-PROMPT", cwd=project, resume=first.session_id)

    assert again.terminal_reason == "completed", again.stderr
    assert again.session_id == first.session_id
    assert again.hooks_for("SessionStart")[0].stdin["source"] == "resume"
    conversation = json.dumps(again.requests[0]["body"]["messages"])
    assert "FIRST-PROMPT" in conversation and "SECOND-PROMPT" in conversation
    assert [r["n"] for r in again.requests] == [2]


PLAN_WINDOWS = """
rules:
  - reply: {text: "Done.", plan_usage: {five_hour: 62, seven_day: 30}}
"""


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
@pytest.mark.parametrize("login", ["api_key", "subscription", "oauth_token"])
def test_claude_code_hands_its_status_line_the_plan_windows_on_a_subscription_login(
        claude_host, project, tui_factory, tmp_path, login):
    """Measured on 2.1.332: the windows of the answers' rate-limit headers reach the status
    line (the only place that sees them) on an OAuth login, never with an API key."""
    host = claude_host(PLAN_WINDOWS, plugin_dirs=[], login=login)
    inputs = tmp_path / "inputs.jsonl"
    (project / ".claude").mkdir(exist_ok=True)
    (project / ".claude" / "settings.local.json").write_text(json.dumps({"statusLine": {
        "type": "command", "command": f"{sys.executable} -c \"import sys; open('{inputs}', "
        "'a').write(sys.stdin.read().replace(chr(10), ' ') + chr(10))\""}}))
    tui = tui_factory(host, project)
    tui.wait_for(lambda: "❯" in tui.screen() and inputs.exists(), "the TUI and its status line")
    tui.type("hello")

    def answered() -> list[dict]:
        seen = [json.loads(line) for line in inputs.read_text().splitlines()]
        return [entry for entry in seen if entry["cost"]["total_api_duration_ms"] > 0]

    after = tui.wait_for(answered, "the status line after the answer")[-1]
    if login == "api_key":
        assert "rate_limits" not in after
    else:
        limits = after["rate_limits"]
        assert limits["five_hour"]["used_percentage"] == 62
        assert limits["seven_day"]["used_percentage"] == 30
        assert limits["five_hour"]["resets_at"] == host.server.plan_resets["five_hour"]
    assert "rate_limits_available" not in after and "subscription_type" not in after
    request = host.server.requests[-1]["headers"]
    assert ("authorization" in request) == (login != "api_key")
