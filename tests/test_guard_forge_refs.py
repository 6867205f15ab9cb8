"""The agent's Bash never moves forge's refs on a remote (guard/shell/git_refs.py).

Every command of `guard_corpus/forge_refs.yaml` goes to the guard's decision as the hook
makes it. Each hostile one must be refused, and is then run for real without forge in a
scratch clone whose remote holds forge's refs, where it must really change them (the
remote's refs/forge/*, the clone's refs named refs/forge, or a remote's push config): a
corpus entry that changes nothing would test nothing. Each harmless one must be let through
and, run for real, leave the remote's refs/forge/* as they were.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

import pytest
import yaml
from guard_support import event, make_project

from forge_runtime.guard import decide

CORPUS = yaml.safe_load((Path(__file__).parent / "guard_corpus" / "forge_refs.yaml")
                        .read_text())
HOSTILE = [command for group in CORPUS["hostile"].values() for command in group]
IDENTITY = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
            "GIT_COMMITTER_EMAIL": "t@t"}


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True, env={**os.environ, **IDENTITY}).stdout


@pytest.fixture(scope="module")
def template(tmp_path_factory):
    """`shared.git` holding refs/forge/goals/x and refs/forge/claims/PRD-001 at an ancestor of
    main (so a plain push there fast-forwards), and `proj`, a forge project pushing to it
    with branches main, feature and forge-notes and a local refs/forge/goals/x."""
    base = tmp_path_factory.mktemp("refs")
    _git("init", "-q", "--bare", "-b", "main", str(base / "shared.git"), cwd=base)
    project = make_project(base / "proj")
    _git("checkout", "-qb", "main", cwd=project)
    _git("add", "src/app.py", cwd=project)
    _git("commit", "-qm", "first", cwd=project)
    _git("branch", "feature", cwd=project)
    _git("branch", "forge-notes", cwd=project)
    _git("remote", "add", "origin", "../shared.git", cwd=project)
    ledger = _git("rev-parse", "HEAD", cwd=project).strip()  # an ancestor of main's head
    (project / "src" / "app.py").write_text("print('second')\n")
    _git("commit", "-qam", "second", cwd=project)
    _git("push", "-q", "origin", "main", "feature", "forge-notes",
         f"{ledger}:refs/forge/goals/x", f"{ledger}:refs/forge/claims/PRD-001", cwd=project)
    _git("fetch", "-q", "origin", cwd=project)
    _git("update-ref", "refs/forge/goals/x", ledger, cwd=project)
    _git("branch", "-q", "--set-upstream-to=origin/main", "main", cwd=project)
    (base / "home").mkdir()
    return base


def _scratch(template: Path, tmp_path: Path) -> Path:
    shutil.copytree(template, tmp_path / "w", symlinks=True)
    return tmp_path / "w"


def _ask(base: Path, command: str):
    return decide.decide(event("Bash", {"command": command}, base / "proj"),
                         env={"HOME": str(base / "home"), "PATH": os.environ["PATH"]})


def _forge_state(base: Path) -> tuple:
    """What a command could change: the remote's refs/forge/*, the clone's refs that name
    refs/forge, and every remote push or mirror setting in the clone's and user's config."""
    remote = _git("for-each-ref", "--format=%(refname) %(objectname)", "refs/forge",
                  cwd=base / "shared.git")
    local = [line for line in _git("for-each-ref", "--format=%(refname) %(objectname) "
                                   "%(symref)", cwd=base / "proj").splitlines()
             if "refs/forge" in line]
    config = subprocess.run(["git", "config", "--get-regexp", r"^remote\..*\.(push|mirror)$"],
                            cwd=base / "proj", capture_output=True, text=True,
                            env={**os.environ, "HOME": str(base / "home")}).stdout
    return remote, local, config


def _run(base: Path, command: str) -> None:
    subprocess.run(["bash", "-c", command], cwd=base / "proj", capture_output=True,
                   timeout=60, env={"PATH": os.environ["PATH"], "HOME": str(base / "home"),
                                    **IDENTITY})


@pytest.mark.parametrize("command", HOSTILE)
def test_every_way_to_move_forge_refs_is_refused_and_really_would(template, tmp_path, command):
    base = _scratch(template, tmp_path)
    assert _ask(base, command) is not None, f"let through: {command}"
    before = _forge_state(base)
    _run(base, command)
    assert _forge_state(base) != before, f"changes nothing when run: {command}"


@pytest.mark.parametrize("command", CORPUS["harmless"])
def test_ordinary_git_is_let_through_and_leaves_forge_refs_alone(template, tmp_path, command):
    base = _scratch(template, tmp_path)
    assert _ask(base, command) is None, f"refused: {command}"
    before = _forge_state(base)[0]
    _run(base, command)
    assert _forge_state(base)[0] == before
