"""A person's settings, through forge's writes and undos, are what the real host reads.

The sequence that must keep a person's file: `forge init` writes `.claude/settings.json`
and its record; the person replaces the file with their own; `forge sandbox enable` then
`disable` must not delete it.
Here the same sequence runs through forge's CLI, and then Claude Code itself shows that
the person's env var is set and their permission rule decides: `printenv` (allowed by
their rule) runs without a prompt, `touch` (no rule, and not read-only) is refused in the
default mode.
"""

from __future__ import annotations

import json

import pytest
from session_support import forge_cli
from test_sandbox_host import results_of

pytestmark = pytest.mark.host

THEIRS = b'{"env": {"KEEP": "kept-by-forge-33"}, "permissions": {"allow": ["Bash(printenv:*)"]}}'
SCRIPT = {"rules": [
    {"name": "the model reads the results", "when": {"last_is_tool_result": True},
     "reply": {"text": "SETTINGS-READ"}},
    {"name": "read the person's env var, and a command no rule allows", "reply": {
        "tool_calls": [{"name": "Bash", "input": {"command": "printenv KEEP"}},
                       {"name": "Bash", "input": {"command": "touch unruled.txt"}}]}},
]}


def test_a_persons_settings_survive_init_enable_disable_and_are_in_force(
        claude_host, project):
    (project / ".forge" / "guard.yaml").unlink()  # the secure posture: init turns it on
    host = claude_host(SCRIPT)
    init = forge_cli(project, host.home, "init", "--json")
    assert json.loads(init.stdout)["sandbox"]["outcome"] == "enabled", init.stdout
    settings = project / ".claude" / "settings.json"
    settings.write_bytes(THEIRS)
    for action in ("enable", "disable"):
        done = forge_cli(project, host.home, "sandbox", action)
        assert done.returncode == 0, done.stdout + done.stderr
    assert settings.read_bytes() == THEIRS

    session = host.run("work", cwd=project, args=["--permission-mode", "default"])
    assert session.terminal_reason == "completed", session.stderr
    results = results_of(session)
    assert results["printenv KEEP"].strip() == "kept-by-forge-33", results
    assert not (project / "unruled.txt").exists(), results["touch unruled.txt"]
