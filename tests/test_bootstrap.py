"""The SessionStart bootstrap: hooks get a Python with their dependencies, or one clear message.

The real paths run the real launcher (`hooks/forge-hook`), a real `venv` and a real pip, kept
offline: a local wheelhouse of stand-in wheels for the success path, and an index URL on a
loopback port where nothing listens for the failure path.
"""

from __future__ import annotations

import importlib.util
import json
import os
import subprocess
import sys
import threading
import time
import tomllib
from pathlib import Path

import pytest
from offline_pip import STAND_INS, clean_env, make_wheelhouse, refusing_index
from uv import find_uv_bin

import forge_runtime
from bench import local_index
from forge_runtime import bootstrap, hook_python, installers
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
    assert env_file.read_text() == (f"export FORGE_PYTHON={sys.executable}\n"
                                    f'export PATH={REPO / "cli"}:"$PATH"\n')

    # What the host does with that file: source it before the agent's Bash command, which
    # then finds the plugin's cli/forge on PATH (the host adds none of the plugin's folders).
    bash = clean_env(PATH="/usr/bin:/bin")
    shown = subprocess.run(["sh", "-c", f". {env_file} && forge --version"], env=bash,
                           cwd=tmp_path, capture_output=True, text=True, timeout=60)
    assert shown.stdout.splitlines() == [f"forge {forge_runtime.__version__}", "Done."]


def test_a_built_environment_is_what_bash_is_told_to_use(tmp_path):
    data = tmp_path / "data"
    assert bootstrap.python_for("built", str(data)) == str(data / "forge-env" / "bin" / "python")
    assert bootstrap.python_for("ready", str(data)) == str(data / "forge-env" / "bin" / "python")
    assert bootstrap.python_for("present", str(data)) == sys.executable


class FakeSteps:
    """Stand-ins for venv and an installer that record what they were asked to build."""

    label = "fake"
    with_pip = False

    def __init__(self, delay: float = 0.0, fail: bool = False) -> None:
        self.builds: list[Path] = []
        self.delay = delay
        self.fail = fail
        self.lock = threading.Lock()
        self.chain = [self]

    def create(self, path: Path, with_pip: bool) -> None:
        """A stand-in `bin/python` that answers the import check with "nothing missing"."""
        (path / "bin").mkdir(parents=True)
        (path / "bin" / "python").write_text("#!/bin/sh\nexit 0\n")
        (path / "bin" / "python").chmod(0o755)

    def run(self, python: Path, requirements, *, cwd, deadline, verbose=False) -> None:
        with self.lock:
            self.builds.append(python.parent.parent)
        time.sleep(self.delay)
        if self.fail:
            raise bootstrap.BuildFailed("pip failed: no network")


def test_a_changed_dependency_list_rebuilds_and_replaces_the_environment(tmp_path):
    steps = FakeSteps()
    first = bootstrap.Bootstrap(tmp_path, requirements=["a>=1"], create=steps.create,
                                chain=steps.chain)
    assert first.build() is True
    assert first.build() is False                      # same list: nothing to do
    old_target = first.env.resolve()
    second = bootstrap.Bootstrap(tmp_path, requirements=["a>=1", "b>=2"],
                                 create=steps.create, chain=steps.chain)
    assert bootstrap.is_current(first.env, first.stamp)
    assert not bootstrap.is_current(second.env, second.stamp)
    assert second.build() is True
    assert len(steps.builds) == 2
    assert second.env.resolve() != old_target
    assert old_target.exists()                 # kept one round for sessions still using it
    assert bootstrap.is_current(second.env, second.stamp)
    third = bootstrap.Bootstrap(tmp_path, requirements=["c>=3"], create=steps.create,
                                chain=steps.chain)
    assert third.build() is True
    assert not old_target.exists()
    assert sorted(p.name for p in third.builds.iterdir()) == sorted([second.stamp, third.stamp])


def test_two_sessions_starting_at_once_build_once(tmp_path):
    steps = FakeSteps(delay=0.3)
    results: list[bool] = []

    def start() -> None:
        boot = bootstrap.Bootstrap(tmp_path, requirements=["a>=1"], create=steps.create,
                                   chain=steps.chain)
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
                               chain=steps.chain)
    with pytest.raises(bootstrap.BuildFailed):
        boot.build()
    assert not boot.env.exists()
    assert list(boot.builds.iterdir()) == []


def test_ensure_turns_a_failed_build_into_one_error_with_a_fix(tmp_path, monkeypatch):
    monkeypatch.setattr(hook_python, "missing_modules", lambda modules=(): ["yaml"])
    steps = FakeSteps(fail=True)
    boot = bootstrap.Bootstrap(tmp_path, create=steps.create, chain=steps.chain)
    with pytest.raises(ForgeError) as caught:
        bootstrap.ensure(tmp_path, bootstrap=boot)
    assert "no network" in caught.value.message
    assert caught.value.fix == bootstrap.fix_command(tmp_path)


def test_ensure_never_builds_inside_the_plugin_root(tmp_path, monkeypatch):
    monkeypatch.setattr(hook_python, "missing_modules", lambda modules=(): ["yaml"])
    data = tmp_path / "plugin" / "data"
    with pytest.raises(ForgeError, match="inside the plugin's own directory"):
        bootstrap.ensure(data, tmp_path / "plugin")
    assert not data.exists()


def test_ensure_without_plugin_data_names_the_pip_fix(monkeypatch):
    monkeypatch.setattr(hook_python, "missing_modules", lambda modules=(): ["yaml"])
    with pytest.raises(ForgeError) as caught:
        bootstrap.ensure(None)
    assert caught.value.fix == bootstrap.pip_fallback()


def test_ensure_reports_present_when_the_interpreter_has_everything(tmp_path):
    assert bootstrap.ensure(tmp_path / "data") == "present"
    assert not (tmp_path / "data").exists()


def test_the_manual_retry_command_builds_like_the_hook(tmp_path, monkeypatch, capsys):
    monkeypatch.setattr(hook_python, "missing_modules", lambda modules=(): ["yaml"])
    steps = FakeSteps()
    asked = []
    monkeypatch.setattr(bootstrap.installers, "plan",
                        lambda verbose=False: asked.append(verbose) or steps.chain)
    monkeypatch.setattr(bootstrap, "create_venv", steps.create)
    assert bootstrap.main(["--data", str(tmp_path)]) == 0
    assert capsys.readouterr().out.endswith("Done.\n")
    assert asked == [True]                     # the installer's own output is shown


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


# Real installs with a real uv and a real pip, from an index served on loopback.

STAND_IN_REQUIREMENTS = [f"{dist}=={version}" for dist, version, _ in STAND_INS]


@pytest.fixture(scope="module")
def wheels(tmp_path_factory) -> Path:
    return make_wheelhouse(tmp_path_factory.mktemp("index") / "wheels")


@pytest.fixture
def index(wheels):
    with local_index.serve(wheels) as url:
        yield url


@pytest.fixture(scope="module")
def uv_tools(tmp_path_factory) -> Path:
    """A directory outside every project holding the dev extra's real uv binary."""
    tools = tmp_path_factory.mktemp("tools")
    (tools / "uv").symlink_to(find_uv_bin())
    return tools


@pytest.fixture(scope="module")
def pip_only_python(tmp_path_factory) -> Path:
    """An interpreter with a recent pip but without the hook dependencies."""
    root = tmp_path_factory.mktemp("pip-only")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root / "venv")],
                   check=True)
    python = root / "venv" / "bin" / "python"
    shelf = root / "shelf"
    shelf.mkdir()
    pip_dir = Path(importlib.util.find_spec("pip").origin).parent
    for entry in pip_dir.parent.glob("pip-*.dist-info"):
        (shelf / entry.name).symlink_to(entry)
    (shelf / "pip").symlink_to(pip_dir)
    purelib = subprocess.run([str(python), "-c", "import sysconfig; "
                              "print(sysconfig.get_paths()['purelib'])"],
                             capture_output=True, text=True, check=True).stdout.strip()
    Path(purelib, "pip-only.pth").write_text(f"{shelf}\n")
    has = subprocess.run([str(python), "-c", "import yaml"], capture_output=True)
    assert has.returncode != 0
    return python


def installed_by(env: Path) -> dict[str, str]:
    """Each stand-in distribution in `env` and the installer its dist-info names."""
    site = next((env / "lib").glob("python*/site-packages"))
    named = {info.name.split("-")[0].replace("_", "-"): info for info in site.glob("*.dist-info")}
    return {name: (info / "INSTALLER").read_text().strip()
            for name, info in named.items() if name in STAND_IN_NAMES}


STAND_IN_NAMES = {dist for dist, _, _ in STAND_INS}


def imports_stand_ins(env: Path) -> str:
    done = subprocess.run([str(env / "bin" / "python"), "-c",
                           "import yaml, filelock, jsonschema; print(jsonschema.STAND_IN)"],
                          capture_output=True, text=True, check=True)
    return done.stdout.strip()


def compiled(env: Path) -> bool:
    site = next((env / "lib").glob("python*/site-packages"))
    return any((site / "yaml" / "__pycache__").glob("__init__.*.pyc"))


def start_session(tmp_path: Path, python: Path, path: str, name: str = "data", **extra):
    """SessionStart through the real launcher in a project dir, as the host starts it."""
    project = tmp_path / "project"
    project.mkdir(exist_ok=True)
    data = tmp_path / name
    env = clean_env(FORGE_PYTHON=str(python), CLAUDE_PLUGIN_DATA=str(data),
                    CLAUDE_PLUGIN_ROOT=str(REPO), CLAUDE_PROJECT_DIR=str(project),
                    PATH=path, UV_CACHE_DIR=str(tmp_path / "uv-cache"), **extra)
    done = run_session_start(env, project)
    return done, data / "forge-env"


def test_with_uv_on_path_uv_builds_forge_env_and_later_from_its_cache_offline(
        tmp_path, bare_python, uv_tools, wheels, dead_index):
    with local_index.serve(wheels) as url:
        done, forge_env = start_session(tmp_path, bare_python, f"{uv_tools}:/usr/bin:/bin",
                                        UV_INDEX_URL=url, PIP_INDEX_URL=dead_index)
        assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert installed_by(forge_env) == dict.fromkeys(STAND_IN_NAMES, "uv")
    assert imports_stand_ins(forge_env) == "jsonschema"
    assert compiled(forge_env)                                 # as pip would have left it
    assert not (forge_env / "bin" / "pip").exists()            # no ensurepip: the slow part

    # The index is gone now (its port refuses): uv installs from the cache it filled.
    again, second = start_session(tmp_path, bare_python, f"{uv_tools}:/usr/bin:/bin",
                                  name="data-offline", UV_INDEX_URL=url,
                                  PIP_INDEX_URL=dead_index, PIP_RETRIES="0", PIP_TIMEOUT="5")
    assert (again.returncode, again.stdout, again.stderr) == (0, "", "")
    assert installed_by(second) == dict.fromkeys(STAND_IN_NAMES, "uv")
    assert imports_stand_ins(second) == "jsonschema"


def test_without_uv_the_running_interpreters_pip_builds_forge_env(tmp_path, pip_only_python,
                                                                  index):
    done, forge_env = start_session(tmp_path, pip_only_python, "/usr/bin:/bin",
                                    PIP_INDEX_URL=index)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert installed_by(forge_env) == dict.fromkeys(STAND_IN_NAMES, "pip")
    assert imports_stand_ins(forge_env) == "jsonschema"
    assert compiled(forge_env)
    assert not (forge_env / "bin" / "pip").exists()


def test_when_uv_fails_pip_still_builds_and_nothing_of_uv_is_left(tmp_path, pip_only_python,
                                                                  uv_tools, index, dead_index):
    done, forge_env = start_session(tmp_path, pip_only_python, f"{uv_tools}:/usr/bin:/bin",
                                    UV_INDEX_URL=dead_index, UV_HTTP_RETRIES="0",
                                    PIP_INDEX_URL=index)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert installed_by(forge_env) == dict.fromkeys(STAND_IN_NAMES, "pip")
    assert [p.name for p in forge_env.parent.joinpath("forge-env.d").iterdir()] == [
        forge_env.resolve().name]


def test_without_any_index_uv_and_pip_both_fail_into_one_error_with_a_fix(
        tmp_path, pip_only_python, uv_tools, dead_index):
    done, forge_env = start_session(tmp_path, pip_only_python, f"{uv_tools}:/usr/bin:/bin",
                                    UV_INDEX_URL=dead_index, UV_HTTP_RETRIES="0",
                                    PIP_INDEX_URL=dead_index, PIP_RETRIES="0", PIP_TIMEOUT="5")
    assert done.returncode == 0 and "Traceback" not in done.stdout + done.stderr
    message = json.loads(done.stdout)["systemMessage"]
    assert message.startswith("Error: forge could not install its hook dependencies")
    assert "uv failed: " in message and "uv --offline failed: " in message
    assert "pip failed: " in message and message.count("\nFix: ") == 1
    assert not forge_env.exists()
    assert list(forge_env.parent.joinpath("forge-env.d").iterdir()) == []


def test_a_failing_rebuild_leaves_the_previous_environment_working(tmp_path, uv_tools, index,
                                                                   monkeypatch):
    for key in [key for key in os.environ if key.startswith(("PIP_", "UV_"))]:
        monkeypatch.delenv(key)
    for key, value in {"PIP_CONFIG_FILE": os.devnull, "PIP_INDEX_URL": index,
                       "UV_INDEX_URL": index, "UV_NO_CONFIG": "1",
                       "UV_CACHE_DIR": str(tmp_path / "uv-cache")}.items():
        monkeypatch.setenv(key, value)
    chain = installers.plan(path=str(uv_tools), untrusted=[tmp_path / "project"])
    first = bootstrap.Bootstrap(tmp_path, requirements=STAND_IN_REQUIREMENTS, chain=chain)
    assert first.build() is True
    working = first.env.resolve()

    grown = bootstrap.Bootstrap(tmp_path, chain=chain,
                                requirements=[*STAND_IN_REQUIREMENTS, "forge-no-such-dist"])
    with pytest.raises(bootstrap.BuildFailed) as failed:
        grown.build()
    assert [part.split(" failed: ")[0] for part in str(failed.value).split("; ")] == [
        "uv", "uv --offline", "pip"]
    assert first.env.resolve() == working and bootstrap.is_current(first.env, first.stamp)
    assert imports_stand_ins(first.env) == "jsonschema"
    assert [p.name for p in first.builds.iterdir()] == [first.stamp]


def test_a_uv_planted_in_the_project_never_runs(tmp_path, pip_only_python, index):
    project = tmp_path / "project"
    marker = tmp_path / "planted-uv-ran"
    planted = f"#!/bin/sh\necho \"$0 $*\" >> {marker}\nexit 0\n"
    for place in (project / "uv", project / "bin" / "uv", project / "deep" / "bin" / "uv"):
        place.parent.mkdir(parents=True, exist_ok=True)
        place.write_text(planted)
        place.chmod(0o755)
    decoy = tmp_path / "decoy-bin"                  # outside, but its uv leads back inside
    decoy.mkdir()
    (decoy / "uv").symlink_to(project / "uv")
    path = ":".join([".", "bin", "", "deep/bin", str(project / "bin"), str(decoy),
                     "/usr/bin", "/bin"])
    done, forge_env = start_session(tmp_path, pip_only_python, path, PIP_INDEX_URL=index)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert not marker.exists()
    assert installed_by(forge_env) == dict.fromkeys(STAND_IN_NAMES, "pip")


def test_an_installer_that_exits_0_without_installing_is_not_believed(tmp_path,
                                                                      pip_only_python, index):
    liar = tmp_path / "liar-tools" / "uv"             # trusted place, wrong program
    liar.parent.mkdir()
    liar.write_text("#!/bin/sh\nexit 0\n")
    liar.chmod(0o755)
    done, forge_env = start_session(tmp_path, pip_only_python, f"{liar.parent}:/usr/bin:/bin",
                                    PIP_INDEX_URL=index)
    assert (done.returncode, done.stdout, done.stderr) == (0, "", "")
    assert installed_by(forge_env) == dict.fromkeys(STAND_IN_NAMES, "pip")
    assert imports_stand_ins(forge_env) == "jsonschema"
