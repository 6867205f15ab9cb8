"""Where a project's forge files live, found without spawning git.

Hooks call these on every event, so they read `.git` by hand instead of running
`git rev-parse` (a subprocess costs more than the whole hook budget).

Layout:
    <root>/.forge/                     installed workflows and skills (`forge init`)
    <root>/.forge/local/state.md       the agent's working copy of the goal (git-ignored)
    <git common dir>/forge-goals/      the goal ledger, shared by every worktree
    <root>/.forge/local/goals/         the ledger's fallback when the project is not a git repo
"""

from __future__ import annotations

import os
from collections import namedtuple
from pathlib import Path

FORGE_DIR = ".forge"
LEDGER_DIR_NAME = "forge-goals"


class Project(namedtuple("_ProjectDirs", "root git_dir git_common_dir")):
    """A project root and, when it is a git work tree, its git directories (or None).

    A named tuple rather than a dataclass: `dataclasses` pulls in `inspect`, about 5 ms
    that every hook process would pay before doing anything.
    """

    __slots__ = ()

    @property
    def forge_dir(self) -> Path:
        return self.root / FORGE_DIR

    @property
    def local_dir(self) -> Path:
        return self.forge_dir / "local"

    @property
    def state_path(self) -> Path:
        return self.local_dir / "state.md"

    @property
    def ledger_root(self) -> Path:
        """Where goal ledgers live: one place for all worktrees of a repository."""
        if self.git_common_dir is not None:
            return self.git_common_dir / LEDGER_DIR_NAME
        return self.local_dir / "goals"

    @property
    def is_git(self) -> bool:
        return self.git_common_dir is not None


def _read_gitdir_file(dot_git: Path) -> Path | None:
    """A worktree's `.git` is a file `gitdir: <path>`; return that path."""
    try:
        text = dot_git.read_text(encoding="utf-8").strip()
    except OSError:
        return None
    if not text.startswith("gitdir:"):
        return None
    target = Path(text[len("gitdir:"):].strip())
    return target if target.is_absolute() else (dot_git.parent / target).resolve()


def _common_dir(git_dir: Path) -> Path:
    """A linked worktree's git dir names the shared one in its `commondir` file."""
    try:
        common = (git_dir / "commondir").read_text(encoding="utf-8").strip()
    except OSError:
        return git_dir
    path = Path(common)
    return path if path.is_absolute() else (git_dir / path).resolve()


def find_project(start: str | os.PathLike | None = None) -> Project:
    """The project containing `start` (default: the host's project dir, else the cwd).

    The root is the nearest ancestor holding `.git`; outside git, the nearest one holding
    `.forge/` (so a session started in a subdirectory shares the project's ledger and
    budget instead of starting its own); with neither, `start` itself.
    """
    if start is None:
        start = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    here = Path(start).resolve()
    lineage = (here, *here.parents)
    for candidate in lineage:
        dot_git = candidate / ".git"
        if dot_git.is_dir():
            return Project(candidate, dot_git, _common_dir(dot_git))
        if dot_git.is_file():
            git_dir = _read_gitdir_file(dot_git)
            if git_dir is not None and git_dir.is_dir():
                return Project(candidate, git_dir, _common_dir(git_dir))
    for candidate in lineage:
        if (candidate / FORGE_DIR).is_dir():
            return Project(candidate, None, None)
    return Project(here, None, None)
