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

from forge_runtime.resources import BUNDLED_DIRS

REPO = Path(__file__).resolve().parents[1]
SOURCES = ["pyproject.toml", "setup.py", "MANIFEST.in", "README.md", "LICENSE",
           "forge_runtime", *BUNDLED_DIRS]


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
    (built,) = out.glob("forge_runtime-*.whl")
    return built


def test_the_wheel_carries_every_shipped_file(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    shipped = [path.relative_to(REPO).as_posix() for top in BUNDLED_DIRS
               for path in (REPO / top).rglob("*")
               if path.is_file() and "__pycache__" not in path.parts]
    assert shipped
    missing = [name for name in shipped if f"forge_runtime/data/{name}" not in names]
    assert not missing
    assert "forge_runtime/templates/state.md" in names


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
