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


def join(base, *names):
    """`base` joined with `names`, of `base`'s own kind: a str stays a str (the hooks' goal
    path works on strings and never imports pathlib), a `pathlib.Path` stays a Path for the
    callers that use its methods."""
    if isinstance(base, str):
        return os.path.join(base, *names)
    return base.joinpath(*names)


class Project(record("Project", "root git_dir git_common_dir")):
    """A project root and, when it is a git work tree, its git directories (or None); the
    directories are `pathlib.Path`s (`find_project`), or plain strings (`locate_project`,
    for the hooks); the properties give paths of the same kind.

    A `record` rather than a dataclass or a named tuple: `dataclasses` pulls in `inspect`
    and `collections` costs a lean interpreter about as much as the rest of a hook of a
    session without a goal. `pathlib` is imported when a Project of Paths is built: the
    guard's allow path works from `roots.locate()`'s strings and never builds one, and a
    goal's hooks build theirs of strings.
    """

    __slots__ = ()

    @property
    def forge_dir(self):
        return join(self.root, FORGE_DIR)

    @property
    def local_dir(self):
        return join(self.forge_dir, "local")

    @property
    def state_path(self):
        return join(self.local_dir, "state.md")

    @property
    def ledger_root(self):
        """Where goal ledgers live: one place for all worktrees of a repository."""
        common = None if self.git_common_dir is None else os.fspath(self.git_common_dir)
        found = ledger_root(os.fspath(self.root), common)
        if isinstance(self.root, str):
            return found
        from pathlib import Path

        return Path(found)

    @property
    def is_git(self) -> bool:
        return self.git_common_dir is not None


def find_project(start: str | os.PathLike | None = None) -> Project:
    """The project containing `start` (default: the host's project dir, else the cwd).

    The root is the nearest ancestor holding `.git`; outside git, the nearest one holding
    `.forge/` (so a session started in a subdirectory shares the project's ledger and
    budget instead of starting its own); with neither, `start` itself (roots.py).
    """
    return paths_of(locate_project(start))


def locate_project(start: str | os.PathLike | None = None) -> Project:
    """`find_project` with plain strings for paths, for the hooks: no pathlib import."""
    return Project(*locate(start))


def paths_of(project: Project) -> Project:
    """`project` with `pathlib.Path`s, for code that uses their methods (gates, sandbox)."""
    from pathlib import Path

    def path(value):
        return None if value is None else Path(value)

    return Project(path(project.root), path(project.git_dir), path(project.git_common_dir))
