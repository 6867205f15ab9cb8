"""The README's install lines, typed as a user types them, against a local clone of this
repository in a scratch home: the plugin from the clone as a marketplace (the real Claude
Code CLI's `plugin marketplace add`, `plugin install`, `plugin marketplace update`), and
the CLI in an isolated environment from the same clone (`uv tool install`, a venv's pip).

No package index is asked: a wheelhouse of stand-ins for forge's dependencies (and this
machine's setuptools, the clone's build backend) is all pip and uv see, so nothing leaves
the machine and the lines resolve forge itself from the clone, under its own name.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from offline_pip import STAND_INS, clean_env, make_wheelhouse

from forge_runtime import distribution
from forge_runtime.claude_binary import find_claude
from forge_runtime.hostkit.marketplace import wheelhouse
from forge_runtime.hostkit.runner import QUIET_ENV

pytestmark = pytest.mark.host

REPO = Path(__file__).resolve().parents[2]
README = (REPO / "README.md").read_text(encoding="utf-8")
# Every dependency forge declares, as a stand-in: the CLI's `forge --version` imports none.
DEPENDENCIES = [*STAND_INS, ("claude-agent-sdk", "0.2.189", "claude_agent_sdk"),
                ("mcp", "2.3.0", "mcp")]


@pytest.fixture(scope="module")
def clone(tmp_path_factory) -> Path:
    """A clone of this repository holding the working tree's files, as a user's `git clone`
    gets it. The files are copied without `.git` into a repository of their own first: a
    linked worktree's `.git` file would point the copy back at this repository."""
    work = tmp_path_factory.mktemp("clone")
    source = work / "source"
    shutil.copytree(REPO, source, ignore=shutil.ignore_patterns(
        ".git", ".venv", ".ci-venv", "__pycache__", "*.egg-info", ".pytest_cache",
        ".ruff_cache", ".hypothesis", "build", "dist"))
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(source)]
    for words in (["init", "-q"], ["add", "-A"], ["commit", "-q", "-m", "forge"]):
        subprocess.run([*git, *words], check=True, capture_output=True)
    target = work / "src" / "forge"
    subprocess.run(["git", "clone", "-q", str(source), str(target)], check=True,
                   capture_output=True)
    return target


def _readme_lines(pattern: str) -> list[str]:
    return [line.strip() for line in README.splitlines() if re.search(pattern, line)]


def _user_env(home: Path, **extra: str) -> dict[str, str]:
    env = clean_env(HOME=str(home), TMPDIR=str(home / "tmp"), **QUIET_ENV, **extra)
    (home / "tmp").mkdir(parents=True, exist_ok=True)
    return env


def _typed(line: str, clone: Path, env: dict[str, str]) -> subprocess.CompletedProcess:
    """A README line as a user types it, with the clone where the README puts it."""
    command = line.split("#")[0].strip().replace("~/src/forge", str(clone))
    return subprocess.run(["bash", "-c", command], env=env, capture_output=True, text=True,
                          timeout=300)


def test_the_readme_installs_the_plugin_from_a_clone_of_this_repository(clone, tmp_path):
    home = tmp_path / "home"
    claude = find_claude()
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "claude").symlink_to(claude)
    env = _user_env(home, PATH=f"{bin_dir}{os.pathsep}{clean_env()['PATH']}")
    lines = [*_readme_lines(r"^`?claude plugin marketplace add "),
             *_readme_lines(r"`claude plugin install forge@forge`")]
    shell_lines = ["claude plugin marketplace add ~/src/forge",
                   "claude plugin install forge@forge", "claude plugin marketplace update forge"]
    assert all(f"`{line}`" in README for line in shell_lines)
    assert lines  # the README has the shell form of each line
    for line in shell_lines:
        done = _typed(line, clone, env)
        assert done.returncode == 0, (line, done.stdout, done.stderr)
    listed = subprocess.run(["claude", "plugin", "list"], env=env, capture_output=True,
                            text=True, timeout=120)
    assert "forge@forge" in listed.stdout, listed.stdout + listed.stderr
    # the slash-command forms name the same marketplace and plugin
    assert "/plugin marketplace add ~/src/forge" in README
    assert "/plugin install forge@forge" in README
    assert "/plugin marketplace update forge" in README


@pytest.fixture
def offline_index(tmp_path):
    wheels = make_wheelhouse(tmp_path / "wheels", stand_ins=DEPENDENCIES)
    wheelhouse(wheels, ("setuptools",))  # the clone's build backend, from this machine
    # as a user's pip.conf or uv.toml would say: no index, only these wheels
    return {"PIP_NO_INDEX": "1", "PIP_FIND_LINKS": str(wheels), "UV_OFFLINE": "1",
            "UV_FIND_LINKS": str(wheels)}


def _installed_forge_answers(forge: Path, env: dict[str, str]) -> None:
    done = subprocess.run([str(forge), "--version"], env=env, capture_output=True, text=True,
                          timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("forge "), done.stdout + done.stderr


def test_the_readme_installs_the_cli_with_uv_tool_from_the_same_clone(clone, tmp_path,
                                                                      offline_index):
    uv = shutil.which("uv", path=os.path.dirname(sys.executable))
    assert uv, "uv comes with the dev extras"
    (line,) = _readme_lines(r"^uv tool install ~/src/forge")
    home = tmp_path / "home"
    tools = tmp_path / "uv-tools"
    env = _user_env(home, UV_TOOL_DIR=str(tools / "envs"), UV_TOOL_BIN_DIR=str(tools / "bin"),
                    UV_CACHE_DIR=str(tmp_path / "uv-cache"), UV_PYTHON=sys.executable,
                    PATH=f"{os.path.dirname(uv)}{os.pathsep}{clean_env()['PATH']}",
                    **offline_index)
    done = _typed(line, clone, env)
    assert done.returncode == 0, done.stdout + done.stderr
    assert distribution.NAME in done.stdout + done.stderr
    _installed_forge_answers(tools / "bin" / "forge", env)


def test_the_readme_installs_the_cli_in_a_venv_from_the_same_clone(clone, tmp_path,
                                                                   offline_index):
    (line,) = _readme_lines(r"^python3 -m venv ~/.venvs/forge")
    home = tmp_path / "home"
    env = _user_env(home, PATH=f"{os.path.dirname(sys.executable)}{os.pathsep}"
                               f"{clean_env()['PATH']}", **offline_index)
    done = _typed(line, clone, env)
    assert done.returncode == 0, done.stdout + done.stderr
    shown = subprocess.run([str(home / ".venvs/forge/bin/pip"), "show", distribution.NAME],
                           env=env, capture_output=True, text=True, timeout=60)
    assert shown.returncode == 0 and f"Name: {distribution.NAME}" in shown.stdout
    _installed_forge_answers(home / ".venvs/forge/bin/forge", env)


FOUNDRY = "#!/bin/sh\necho 'forge 0.2.0 (foundry: a Solidity toolchain, not yours)'\n"
GATES = """\
gates:
  unit-tests:
    command: echo UNIT-TESTS-RAN
    boundary: ["src/**"]
"""


def _tool_results(session) -> list[str]:
    """Every tool result the model was shown, whole, in order."""
    texts: list[str] = []
    for request in session.requests:
        for message in request["body"].get("messages", []):
            blocks = message.get("content")
            for block in blocks if isinstance(blocks, list) else []:
                if isinstance(block, dict) and block.get("type") == "tool_result":
                    content = block.get("content")
                    text = content if isinstance(content, str) else "".join(
                        part.get("text", "") for part in content or [])
                    if text not in texts:
                        texts.append(text)
    return texts


def test_a_machine_with_a_foreign_forge_follows_the_readme_to_a_budgeted_goal(tmp_path,
                                                                             claude_bin):
    """The README from the top on a machine where another `forge` comes first on PATH: the
    plugin from a clone as its marketplace (the host's own CLI), the project set up with the
    CLI from the same source, and a person's `/goal` whose model runs `forge gate run`: the
    gate runs (forge's, not the stranger's) and the goal stops at its budget."""
    from offswitch_support import (
        OBJECTIVE,
        TRANCHE,
        attack_script,
        forge_cli,
        kill_leftovers,
        outcome,
        remove,
        short_tmpdir,
    )

    from forge_runtime.hostkit.marketplace import install_from_marketplace
    from forge_runtime.hostkit.projects import init_git_project
    from forge_runtime.hostkit.pytest_plugin import as_script
    from forge_runtime.hostkit.runner import Host

    foreign = tmp_path / "foundry-bin"
    foreign.mkdir()
    (foreign / "forge").write_text(FOUNDRY)
    (foreign / "forge").chmod(0o755)
    script = attack_script([{"name": "Bash", "input": {
        "command": "command -v forge; forge gate run unit-tests"}}])
    temp = short_tmpdir()
    host = Host(tmp_path / "host", as_script(script), own_pids=False, claude_bin=claude_bin)
    try:
        installed = install_from_marketplace(host, REPO)
        project = init_git_project(tmp_path / "project")
        (project / "src").mkdir()
        (project / "src" / "app.py").write_text("x = 1\n")
        (project / ".forge").mkdir()
        (project / ".forge" / "gates.yaml").write_text(GATES)
        init = forge_cli(project, host.home, "init")
        assert init.returncode == 0, init.stdout + init.stderr
        env = {**installed.env, "PATH": f"{foreign}{os.pathsep}{installed.env['PATH']}",
               "TMPDIR": temp, "CLAUDE_CODE_TMPDIR": temp,
               "CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"}  # as the off-switch tests run
        session = host.run(f"/goal {OBJECTIVE}", cwd=project, env=env, timeout=120,
                           args=["--permission-mode", "acceptEdits", "--allowedTools", "Bash"])
        ran = next((text for text in _tool_results(session) if "/cli/forge" in text), "")
        assert "foundry" not in ran and "UNIT-TESTS-RAN" in ran, ran
        assert str(installed.clone / "cli" / "forge") in ran  # the plugin's own forge won
        result = outcome(session)
        assert (result.turns, result.ended_by) == (TRANCHE, "forge's budget"), str(result)
    finally:
        kill_leftovers(tmp_path, Path(temp))
        host.close()
        remove(temp)
