"""The host's own off switches against the real Claude Code binary, in every permission mode.

In bypassPermissions the host asks nothing before a tool writes its settings files (measured:
the Write tool writes `.claude/settings.local.json` at once), and in no mode does it see
`claude plugin disable` run by Bash, so without the sandbox forge's guard is the only layer:
it must refuse the edit that disables forge and the host CLI's `plugin disable`, and let an
ordinary permissions edit through (bypassPermissions applies it; in acceptEdits the host
asks about its settings files itself, which a `-p` session answers with no).
"""

from __future__ import annotations

import json

import pytest
from test_guard_host import assert_denied_by_forge, tool_results

from forge_runtime.protected import paths

pytestmark = pytest.mark.host

SWITCHES_SCRIPT = """
rules:
  - name: the model reads the results
    when: {last_is_tool_result: true}
    reply: {text: "SWITCHES-DONE"}
  - name: switch forge off twice, then edit the permissions
    reply:
      tool_calls:
        - {name: Write, input: {file_path: "{cwd}/.claude/settings.local.json",
                                content: "{\\"enabledPlugins\\": {\\"forge@forge\\": false}}"}}
        - {name: Bash, input: {command: "claude plugin disable forge@forge"}}
        - {name: Edit, input: {file_path: "{cwd}/.claude/settings.json",
                               old_string: "\\"Bash(git status)\\"",
                               new_string: "\\"Bash(git status)\\", \\"Bash(npm test)\\""}}
"""


@pytest.mark.parametrize("mode", ["bypassPermissions", "acceptEdits"])
def test_forge_stays_on_and_permission_edits_work_in_every_mode(claude_host, project, mode):
    claude = project / ".claude"
    claude.mkdir()
    settings = claude / "settings.json"
    settings.write_text(json.dumps({"permissions": {"allow": ["Bash(git status)"]}}) + "\n")
    host = claude_host(SWITCHES_SCRIPT, env={"IS_SANDBOX": "1"})
    session = host.run("tidy the settings", cwd=project,
                       args=["--permission-mode", mode, "--allowedTools", "Bash,Edit,Write"])

    assert session.terminal_reason == "completed", session.stderr
    assert_denied_by_forge(session, "Write", paths.SWITCH_OFF)
    assert_denied_by_forge(session, "Bash", "runs `claude plugin disable forge@forge`")
    assert not (claude / "settings.local.json").exists()
    edits = [call for call in session.hooks_for("PreToolUse")
             if call.stdin["tool_name"] == "Edit"]
    assert len(edits) == 1 and not edits[0].stdout.strip(), "forge let the edit through"
    allowed = json.loads(settings.read_text())["permissions"]["allow"]
    if mode == "bypassPermissions":
        assert allowed == ["Bash(git status)", "Bash(npm test)"]
    else:  # measured: in acceptEdits the host asks itself, which `-p` answers with no
        assert allowed == ["Bash(git status)"]
        assert not tool_results(session)["Edit"]["text"].startswith("PreToolUse:")
