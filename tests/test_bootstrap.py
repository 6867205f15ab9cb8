"""The SessionStart bootstrap: hooks get a Python with their dependencies, or one clear message.

The real paths run the real launcher (`hooks/forge-hook`), a real `venv` and a real pip, kept
offline: a local wheelhouse of stand-in wheels for the success path, and an index URL on a
loopback port where nothing listens for the failure path.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import pytest
from offline_pip import clean_env, make_wheelhouse, refusing_index

import forge_runtime
from forge_runtime import bootstrap
from forge_runtime.errors import ForgeError

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "hooks" / "forge-hook"
EVENT = json.dumps({"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup"})


def run_session_start(env: dict[str, str], cwd: Path) -> subprocess.CompletedProcess:
    return subprocess.run([str(LAUNCHER), "SessionStart"], input=EVENT, env=env, cwd=cwd,
                          capture_output=True, text=True, timeout=280)


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> Path:
    """An interpreter without pyyaml, filelock or jsonschema (and without pip)."""
    env = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / "bin" / "python"
    has = subprocess.run([str(python), "-c", "import yaml"], capture_output=True)
    assert has.returncode != 0, "the bare interpreter must lack the hook dependencies"
    return python


@pytest.fixture
def dead_index():
    with refusing_index() as url:
        yield url


def test_hook_requirements_match_the_package_dependencies():
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert set(bootstrap.HOOK_REQUIREMENTS) <= set(declared)
    assert not [req for req in bootstrap.HOOK_REQUIREMENTS if "claude-agent-sdk" in req]


def test_with_the_dependencies_present_session_start_does_nothing(tmp_path):
    data = tmp_path / "data"
    env = clean_env(FORGE_PYTHON=sys.executable, CLAUDE_PLUGIN_DATA=str(data),
                    CLAUDE_PLUGIN_ROOT=str(REPO))
    done = run_session_start(env, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not data.exists()


def test_without_network_the_person_sees_one_message_with_a_fix(tmp_path, bare_python,
                                                                dead_index):
    data = tmp_path / "data"
    env = clean_env(FORGE_PYTHON=str(bare_python), CLAUDE_PLUGIN_DATA=str(data),
                    CLAUDE_PLUGIN_ROOT=str(REPO), PIP_INDEX_URL=dead_index, PIP_RETRIES="0",
                    PIP_TIMEOUT="5")
    done = run_session_start(env, tmp_path)
    assert done.returncode == 0
    assert "Traceback" not in done.stderr + done.stdout
    reply = json.loads(done.stdout)
    assert list(reply) == ["systemMessage"]
    message = reply["systemMessage"]
    assert message.startswith("Error: forge could not install its hook dependencies")
    assert message.count("Fix: ") == 1
    fix = next(line for line in message.splitlines() if line.startswith("Fix: "))
    assert fix.endswith(f"-m forge_runtime.bootstrap --data {data}")
    assert not (data / "forge-env").exists()
    assert list((data / "forge-env.d").iterdir()) == []        # no half-built environment


def test_a_missing_environment_is_built_once_and_then_used_by_the_launcher(tmp_path,
                                                                          bare_python):
    data = tmp_path / "data"
    wheels = make_wheelhouse(tmp_path / "wheels")
    env = clean_env(FORGE_PYTHON=str(bare_python), CLAUDE_PLUGIN_DATA=str(data),
                    CLAUDE_PLUGIN_ROOT=str(REPO), PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels))
    done = run_session_start(env, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    forge_env = data / "forge-env"
    assert forge_env.is_symlink()
    assert (forge_env / "forge-stamp").read_text().strip() == bootstrap.stamp_of(
        bootstrap.HOOK_REQUIREMENTS)
    imported = subprocess.run(
        [str(forge_env / "bin" / "python"), "-c",
         "import yaml, filelock, jsonschema; print(yaml.STAND_IN)"],
        capture_output=True, text=True, check=True)
    assert imported.stdout.strip() == "pyyaml"
    assert not forge_env.resolve().is_relative_to(REPO)

    # The launcher now prefers forge-env (no FORGE_PYTHON), which needs no second build.
    del env["FORGE_PYTHON"]
    probe = subprocess.run([str(LAUNCHER), "SessionStart"], input=EVENT, env=env,
                           capture_output=True, text=True, timeout=60)
    assert (probe.returncode, probe.stdout, probe.stderr) == (0, "", "")
    assert sorted(p.name for p in (data / "forge-env.d").iterdir()) == [
        bootstrap.stamp_of(bootstrap.HOOK_REQUIREMENTS)]


def test_session_start_tells_the_bash_tool_which_python_runs_forge(tmp_path):
    data, env_file = tmp_path / "data", tmp_path / "session-env.sh"
    env = clean_env(FORGE_PYTHON=sys.executable, CLAUDE_PLUGIN_DATA=str(data),
                    CLAUDE_PLUGIN_ROOT=str(REPO), CLAUDE_ENV_FILE=str(env_file))
    done = run_session_start(env, tmp_path)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert env_file.read_text() == f"export FORGE_PYTHON={sys.executable}\n"

    # What the host does with that file: source it before the agent's Bash command, which
    # finds the plugin's bin/forge on PATH.
    bash = clean_env(PATH=f"{REPO / 'bin'}:/usr/bin:/bin")
    shown = subprocess.run(["sh", "-c", f". {env_file} && forge --version"], env=bash,
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert shown.stdout.splitlines() == [f"forge {forge_runtime.__version__}", "Done."]


def test_a_built_environment_is_what_bash_is_told_to_use(tmp_path):
    data = tmp_path / "data"
    assert bootstrap.python_for("built", str(data)) == str(data / "forge-env" / "bin" / "python")
    assert bootstrap.python_for("ready", str(data)) == str(data / "forge-env" / "bin" / "python")
    assert bootstrap.python_for("present", str(data)) == sys.executable


class FakeSteps:
    """Stand-ins for venv and pip that record what they were asked to build."""

    def __init__(self, delay: float = 0.0, fail: bool = False) -> None:
        self.builds: list[Path] = []
        self.delay = delay
        self.fail = fail
        self.lock = threading.Lock()

    def create(self, path: Path) -> None:
        (path / "bin").mkdir(parents=True)
        (path / "bin" / "python").symlink_to(sys.executable)

    def install(self, python: Path, requirements) -> None:
        with self.lock:
            self.builds.append(python.parent.parent)
        time.sleep(self.delay)
        if self.fail:
            raise bootstrap._BuildFailed("pip failed: no network")


def test_a_changed_dependency_list_rebuilds_and_replaces_the_environment(tmp_path):
    steps = FakeSteps()
    first = bootstrap.Bootstrap(tmp_path, requirements=["a>=1"], create=steps.create,
                                install=steps.install)
    assert first.build() is True
    assert first.build() is False                      # same list: nothing to do
    old_target = first.env.resolve()
    second = bootstrap.Bootstrap(tmp_path, requirements=["a>=1", "b>=2"],
                                 create=steps.create, install=steps.install)
    assert bootstrap.is_current(first.env, first.stamp)
    assert not bootstrap.is_current(second.env, second.stamp)
    assert second.build() is True
    assert len(steps.builds) == 2
    assert second.env.resolve() != old_target
    assert old_target.exists()                 # kept one round for sessions still using it
    assert bootstrap.is_current(second.env, second.stamp)
    third = bootstrap.Bootstrap(tmp_path, requirements=["c>=3"], create=steps.create,
                                install=steps.install)
    assert third.build() is True
    assert not old_target.exists()
    assert sorted(p.name for p in third.builds.iterdir()) == sorted([second.stamp, third.stamp])


def test_two_sessions_starting_at_once_build_once(tmp_path):
    steps = FakeSteps(delay=0.3)
    results: list[bool] = []

    def start() -> None:
        boot = bootstrap.Bootstrap(tmp_path, requirements=["a>=1"], create=steps.create,
                                   install=steps.install)
        results.append(boot.build())

    threads = [threading.Thread(target=start) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert sorted(results) == [False, False, False, True]
    assert len(steps.builds) == 1


def test_a_failed_build_leaves_neither_a_partial_nor_a_broken_environment(tmp_path):
    steps = FakeSteps(fail=True)
    boot = bootstrap.Bootstrap(tmp_path, requirements=["a>=1"], create=steps.create,
                               install=steps.install)
    with pytest.raises(bootstrap._BuildFailed):
        boot.build()
    assert not boot.env.exists()
    assert list(boot.builds.iterdir()) == []


def test_ensure_turns_a_failed_build_into_one_error_with_a_fix(tmp_path, monkeypatch):
    monkeypatch.setattr(bootstrap, "missing_modules", lambda modules=(): ["yaml"])
    steps = FakeSteps(fail=True)
    boot = bootstrap.Bootstrap(tmp_path, create=steps.create, install=steps.install)
    with pytest.raises(ForgeError) as caught:
        bootstrap.ensure(tmp_path, bootstrap=boot)
    assert "no network" in caught.value.message
    assert caught.value.fix == bootstrap.fix_command(tmp_path)


def test_ensure_never_builds_inside_the_plugin_root(tmp_path, monkeypatch):
    monkeypatch.setattr(bootstrap, "missing_modules", lambda modules=(): ["yaml"])
    data = tmp_path / "plugin" / "data"
    with pytest.raises(ForgeError, match="inside the plugin's own directory"):
        bootstrap.ensure(data, tmp_path / "plugin")
    assert not data.exists()


def test_ensure_without_plugin_data_names_the_pip_fix(monkeypatch):
    monkeypatch.setattr(bootstrap, "missing_modules", lambda modules=(): ["yaml"])
    with pytest.raises(ForgeError) as caught:
        bootstrap.ensure(None)
    assert caught.value.fix == bootstrap.pip_fallback()


def test_ensure_reports_present_when_the_interpreter_has_everything(tmp_path):
    assert bootstrap.ensure(tmp_path / "data") == "present"
    assert not (tmp_path / "data").exists()


def test_the_manual_retry_command_builds_like_the_hook(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(bootstrap, "missing_modules", lambda modules=(): ["yaml"])
    steps = FakeSteps()
    monkeypatch.setattr(bootstrap, "_verbose_pip_install", steps.install)
    monkeypatch.setattr(bootstrap, "create_venv", steps.create)
    assert bootstrap.main(["--data", str(tmp_path)]) == 0
    assert capsys.readouterr().out.endswith("Done.\n")


MCP_LAUNCHER = REPO / "hooks" / "forge-mcp"


def test_the_mcp_sdk_is_a_runtime_dependency_kept_out_of_the_hooks_environment():
    declared = tomllib.loads((REPO / "pyproject.toml").read_text())["project"]["dependencies"]
    assert set(bootstrap.MCP_REQUIREMENTS) <= set(declared)
    assert not {req.split(">")[0] for req in bootstrap.HOOK_REQUIREMENTS} & {"mcp"}
    assert bootstrap.MCP_ENV_NAME != bootstrap.ENV_NAME


def test_the_mcp_launcher_without_the_sdk_or_network_says_so_once_with_a_fix(
        tmp_path, bare_python, dead_index):
    data = tmp_path / "data"
    env = clean_env(FORGE_MCP_PYTHON=str(bare_python), CLAUDE_PLUGIN_DATA=str(data),
                    PIP_INDEX_URL=dead_index, PIP_RETRIES="0", PIP_TIMEOUT="5")
    done = subprocess.run([str(MCP_LAUNCHER)], input="", env=env, capture_output=True,
                          text=True, timeout=300, cwd=tmp_path)
    assert done.returncode == 1 and done.stdout == ""
    assert "Traceback" not in done.stderr
    assert done.stderr.startswith("Error: forge could not install the MCP SDK into ")
    assert done.stderr.count("\nFix: ") == 1 and "-m pip install mcp>=2.3" in done.stderr
    assert not (data / "forge-mcp-env").exists() and not (data / "forge-env").exists()
