"""A guard that does not answer in time is a deny, in the real host.

The host lets a PreToolUse hook that crashes or times out through unless the hook is
marked `"onFailure": "block"`; forge's hooks.json (and `forge init --hooks`) mark it, and
forge's own 2 s watchdog turns a decision that overruns into a deny before the host's
timeout. `FORGE_GUARD_DEADLINE` shortens that watchdog so a test can make any decision
overrun.
"""

from __future__ import annotations

import json
import sys

import pytest

from forge_runtime import hook_settings
from forge_runtime.hostkit.projects import write_plugin

pytestmark = pytest.mark.host

TOUCH_SCRIPT = """
rules:
  - name: the model reads the result
    when: {last_is_tool_result: true}
    reply: {text: "TOUCH-DONE"}
  - name: an ordinary command
    reply:
      tool_calls:
        - {name: Bash, input: {command: "touch {cwd}/ran.txt"}}
"""


# The same touch, in a command whose decision takes far longer than a 1 ms watchdog (the
# guard now decides a plain `touch` within it).
SLOW_TO_DECIDE = TOUCH_SCRIPT.replace('"touch {cwd}/ran.txt"',
                                      '"touch {cwd}/ran.txt' + "; true" * 2000 + '"')


def _slow_hook(**options) -> dict:
    return {"type": "command", "command": sys.executable,
            "args": ["-c", "import time; time.sleep(5)"], "timeout": 1, **options}


def _tool_result(session) -> dict:
    blocks = [block for request in session.requests
              for message in request["body"].get("messages", [])
              if isinstance(message.get("content"), list)
              for block in message["content"] if block.get("type") == "tool_result"]
    assert blocks, "the model never got a tool result"
    return blocks[0]


@pytest.mark.parametrize("on_failure, runs", [(None, True), ("block", False)],
                         ids=["default-lets-it-through", "onFailure-block"])
def test_the_host_blocks_a_hook_that_overruns_only_when_marked(claude_host, project, tmp_path,
                                                               on_failure, runs):
    options = {"onFailure": on_failure} if on_failure else {}
    plugin = write_plugin(tmp_path / "slow", "slow",
                          {"PreToolUse": [{"matcher": "*", "hooks": [_slow_hook(**options)]}]})
    host = claude_host(TOUCH_SCRIPT, plugin_dirs=[plugin])
    session = host.run("touch it", cwd=project, args=["--allowedTools", "Bash"])

    assert session.terminal_reason == "completed", session.stderr
    assert (project / "ran.txt").exists() == runs
    assert _tool_result(session).get("is_error", False) == (not runs)


def test_forge_denies_a_decision_that_overruns_its_watchdog(claude_host, project):
    host = claude_host(SLOW_TO_DECIDE)
    session = host.run("touch it", cwd=project, args=["--allowedTools", "Bash"],
                       env={"FORGE_GUARD_DEADLINE": "0.001"})

    assert session.terminal_reason == "completed", session.stderr
    assert not (project / "ran.txt").exists()
    result = _tool_result(session)
    assert result["is_error"]
    text = json.dumps(result["content"])
    assert "no decision within 2 s" in text and "Fix: forge doctor" in text


def test_a_pip_wired_guard_that_overruns_is_blocked_by_the_host(claude_host, project):
    # No launcher here: `python -I -m forge_runtime.hooks` dies at the watchdog with no
    # reply, and only the host's onFailure (copied from hooks.json) turns that into a block.
    hook_settings.wire_hooks(project, sys.executable)
    settings = json.loads((project / ".claude" / "settings.json").read_text())
    (pre_tool,) = settings["hooks"]["PreToolUse"][0]["hooks"]
    assert pre_tool["onFailure"] == "block" and pre_tool["args"][0] == "-I"
    host = claude_host(SLOW_TO_DECIDE, plugin_dirs=[])
    session = host.run("touch it", cwd=project, args=["--allowedTools", "Bash"],
                       env={"FORGE_GUARD_DEADLINE": "0.001"})

    assert session.terminal_reason == "completed", session.stderr
    assert not (project / "ran.txt").exists()
    assert _tool_result(session)["is_error"]
