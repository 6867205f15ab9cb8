"""Which Claude Code a hook runs under, told without starting the host: from the process the
host names in CLAUDE_PID, as each install lays it out; and SessionStart's one line when
that host is newer than every version forge's contract was measured on."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from forge_runtime.hooks import session_start
from forge_runtime.host_contract import claude_code
from forge_runtime.host_version import claude_version, running_claude


@pytest.fixture
def spawn():
    started: list[subprocess.Popen] = []

    def run(*command: str) -> dict[str, str]:
        process = subprocess.Popen(list(command))
        started.append(process)
        _until_running(process.pid, command[-1])
        return {"CLAUDE_PID": str(process.pid)}

    yield run
    for process in started:
        process.kill()
        process.wait()


def _until_running(pid: int, last: str, seconds: float = 10.0) -> None:
    """Wait until the process's own command line is in /proc (a loaded machine may show the
    new process's before its interpreter has set it up), so the lookup reads the host's."""
    import time

    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/cmdline").read_bytes().split(b"\0")[-2:-1] == \
                    [last.encode()]:
                return
        except OSError:
            pass
        time.sleep(0.01)


def _executable(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy(shutil.which("sleep"), path)
    return path


def test_the_sdk_bundle_says_it_beside_the_executable(tmp_path, spawn):
    binary = _executable(tmp_path / "_bundled" / "claude")
    (tmp_path / "_bundled" / "claude.version").write_text("2.1.337 (Claude Code)\n")
    env = spawn(str(binary), "30")
    assert running_claude(env) == ("2.1.337", str(binary))


def test_the_native_installer_names_the_executable_by_its_version(tmp_path, spawn):
    binary = _executable(tmp_path / "share" / "claude" / "versions" / "2.1.401")
    assert claude_version(spawn(str(binary), "30")) == "2.1.401"


def test_the_npm_package_says_it_in_its_package_json(tmp_path, spawn):
    package = tmp_path / "node_modules" / "@anthropic-ai" / "claude-code"
    package.mkdir(parents=True)
    (package / "package.json").write_text(json.dumps(
        {"name": "@anthropic-ai/claude-code", "version": "2.1.402"}))
    script = package / "cli.js"
    script.write_text("import time\ntime.sleep(30)\n")  # run like node runs cli.js
    assert claude_version(spawn(sys.executable, str(script))) == "2.1.402"


def test_the_bash_tools_exec_path_is_read_too(tmp_path):
    binary = _executable(tmp_path / "claude")
    (tmp_path / "claude.version").write_text("2.1.403 (Claude Code)\n")
    assert claude_version({"CLAUDE_CODE_EXECPATH": str(binary)}) == "2.1.403"


@pytest.mark.parametrize("env", [{}, {"CLAUDE_PID": "not-a-pid"}, {"CLAUDE_PID": "999999999"},
                                 {"CLAUDE_CODE_EXECPATH": "/nowhere/claude"}])
def test_nothing_is_said_when_nothing_tells(env):
    assert claude_version(env) is None


def test_a_process_that_states_no_version_tells_nothing(tmp_path, spawn):
    binary = _executable(tmp_path / "claude")
    (tmp_path / "claude.version").write_text("unknown build\n")
    assert claude_version(spawn(str(binary), "30")) is None


@pytest.fixture
def host_at(tmp_path, spawn, monkeypatch):
    def start(version: str) -> None:
        binary = _executable(tmp_path / "bundle" / "claude")
        (tmp_path / "bundle" / "claude.version").write_text(f"{version} (Claude Code)\n")
        for name, value in spawn(str(binary), "30").items():
            monkeypatch.setenv(name, value)
    return start


def test_session_start_says_in_one_line_that_the_host_is_newer(host_at):
    host_at("2.1.999")
    message = session_start.newer_host_notice(None)["systemMessage"].splitlines()
    assert message == [f"forge: Claude Code 2.1.999 is newer than {claude_code.MEASURED[-1]}, "
                       "the newest version forge's host contract was measured on",
                       "Next: forge doctor"]


def test_the_line_goes_first_in_another_notice(host_at):
    host_at("2.2.0")
    other = {"systemMessage": "Error: something else\nFix: forge doctor", "continue": True}
    reply = session_start.newer_host_notice(other)
    lines = reply["systemMessage"].splitlines()
    assert lines[0].startswith("forge: Claude Code 2.2.0 is newer") and lines[1:] == \
        ["Error: something else", "Fix: forge doctor"]
    assert reply["continue"] is True


@pytest.mark.parametrize("version", [*claude_code.MEASURED, "2.1.300"])
def test_a_measured_or_older_host_adds_nothing(host_at, version):
    host_at(version)
    assert session_start.newer_host_notice(None) is None
