"""A regular (non-editable) wheel carries the workflows, skills and hooks, and `forge init`
from that install finds them with no repository around it."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from forge_runtime import distribution
from forge_runtime.resources import PLUGIN_ENTRIES

REPO = Path(__file__).resolve().parents[1]
SOURCES = ["pyproject.toml", "setup.py", "MANIFEST.in", "forge_runtime", *PLUGIN_ENTRIES]


@pytest.fixture(scope="module")
def wheel(tmp_path_factory) -> Path:
    """Build the wheel offline from a copy of the sources (the repository stays untouched)."""
    work = tmp_path_factory.mktemp("wheel")
    source = work / "src"
    source.mkdir()
    for name in SOURCES:
        origin = REPO / name
        if origin.is_dir():
            shutil.copytree(origin, source / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.egg-info"))
        else:
            shutil.copy2(origin, source / name)
    out = work / "dist"
    subprocess.run([sys.executable, "-m", "pip", "wheel", "--no-deps", "--no-build-isolation",
                    "--no-index", "--quiet", "-w", str(out), str(source)],
                   check=True, capture_output=True, timeout=300)
    (built,) = out.glob("forge_goal_runtime-*.whl")
    return built


def test_the_wheel_carries_every_shipped_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = plugin_files(REPO)
    assert shipped
    missing = [name for name in shipped if f"forge_runtime/data/{name}" not in names]
    assert not missing
    assert "forge_runtime/templates/state.md" in names


def plugin_files(root: Path) -> dict[str, bytes]:
    """Every file of the plugin at `root`, forge_runtime aside, by path, with its bytes."""
    found = {}
    for entry in PLUGIN_ENTRIES:
        paths = [root / entry] if (root / entry).is_file() else (root / entry).rglob("*")
        for path in paths:
            if path.is_file() and "__pycache__" not in path.parts:
                found[path.relative_to(root).as_posix()] = path.read_bytes()
    return found


def test_the_build_copies_the_entries_a_plugin_is_assembled_from():
    import ast

    tree = ast.parse((REPO / "setup.py").read_text())
    (listed,) = [ast.literal_eval(node.value) for node in tree.body
                 if isinstance(node, ast.Assign) and node.targets[0].id == "PLUGIN_ENTRIES"]
    assert tuple(listed) == PLUGIN_ENTRIES
    assert (REPO / ".mcp.json").is_file() and ".mcp.json" in PLUGIN_ENTRIES


def test_a_plugin_assembled_from_the_installed_wheel_is_the_repositorys(wheel, tmp_path):
    """The same files, byte for byte, as the repository's plugin: the MCP registration, the
    manifest and the icon included (forge_runtime runs from site-packages there)."""
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                    "--quiet", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "CLAUDE_PROJECT_DIR")}
    env["PYTHONPATH"] = str(target)
    scratch = tmp_path / "scratch"
    scratch.mkdir()
    made = subprocess.run(
        [sys.executable, "-c", "import sys; from pathlib import Path; "
         "from forge_runtime import distribution, resources; "
         "print(resources.host_plugin_dir(Path(sys.argv[1]))); print(distribution.source())",
         str(scratch)], cwd=tmp_path, env=env, capture_output=True, text=True, check=True)
    built, source = made.stdout.split("\n")[:2]
    assembled = plugin_files(Path(built))
    assert set(assembled) == set(plugin_files(REPO))
    assert assembled == plugin_files(REPO)
    assert ".mcp.json" in assembled and ".claude-plugin/plugin.json" in assembled
    # installed from a wheel file, forge reinstalls from that file, never by a public name
    assert source == str(wheel)
    assert distribution.pip_install("python3", reinstall=True).endswith(
        distribution.source())


def test_forge_init_from_the_installed_wheel_finds_its_files(wheel, tmp_path):
    target = tmp_path / "site"
    subprocess.run([sys.executable, "-m", "pip", "install", "--no-deps", "--no-index",
                    "--quiet", "--target", str(target), str(wheel)],
                   check=True, capture_output=True, timeout=300)
    project = tmp_path / "project"
    project.mkdir()
    subprocess.run(["git", "init", "-q", str(project)], check=True)
    env = {key: value for key, value in os.environ.items()
           if key not in ("PYTHONPATH", "CLAUDE_PROJECT_DIR")}
    env["PYTHONPATH"] = str(target)
    where = subprocess.run(
        [sys.executable, "-c", "from forge_runtime import resources; "
                               "print(resources.bundle_root())"],
        cwd=project, env=env, capture_output=True, text=True, check=True)
    assert Path(where.stdout.strip()) == target / "forge_runtime" / "data"
    done = subprocess.run([sys.executable, "-m", "forge_runtime", "init", "--json"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stderr
    actions = {entry["path"]: entry["action"] for entry in json.loads(done.stdout)["files"]}
    assert actions[".forge/workflows/goal.md"] == "installed"
    assert actions[".forge/local/state.md"] == "installed"
    assert ((project / ".forge/workflows/goal.md").read_bytes()
            == (REPO / "workflows/goal.md").read_bytes())
