"""No interpreter or tool of forge's own processes comes from a directory the agent can
write: the project, its `.venv`, the agent's temp directories.

The agent's code planted there for real: a project `.venv` whose `.pth` file writes a
marker (it runs whenever that interpreter's `site` does), a `git` and a `bwrap` that write
one when started.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forge_runtime import agent_roots, doctor, hook_settings, statusline_settings
from forge_runtime.gitrefs import RemoteRefs
from forge_runtime.project import find_project
from forge_runtime.sandbox import tools
from tests.artifact_support import bare_repository, git

ROOT = Path(__file__).resolve().parents[1]
LAUNCHER = ROOT / "hooks" / "forge-hook"


def project_venv(project: Path, marker: Path, *, with_forge: bool = False) -> Path:
    """`<project>/.venv`, as `python -m venv` makes it, with the agent's `.pth` in it (and,
    for a person who installed forge there, forge and its dependencies on its path)."""
    venv = project / ".venv"
    subprocess.run([sys._base_executable, "-m", "venv", "--without-pip", str(venv)],
                   check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "zz_agent.pth").write_text(f"import os; open({str(marker)!r}, 'a').write('ran\\n')\n")
    if with_forge:
        ours = next(p for p in sys.path if p.endswith("site-packages") and Path(p).is_dir())
        (site / "forge_here.pth").write_text(f"{ROOT}\n{ours}\n")
    return venv / "bin" / "python"


def launch(project: Path, event: str, path: str,
           launcher: Path = LAUNCHER) -> subprocess.CompletedProcess:
    env = {key: value for key, value in os.environ.items()
           if key not in ("FORGE_PYTHON", "CLAUDE_PLUGIN_DATA", "TMPDIR", "VIRTUAL_ENV")}
    env.update(PATH=path, CLAUDE_PROJECT_DIR=str(project), HOME=str(project.parent / "home"))
    payload = {"session_id": "s1", "hook_event_name": event, "cwd": str(project),
               "prompt": "hi", "source": "startup"}
    return subprocess.run(["sh", str(launcher), event], cwd=project, env=env,
                          input=json.dumps(payload), capture_output=True, text=True,
                          timeout=60)


@pytest.mark.parametrize("entry", ["absolute", "relative"])
def test_an_activated_project_venv_is_never_the_hooks_python(cli_project, tmp_path, entry):
    """The launcher's last resort is `python3` on PATH: with the project's `.venv/bin`
    first (a person who activated it before starting the host), that was the venv's
    interpreter, and its `.pth` ran in the SessionStart hook."""
    marker = tmp_path / "pth-ran"
    project_venv(cli_project, marker)
    first = str(cli_project / ".venv" / "bin") if entry == "absolute" else ".venv/bin"
    for event in ("SessionStart", "UserPromptSubmit", "PreToolUse", "Stop"):
        done = launch(cli_project, event, f"{first}:{os.environ['PATH']}")
        assert str(cli_project / ".venv") not in done.stdout + done.stderr, event
    # the MCP server's launcher the same (no input: the server ends at once)
    launch(cli_project, "", f"{first}:{os.environ['PATH']}", ROOT / "hooks" / "forge-mcp")
    assert not marker.exists()


def test_init_refuses_to_wire_a_python_in_the_project(cli_project, tmp_path):
    """The hooks, Codex's hooks and the status line all run the Python `forge init`
    writes, outside the agent's sandbox (the status line at every refresh)."""
    marker = tmp_path / "pth-ran"
    python = project_venv(cli_project, marker, with_forge=True)
    for words in (["--hooks"], ["--host", "codex"], ["--statusline", "--scope", "local"]):
        done = subprocess.run([str(python), "-m", "forge_runtime", "init", *words, "--json"],
                              cwd=cli_project, capture_output=True, text=True, timeout=120,
                              env={**os.environ, "CLAUDE_PROJECT_DIR": str(cli_project)})
        assert done.returncode == 1, done.stdout + done.stderr
        payload = json.loads(done.stdout)
        assert f"{python}" in payload["_hint"]["error"] and "the agent can" in \
            payload["_hint"]["error"]
        assert payload["_next_action"].startswith(f"python3 -m venv {hook_settings.OWN_ENV} ")
        assert payload["_next_action"].endswith(f"-m forge_runtime init {' '.join(words)}")
    assert not (cli_project / ".claude").exists() and not (cli_project / ".codex").exists()
    assert not (cli_project / ".forge").exists(), "refused before anything was written"


def test_doctor_names_a_hooks_python_the_agent_can_write(cli_project, tmp_path):
    project = find_project(cli_project)
    assert doctor.check_hook_interpreter(project).ok
    hook_settings.wire_hooks(cli_project, python=sys.executable)
    assert doctor.check_hook_interpreter(project).ok
    planted = str(cli_project / ".venv" / "bin" / "python")
    hook_settings.wire_codex_hooks(cli_project, python=planted)
    check = doctor.check_hook_interpreter(project)
    assert not check.ok and planted in check.detail and ".codex/hooks.json" in check.detail
    assert check.fix.endswith("-m forge_runtime init --host codex")
    hook_settings.wire_codex_hooks(cli_project, python=sys.executable)
    assert doctor.check_hook_interpreter(project).ok
    local = cli_project / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"statusLine": {"type": "command", "command":
                                                statusline_settings.forge_command(
                                                    python=planted)}}))
    check = doctor.check_hook_interpreter(project)
    assert not check.ok and planted in check.detail and str(local) in check.detail
    assert check.fix.endswith("-m forge_runtime init --statusline --scope local")


def _plant(directory: Path, name: str, marker: Path) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    program = directory / name
    program.write_text(f"#!/bin/sh\necho {name} >> {marker}\nexit 1\n")
    program.chmod(0o755)


@pytest.mark.parametrize("where", ["project", "tmpdir", "relative"])
def test_git_and_bwrap_of_forges_processes_never_come_from_the_agents_directories(
        cli_project, tmp_path, monkeypatch, where):
    marker = tmp_path / "planted-ran"
    agent_tmp = tmp_path / "agent-tmp"
    directory = {"project": cli_project / "bin", "tmpdir": agent_tmp / "bin",
                 "relative": cli_project / "tools"}[where]
    entry = "tools" if where == "relative" else str(directory)
    bare_repository(tmp_path / "shared.git")
    git("remote", "add", "origin", str(tmp_path / "shared.git"), cwd=cli_project)
    for name in ("git", "bwrap"):
        _plant(directory, name, marker)
    monkeypatch.setenv("TMPDIR", str(agent_tmp))
    monkeypatch.setenv("PATH", f"{entry}:{os.environ['PATH']}")
    monkeypatch.chdir(cli_project)
    monkeypatch.setattr(agent_roots, "_found", {})
    refs = RemoteRefs(cli_project, "origin", "refs/forge/x/")
    assert refs.swap("a", None, refs.commit("one"))
    assert list(refs.fetch("*")) == ["a"]
    tools.find()
    assert agent_roots.tool("git") not in (None, str(directory / "git"))
    assert not marker.exists(), marker.read_text()


def test_a_project_that_holds_the_home_directory_refuses_nothing(tmp_path, monkeypatch):
    """Claude Code started in the home directory: everything forge could point to is the
    agent's to write, so the check has no better place to offer and says nothing."""
    home = tmp_path / "home"
    monkeypatch.setenv("HOME", str(home))
    own = str(home / ".venvs" / "forge" / "bin" / "python")
    assert hook_settings.interpreter_problem(own, home) is None
    assert hook_settings.interpreter_problem(own, home / "project") is None
    assert hook_settings.interpreter_problem(str(home / "project" / ".venv" / "bin" / "python"),
                                             home / "project")
