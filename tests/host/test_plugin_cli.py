"""`forge` in the agent's Bash tool of a plugin install, against the real Claude Code binary.

The plugin ships no `bin/` (claude.ai refuses a plugin with files there), so the host puts
none of its folders on the Bash tool's PATH, and gives Bash no CLAUDE_PLUGIN_* variables:
forge's SessionStart hook puts the plugin's `cli/` first on that PATH and exports
FORGE_PYTHON through the host's CLAUDE_ENV_FILE, so that `cli/forge` runs with the Python
that has forge's dependencies.
"""

from __future__ import annotations

import json
import os
import sys

import pytest

pytestmark = pytest.mark.host

ASK_FORGE = """
rules:
  - name: done
    when: {last_is_tool_result: true}
    reply: {text: "Read forge's answer."}
  - name: run forge from Bash
    reply:
      tool_calls:
        - name: Bash
          input:
            command: 'command -v forge; echo "python=$FORGE_PYTHON"; forge goal status --json'
            description: ask forge
"""


def _tool_results(session) -> list[str]:
    """Every tool result the model was shown, once each, in order."""
    texts: list[str] = []
    for body in session.model_requests():
        for message in body["messages"]:
            if not isinstance(message["content"], list):
                continue
            for block in message["content"]:
                if block.get("type") != "tool_result":
                    continue
                content = block["content"]
                text = content if isinstance(content, str) else "".join(
                    part.get("text", "") for part in content)
                if text not in texts:
                    texts.append(text)
    return texts


def _path_without_forge() -> str:
    """This PATH minus directories holding a `forge` (a pip install's console script)."""
    return os.pathsep.join(
        entry for entry in os.environ.get("PATH", "").split(os.pathsep)
        if entry and not os.access(os.path.join(entry, "forge"), os.X_OK))


def test_the_agents_bash_runs_the_plugins_forge_with_the_python_session_start_named(
        claude_host, project):
    host = claude_host(ASK_FORGE)
    session = host.run("what does forge say?", cwd=project, env={"PATH": _path_without_forge()},
                       args=["--allowedTools", "Bash"])

    assert session.terminal_reason == "completed", session.result
    (output,) = _tool_results(session)
    found, python, *answer = output.splitlines()
    assert found == str(host.plugin_dirs[0] / "cli" / "forge")
    # The host kit hands hooks a recording shim as FORGE_PYTHON; Bash sees the interpreter
    # the SessionStart hook exported instead, so the export is what reached it.
    assert python == f"python={sys.executable}"
    reply = json.loads("\n".join(answer))
    assert reply["_hint"]["marker"] == "Wait"
    assert reply["_next_action"] is None


def test_a_foreign_forge_earlier_on_path_does_not_take_forges_hints(claude_host, project,
                                                                      tmp_path):
    """Foundry's `forge` first on the session's PATH: without forge's SessionStart export the
    agent would run Foundry's."""
    foundry = tmp_path / "foundry-bin"
    foundry.mkdir()
    (foundry / "forge").write_text("#!/bin/sh\necho 'forge 0.2.0 (foundry: not yours)'\n")
    (foundry / "forge").chmod(0o755)
    host = claude_host(ASK_FORGE)
    session = host.run("what does forge say?", cwd=project,
                       env={"PATH": f"{foundry}{os.pathsep}{_path_without_forge()}"},
                       args=["--allowedTools", "Bash"])
    assert session.terminal_reason == "completed", session.result
    (output,) = _tool_results(session)
    found, _python, *answer = output.splitlines()
    assert found == str(host.plugin_dirs[0] / "cli" / "forge")
    assert "foundry" not in output
    assert json.loads("\n".join(answer))["_hint"]["marker"] == "Wait"
