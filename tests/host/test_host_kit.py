"""The host kit against the real Claude Code binary: plugins load, hooks fire, replies count."""

from __future__ import annotations

import pytest

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
    assert "Loaded inline plugin from path: forge" in session.debug_log
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
