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

from forge_runtime.records import record

FORGE_DIR = ".forge"
LEDGER_DIR_NAME = "forge-goals"


class Project(record("Project", "root git_dir git_common_dir")):
    """A project root and, when it is a git work tree, its git directories (or None); the
    directories are `pathlib.Path`s.

    A `record` rather than a dataclass or a named tuple: `dataclasses` pulls in `inspect`
    and `collections` costs a lean interpreter about as much as the rest of a hook of a
    session without a goal.
    """

    __slots__ = ()

    @property
    def forge_dir(self):
        return self.root / FORGE_DIR

    @property
    def local_dir(self):
        return self.forge_dir / "local"

    @property
    def state_path(self):
        return self.local_dir / "state.md"

    @property
    def ledger_root(self):
        """Where goal ledgers live: one place for all worktrees of a repository."""
        if self.git_common_dir is not None:
            return self.git_common_dir / LEDGER_DIR_NAME
        return self.local_dir / "goals"  # as ledger_root_of()

    @property
    def is_git(self) -> bool:
        return self.git_common_dir is not None


def _read_gitdir_file(dot_git: str) -> str | None:
    """A worktree's `.git` is a file `gitdir: <path>`; return that path."""
    try:
        with open(dot_git, encoding="utf-8") as handle:
            text = handle.read().strip()
    except (OSError, ValueError):
        return None
    if not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:"):].strip()
    return target if os.path.isabs(target) else os.path.realpath(
        os.path.join(os.path.dirname(dot_git), target))


def _common_dir(git_dir: str) -> str:
    """A linked worktree's git dir names the shared one in its `commondir` file."""
    try:
        with open(os.path.join(git_dir, "commondir"), encoding="utf-8") as handle:
            common = handle.read().strip()
    except (OSError, ValueError):
        return git_dir
    return common if os.path.isabs(common) else os.path.realpath(os.path.join(git_dir, common))


def _lineage(here: str):
    """`here` and each of its ancestors, nearest first."""
    while True:
        yield here
        parent = os.path.dirname(here)
        if parent == here:
            return
        here = parent


def locate(start: str | os.PathLike | None = None) -> tuple[str, str | None, str | None]:
    """`find_project()` as plain strings (root, git dir, git common dir), for the hooks' hot
    path: `pathlib` costs a lean interpreter more than a hook of a session without a goal
    does otherwise.

    The root is the nearest ancestor holding `.git`; outside git, the nearest one holding
    `.forge/` (so a session started in a subdirectory shares the project's ledger and
    budget instead of starting its own); with neither, `start` itself.
    """
    if start is None:
        start = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    here = os.path.realpath(os.fspath(start))
    for candidate in _lineage(here):
        dot_git = os.path.join(candidate, ".git")
        if os.path.isdir(dot_git):
            return candidate, dot_git, _common_dir(dot_git)
        if os.path.isfile(dot_git):
            git_dir = _read_gitdir_file(dot_git)
            if git_dir is not None and os.path.isdir(git_dir):
                return candidate, git_dir, _common_dir(git_dir)
    for candidate in _lineage(here):
        if os.path.isdir(os.path.join(candidate, FORGE_DIR)):
            return candidate, None, None
    return here, None, None


def ledger_root_of(root: str, git_common_dir: str | None) -> str:
    """`Project.ledger_root` from `locate()`'s strings."""
    if git_common_dir is not None:
        return os.path.join(git_common_dir, LEDGER_DIR_NAME)
    return os.path.join(root, FORGE_DIR, "local", "goals")


def find_project(start: str | os.PathLike | None = None) -> Project:
    """The project containing `start` (default: the host's project dir, else the cwd): see
    `locate()`."""
    return project_of(locate(start))


def project_of(dirs: tuple[str, str | None, str | None]) -> Project:
    """The Project of `locate()`'s strings."""
    from pathlib import Path

    return Project(*(None if part is None else Path(part) for part in dirs))
