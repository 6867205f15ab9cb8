"""The plugin bundle passes the real host's own validator with nothing to report."""

from __future__ import annotations

import functools
import json
import os
import struct
import subprocess
from pathlib import Path

import pytest

from forge_runtime.claude_binary import find_claude
from forge_runtime.host_contract import claude_code
from forge_runtime.hostkit.runner import QUIET_ENV

REPO = Path(__file__).resolve().parents[1]
TARGETS = [".", ".claude-plugin/plugin.json"]
PROFILES = [[], ["--profile", "directory"]]
# Hook events forge registers that older hosts it still runs on lack, with the first Claude
# Code version the contract measured them on (2.1.332 has no Interrupt): an older host drops
# the entry, says so, and runs the other hooks.
NEWER_EVENTS = {event: tuple(int(part) for part in versions[0].split("."))
                for event, versions in claude_code.HOOK_EVENTS.items()
                if claude_code.MEASURED[0] not in versions}
UNKNOWN_EVENT = "hooks.{}: unknown hook event; entry ignored at runtime"


@functools.cache
def host_version() -> tuple[int, ...]:
    """The version of the Claude Code the tests run (`2.1.337 (Claude Code)`)."""
    import tempfile

    with tempfile.TemporaryDirectory() as home:  # no run of the host touches the real HOME
        done = subprocess.run([str(find_claude()), "--version"], capture_output=True,
                              text=True, timeout=60,
                              env={**os.environ, "HOME": home, **QUIET_ENV})
    return tuple(int(part) for part in done.stdout.split()[0].split("."))


def lacked_events() -> set[str]:
    """The events forge registers that this host is too old to have."""
    return {event for event, since in NEWER_EVENTS.items() if host_version() < since}


def validate(target: str, extra: list[str], home: Path) -> tuple[int, dict]:
    env = {**os.environ, "HOME": str(home), **QUIET_ENV}
    done = subprocess.run([str(find_claude()), "plugin", "validate", target, "--strict",
                           *extra, "--json"], cwd=REPO, env=env, capture_output=True,
                          text=True, timeout=120)
    return done.returncode, json.loads(done.stdout)


@pytest.mark.parametrize("extra", PROFILES, ids=["strict", "directory"])
@pytest.mark.parametrize("target", TARGETS)
def test_the_host_validator_reports_nothing(target, extra, tmp_path):
    """Nothing at all on a host that has every event forge registers (the newest); on an
    older one, only that it ignores the entries of the events it is too old for."""
    code, report = validate(target, extra, tmp_path)
    declared = json.loads((REPO / "hooks/hooks.json").read_text())["hooks"]
    lacking = [event for event in declared
               if event not in {hook["event"] for hook in report["provides"]["hooks"]}]
    assert set(lacking) == lacked_events(), lacking
    expected = [UNKNOWN_EVENT.format(event) for event in lacking]
    assert (code == 0 and report["success"] is True) is not bool(lacking), report
    for part in [report["manifest"], *report["contents"]]:
        assert part["errors"] == [], part
        assert [warning["message"] for warning in part["warnings"]] in ([], expected), part
    assert expected == [] or any(part["warnings"] for part in report["contents"])
    assert report["advice"] == []
    if extra:
        directory = report["directory"]
        assert directory["findings"] == [] and directory["undecided"] == []
        assert directory["incomplete"] is False and directory["failure"] is None


def test_the_validator_sees_the_hooks_and_the_skills(tmp_path):
    _, report = validate(".claude-plugin/plugin.json", [], tmp_path)
    events = [hook["event"] for hook in report["provides"]["hooks"]]
    registered = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop",
                  "StopFailure", "Interrupt", "SubagentStop", "SessionEnd"]
    # an older host leaves out only the events it is too old for
    assert events == [event for event in registered if event not in lacked_events()]
    assert all(hook["command"] == "${CLAUDE_PLUGIN_ROOT}/hooks/forge-hook"
               and hook["args"] == [hook["event"]] for hook in report["provides"]["hooks"])
    assert {"forge:forge-status", "forge:clarify"} <= set(report["provides"]["skills"])
    assert not [name for name in report["provides"]["skills"] + report["provides"]["commands"]
                if name.split(":")[-1] == "goal"]


def test_the_icon_is_a_real_square_png():
    manifest = json.loads((REPO / ".claude-plugin/plugin.json").read_text())
    data = (REPO / manifest["icon"]).read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    assert data[12:16] == b"IHDR"
    width, height = struct.unpack(">II", data[16:24])
    assert width == height >= 128
    assert data[-8:-4] == b"IEND"


def test_the_launcher_is_executable_and_every_hook_uses_it_in_exec_form():
    assert os.access(REPO / "hooks/forge-hook", os.X_OK)
    declared = json.loads((REPO / "hooks/hooks.json").read_text())["hooks"]
    for event, groups in declared.items():
        for group in groups:
            for hook in group["hooks"]:
                assert hook["command"] == "${CLAUDE_PLUGIN_ROOT}/hooks/forge-hook"
                assert hook["args"] == [event]


def test_the_manifest_declares_the_only_hosts_forge_reaches(tmp_path):
    """The first session's bootstrap runs pip against PyPI; nothing else leaves the machine."""
    _, report = validate(".claude-plugin/plugin.json", [], tmp_path)
    assert report["hosts"]["declared"]["plugin"] is True
    assert sorted(entry["host"] for entry in report["hosts"]["named"]) == [
        "files.pythonhosted.org", "pypi.org"]


def test_the_validator_sees_the_mcp_server_started_by_its_launcher(tmp_path):
    _, report = validate(".claude-plugin/plugin.json", [], tmp_path)
    assert report["provides"]["mcpServers"] == [{
        "name": "forge", "type": "stdio", "target": "${CLAUDE_PLUGIN_ROOT}/hooks/forge-mcp",
        "args": []}]
    assert os.access(REPO / "hooks/forge-mcp", os.X_OK)
    # No `env` entry: the host gives the server CLAUDE_PLUGIN_ROOT and CLAUDE_PLUGIN_DATA
    # itself, and would pass a `${CLAUDE_PLUGIN_DATA}` written there unexpanded.
    assert "env" not in json.loads((REPO / ".mcp.json").read_text())["mcpServers"]["forge"]
