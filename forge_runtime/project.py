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
from forge_runtime.roots import FORGE_DIR, ledger_root, locate


class Project(record("Project", "root git_dir git_common_dir")):
    """A project root and, when it is a git work tree, its git directories (or None); the
    directories are `pathlib.Path`s.

    A `record` rather than a dataclass or a named tuple: `dataclasses` pulls in `inspect`
    and `collections` costs a lean interpreter about as much as the rest of a hook of a
    session without a goal. `pathlib` is imported when a Project is built: the guard's
    allow path works from `roots.locate()`'s strings and never builds one.
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
        from pathlib import Path

        common = None if self.git_common_dir is None else str(self.git_common_dir)
        return Path(ledger_root(str(self.root), common))

    @property
    def is_git(self) -> bool:
        return self.git_common_dir is not None


def find_project(start: str | os.PathLike | None = None) -> Project:
    """The project containing `start` (default: the host's project dir, else the cwd).

    The root is the nearest ancestor holding `.git`; outside git, the nearest one holding
    `.forge/` (so a session started in a subdirectory shares the project's ledger and
    budget instead of starting its own); with neither, `start` itself (roots.py).
    """
    from pathlib import Path

    root, git_dir, common = locate(start)
    return Project(Path(root), Path(git_dir) if git_dir else None,
                   Path(common) if common else None)
