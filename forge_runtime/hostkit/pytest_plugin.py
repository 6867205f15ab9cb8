"""pytest fixtures that make a host test read like a story: a scripted model, a session, checks.

Enable with `pytest_plugins = ["forge_runtime.hostkit.pytest_plugin"]` in a conftest.py.

    @pytest.mark.host
    def test_deny_blocks_the_tool(claude_host, project):
        host = claude_host('''
            rules:
              - when: {last_is_tool_result: true}
                reply: {text: "The tool was refused."}
              - reply: {tool_calls: [{name: Bash, input: {command: "touch {cwd}/x"}}]}
        ''')
        session = host.run("make x", cwd=project, args=["--allowedTools", "Bash"])
        assert session.terminal_reason == "completed"

`codex_host(script, **options)` is the same for Codex CLI (hostkit/codex.py): a started
`CodexHost`; `codex_bin` installs the pinned Codex from npm once into a user cache and fails
the test (never skips it) when that cannot be done.

`claude_host(script, plugin_dirs=None, **options)` returns a started `Host` (closed after
the test) with the forge plugin loaded unless `plugin_dirs` says otherwise; `script` is a
`Script`, a dict, YAML/JSON text, or a path. `project` is an empty git repository.
A test that needs the binary fails, saying where forge looked, when there is none: forge
depends on claude-agent-sdk, which ships it, so a missing binary is a broken install that a
skip would hide.
"""

from __future__ import annotations

import textwrap
from pathlib import Path

import pytest

from forge_runtime import resources
from forge_runtime.claude_binary import ClaudeNotFound, find_claude
from forge_runtime.hostkit.codex import CodexHost
from forge_runtime.hostkit.codex_binary import CodexNotFound, find_codex
from forge_runtime.hostkit.projects import init_git_project
from forge_runtime.hostkit.runner import Host
from forge_runtime.hostkit.script import Script


def as_script(script: Script | dict | str | Path) -> Script:
    """A `Script` from any of the forms a test may hold one in."""
    if isinstance(script, Script):
        return script
    if isinstance(script, dict):
        return Script(script)
    if isinstance(script, Path) or (isinstance(script, str) and "\n" not in script
                                    and script.endswith((".yaml", ".yml", ".json"))):
        return Script.load(script)
    return Script.parse(textwrap.dedent(script))


@pytest.fixture(scope="session")
def claude_bin() -> Path:
    """The real Claude Code binary; the test fails, saying why, when there is none at all."""
    try:
        return find_claude()
    except ClaudeNotFound as exc:
        pytest.fail(f"no Claude Code binary: {exc} (python -m pip install claude-agent-sdk)",
                    pytrace=False)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """A fresh git project for the session's working directory."""
    return init_git_project(tmp_path / "project")


@pytest.fixture
def claude_host(tmp_path: Path, claude_bin: Path):
    """Factory: `claude_host(script, plugin_dirs=None, **Host options)` -> a started Host."""
    hosts: list[Host] = []

    def make(script, plugin_dirs=None, **options) -> Host:
        plugins = [resources.host_plugin_dir(tmp_path)] if plugin_dirs is None else plugin_dirs
        host = Host(tmp_path / f"host-{len(hosts) + 1}", as_script(script),
                    plugin_dirs=plugins, claude_bin=claude_bin, **options)
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        host.close()


@pytest.fixture(scope="session")
def codex_bin() -> Path:
    """The real Codex CLI (pinned, from npm, cached); the test fails when there is none."""
    try:
        return find_codex()
    except CodexNotFound as exc:
        pytest.fail(f"no Codex CLI: {exc} (python -m forge_runtime.hostkit.codex_binary)",
                    pytrace=False)


@pytest.fixture
def codex_host(tmp_path: Path, codex_bin: Path):
    """Factory: `codex_host(script, **CodexHost options)` -> a started CodexHost."""
    hosts: list[CodexHost] = []

    def make(script, **options) -> CodexHost:
        host = CodexHost(tmp_path / f"codex-{len(hosts) + 1}", as_script(script),
                         codex_bin=codex_bin, **options)
        hosts.append(host)
        return host

    yield make
    for host in hosts:
        host.close()
