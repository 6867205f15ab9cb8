"""The host-session helpers of the host tests: the scripted models and tool calls they share,
forge's plugin with edited hooks, and what a finished session's hooks and requests say.

Project and goal fixtures are tests/goal_support.py's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# The scripted model of host tests whose goal is never met: the host's /goal evaluator always
# says not yet, so only forge's budget (or a person) ends the run. Each working turn is
# answered by the rule named "model works" (see `model_turns`).
NEVER_MET = """
rules:
  - name: evaluator says not yet
    when: {goal_evaluator: true}
    reply: {verdict: {ok: false, reason: "GOAL-NOT-MET: keep working"}}
  - name: model works
    reply: {text: "Working on it."}
"""


def plugin_with_hooks(scratch: Path, edit) -> Path:
    """forge's plugin with its hooks.json changed by `edit(config)` (for a host test that
    shortens a timeout or switches a hook off); the rest is linked, not copied."""
    import shutil

    from forge_runtime import resources

    source, plugin = resources.host_plugin_dir(scratch), scratch / "forge-plugin-edited"
    plugin.mkdir()
    for entry in source.iterdir():
        if entry.name != "hooks":
            (plugin / entry.name).symlink_to(entry)
    shutil.copytree(source / "hooks", plugin / "hooks")
    config = json.loads((plugin / "hooks" / "hooks.json").read_text())
    edit(config)
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(config, indent=2))
    return plugin


def model_turns(session) -> int:
    """How many working turns a host session's scripted model answered."""
    return sum(1 for request in session.requests if request["rule"] == "model works")


def stop_reasons(session) -> list[str]:
    """The reasons of the Stop replies that ended or refused a turn, in order."""
    return [hook.reply["stopReason"] for hook in session.hooks_for("Stop")
            if hook.reply and "stopReason" in hook.reply]


def bash(command: str) -> dict:
    """A scripted model's Bash tool call."""
    return {"name": "Bash", "input": {"command": command}}


def forge_cli(project, home, *words: str) -> subprocess.CompletedProcess:
    """`forge <words>` in the project, with `home` as HOME and the rest of this environment."""
    env = {**os.environ, "HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)}
    return subprocess.run([sys.executable, "-m", "forge_runtime", *words], cwd=project,
                          env=env, capture_output=True, text=True, timeout=120)
