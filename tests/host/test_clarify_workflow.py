"""workflows/clarify.md, step by step, against the real Claude Code binary.

The session enters the clarifier's mode through its own Bash tool with no `--session` (the
host gives Bash the session id as `$CLAUDE_CODE_SESSION_ID`), cannot write the brief, and is
told the way out; the person then lifts the mode with the command `forge mode status` names.
"""

from __future__ import annotations

import os
import subprocess
import sys

import pytest

from forge_runtime import hints
from forge_runtime.hint_audit import output_problems

pytestmark = pytest.mark.host

CLARIFY = """
rules:
  - name: clarifier shows the brief instead
    when: {last_tool_result_is_error: true}
    reply: {text: "Writing was refused; here is the brief for you to accept."}
  - name: clarifier tries to write the brief
    when: {last_tool_result_contains: "clarifier mode"}
    reply:
      tool_calls: [{name: Write, input: {file_path: "{cwd}/brief.md", content: "## Goal\\n"}}]
  - name: session enters the clarifier mode
    reply:
      tool_calls:
        - {name: Bash, input: {command: "forge mode enter clarifier", description: "clarify"}}
"""


def _person(project, *words: str) -> subprocess.CompletedProcess:
    """`forge ...` typed by a person in a terminal in the project (no session id around)."""
    env = {k: v for k, v in os.environ.items() if k != "CLAUDE_CODE_SESSION_ID"}
    return subprocess.run([sys.executable, "-m", "forge_runtime", *words], cwd=project,
                          env={**env, "NO_COLOR": "1"}, capture_output=True, text=True,
                          timeout=60)


def test_the_clarify_flow_as_the_workflow_tells_it(claude_host, project):
    host = claude_host(CLARIFY)
    session = host.run("clarify: what should the parser accept?", cwd=project,
                       args=["--permission-mode", "acceptEdits", "--allowedTools", "Bash,Write"])

    assert session.terminal_reason == "completed", session.result
    assert "clarifier shows the brief instead" in [r["rule"] for r in session.requests]
    assert not (project / "brief.md").exists()
    (write,) = [call for call in session.hooks_for("PreToolUse")
                if call.stdin["tool_name"] == "Write"]
    reason = write.reply["hookSpecificOutput"]["permissionDecisionReason"]
    assert "the clarifier role may not use Write" in reason
    assert hints.split_rendered(reason)[1].next_action == \
        f"forge mode exit --session {session.session_id}"

    status = _person(project, "mode", "status")
    assert f"{session.session_id}: clarifier" in status.stdout
    assert output_problems(status.stdout) == []
    exit_command = hints.split_rendered(status.stdout)[1].next_action.split()
    assert exit_command == ["forge", "mode", "exit", "--session", session.session_id]
    assert _person(project, *exit_command[1:]).returncode == 0
    assert "no session is in a mode" in _person(project, "mode", "status").stdout
