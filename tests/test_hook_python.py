"""hook_python: the SessionStart answer when nothing has to be built, the same as bootstrap's,
for a fraction of its imports."""

from __future__ import annotations

import importlib.util
import json
import os
import shlex
import subprocess
import sys
from pathlib import Path

import pytest

from forge_runtime import bootstrap, hook_python

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def bare_python(tmp_path_factory) -> Path:
    """An interpreter without pyyaml, filelock or jsonschema."""
    env = tmp_path_factory.mktemp("bare") / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    return env / "bin" / "python"


def settled_in(python: Path, data_dir: Path | None) -> str:
    code = (f"import sys; sys.path.insert(0, {str(REPO)!r})\n"
            "from forge_runtime import hook_python\n"
            f"print(hook_python.settled({None if data_dir is None else str(data_dir)!r}))")
    done = subprocess.run([str(python), "-I", "-c", code], capture_output=True, text=True,
                          timeout=60, check=True)
    return done.stdout.strip()


def fake_env(data: Path, stamp: str) -> Path:
    """A forge-env as bootstrap leaves it: a stamp beside bin/python."""
    env = data / hook_python.ENV_NAME
    (env / "bin").mkdir(parents=True)
    (env / "bin" / "python").symlink_to(sys.executable)
    (env / hook_python.STAMP_FILE).write_text(stamp + "\n")
    return env


@pytest.mark.parametrize("name", ["os", "sys", "_json", "json", "yaml", "jsonschema",
                                  "forge_runtime", "no_such_module_anywhere", "encodings"])
def test_findable_agrees_with_importlib(name):
    assert hook_python.findable(name) is (importlib.util.find_spec(name) is not None)


def test_an_interpreter_with_the_dependencies_is_the_answer(tmp_path):
    assert hook_python.settled(str(tmp_path / "data")) == sys.executable
    assert hook_python.settled(None) == sys.executable
    assert bootstrap.ensure(tmp_path / "data") == "present"


def test_a_current_forge_env_is_the_answer_for_an_interpreter_without_them(tmp_path, bare_python):
    env = fake_env(tmp_path, hook_python.stamp_of(hook_python.HOOK_REQUIREMENTS))
    assert settled_in(bare_python, tmp_path) == str(env / "bin" / "python")


@pytest.mark.parametrize("stamp", ["0123456789abcdef", ""])
def test_a_stale_or_unstamped_forge_env_leaves_it_to_bootstrap(tmp_path, bare_python, stamp):
    fake_env(tmp_path, stamp)
    assert settled_in(bare_python, tmp_path) == "None"


def test_nothing_to_build_with_nowhere_to_build_leaves_it_to_bootstrap(bare_python):
    assert settled_in(bare_python, None) == "None"


def test_the_stamp_is_bootstraps(tmp_path):
    boot = bootstrap.Bootstrap(tmp_path)
    assert boot.stamp == hook_python.stamp_of(bootstrap.HOOK_REQUIREMENTS)
    assert len(boot.stamp) == 16


def test_session_start_with_nothing_to_build_imports_nothing_heavy(tmp_path):
    """Run without `site`, which would import some of these first."""
    env_file = tmp_path / "claude-env"
    packages = [path for path in sys.path if path.endswith("-packages")]
    code = (f"import sys, io; sys.path[:0] = {[str(REPO), *packages]!r}\n"
            "before = set(sys.modules)\n"
            "from forge_runtime.hooks import dispatch\n"
            "out = io.StringIO()\n"
            "dispatch.run(['SessionStart'], sys.stdin.buffer, out, io.StringIO())\n"
            "print(sorted({'pathlib', 'importlib.util', 'hashlib', 'shlex', 're', 'json',"
            " 'forge_runtime.bootstrap', '__future__'} & (set(sys.modules) - before)))\n"
            "print(out.getvalue())")
    event = {"session_id": "s1", "hook_event_name": "SessionStart", "source": "startup",
             "cwd": str(tmp_path)}
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], input=json.dumps(event),
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "CLAUDE_ENV_FILE": str(env_file),
                               "CLAUDE_PLUGIN_DATA": str(tmp_path / "data")})
    assert done.returncode == 0, done.stderr
    imported, reply = done.stdout.split("\n", 1)
    assert imported == "[]"
    assert reply.strip() == ""
    assert env_file.read_text() == (f"export FORGE_PYTHON={shlex.quote(sys.executable)}\n"
                                    f'export PATH={shlex.quote(str(REPO / "cli"))}:"$PATH"\n')


def test_a_finder_that_fails_on_a_name_counts_as_not_finding_it(monkeypatch):
    class Failing:
        @staticmethod
        def find_spec(name, path):
            raise ImportError(f"cannot look up {name}")

    monkeypatch.setattr(sys, "meta_path", [Failing(), *sys.meta_path])
    assert hook_python.missing_modules(("no_such_module_anywhere", "os")) == [
        "no_such_module_anywhere"]


@pytest.mark.parametrize("flags", [["-I"], ["-I", "-S"]])
def test_an_environment_knows_it_runs_its_hooks_with_or_without_site(tmp_path, flags):
    """The launcher starts hooks without `site`, which is what sets a venv's `sys.prefix`."""
    env = tmp_path / "forge-env"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    code = (f"import sys; sys.path.insert(0, {str(REPO)!r})\n"
            "from forge_runtime.hook_python import running_inside\n"
            f"print(running_inside({str(env)!r}), running_inside({str(tmp_path)!r}))")
    done = subprocess.run([str(env / "bin" / "python"), *flags, "-c", code],
                          capture_output=True, text=True, timeout=60)
    assert done.stdout.split() == ["True", "False"], done.stderr
