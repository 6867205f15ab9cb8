"""Where a project's directories are, found with os.path alone.

The project root is the nearest ancestor holding `.git` (a directory, or a worktree's
`gitdir:` file), else the nearest holding `.forge/`; the ledger lives in the git common dir
(one for every worktree), else under `.forge/local/goals/`. The common dir is the one the
git directory's own place gives (`<common>/worktrees/<name>` for a linked work tree), never
what a `commondir` file says: that file is one write away from sending forge to another,
empty ledger, so forge keeps its ledger where it is and the goal witness fails closed when
the file disagrees (goal/sync/witness.py). `project.py` builds its
`Project` of `pathlib.Path`s from these; this module imports nothing but `os`, because
pathlib (with the `re` it imports) and `collections` cost a lean interpreter more than its
own start, and the status line of a session without a goal needs only `ledger_root_of` and
`witness_dir` (the goal witness's per-user directory, witness.py). What forge keeps under
those two roots is named in goal/store/layout.py.
"""

import os

from forge_runtime import safeio

FORGE_DIR = ".forge"
LEDGER_DIR_NAME = "forge-goals"


def _read_gitdir_file(dot_git: str) -> str | None:
    """A worktree's `.git` is a file `gitdir: <path>`; return that path."""
    try:
        with safeio.reader(dot_git, encoding="utf-8", follow_links=True) as handle:
            text = handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return None
    if not text.startswith("gitdir:"):
        return None
    target = text[len("gitdir:"):].strip()
    if os.path.isabs(target):
        return target
    return os.path.realpath(os.path.join(os.path.dirname(dot_git), target))


def layout_common_dir(git_dir: str) -> str:
    """The git common dir as `git_dir`'s place gives it: git keeps a linked work tree's git
    dir at `<common>/worktrees/<name>`; any other git dir is its own common dir."""
    parent = os.path.dirname(git_dir)
    if os.path.basename(parent) == "worktrees":
        return os.path.dirname(parent)
    return git_dir


def claimed_common_dir(git_dir: str) -> str:
    """The common dir `git_dir`'s `commondir` file names (what git itself follows), else
    `git_dir`: forge compares it with `layout_common_dir` and never follows it."""
    try:
        with safeio.reader(os.path.join(git_dir, "commondir"), encoding="utf-8",
                           follow_links=True) as handle:
            common = handle.read().strip()
    except (OSError, UnicodeDecodeError):
        return git_dir
    return common if os.path.isabs(common) else os.path.realpath(os.path.join(git_dir, common))


def _lineage(start: str | os.PathLike | None) -> list[str]:
    if start is None:
        start = os.environ.get("CLAUDE_PROJECT_DIR") or os.getcwd()
    here = os.path.realpath(os.fspath(start))
    found = [here]
    while os.path.dirname(found[-1]) != found[-1]:
        found.append(os.path.dirname(found[-1]))
    return found


def locate(start: str | os.PathLike | None = None) -> tuple[str, str | None, str | None]:
    """`find_project` as plain strings (root, git dir, git common dir), with os.path only:
    pathlib imports `re` and more, which a process that only asks "is there a goal here?"
    (the status line) need not pay."""
    lineage = _lineage(start)
    for candidate in lineage:
        dot_git = os.path.join(candidate, ".git")
        if os.path.isdir(dot_git):
            return candidate, dot_git, dot_git
        if os.path.isfile(dot_git):
            git_dir = _read_gitdir_file(dot_git)
            if git_dir is not None and os.path.isdir(git_dir):
                return candidate, git_dir, layout_common_dir(git_dir)
    for candidate in lineage:
        if os.path.isdir(os.path.join(candidate, FORGE_DIR)):
            return candidate, None, None
    return lineage[0], None, None


def root_of_forge_path(path: str | os.PathLike) -> str | None:
    """The project root of a path inside its `.forge/` directory (`<root>/.forge/...`), or
    None: the root below which forge's hooks follow no link (safeio.py)."""
    parts = os.path.abspath(os.fspath(path)).split(os.sep)
    if FORGE_DIR not in parts[:-1]:
        return None
    index = len(parts) - 2 - parts[-2::-1].index(FORGE_DIR)
    return os.sep.join(parts[:index]) or os.sep


def ledger_root_of(start: str | os.PathLike | None = None) -> str:
    """`find_project(start).ledger_root` as a string, without pathlib."""
    root, _, common = locate(start)
    return ledger_root(root, common)


def ledger_root(root: str, common_dir: str | None) -> str:
    """Where goal ledgers live: one place for all worktrees of a repository."""
    if common_dir is not None:
        return os.path.join(common_dir, LEDGER_DIR_NAME)
    return os.path.join(root, FORGE_DIR, "local", "goals")


def witness_dir() -> str:
    """Where forge keeps goal witnesses for this user (outside every work tree)."""
    state = os.environ.get("XDG_STATE_HOME")
    if not state or not os.path.isabs(state):
        state = os.path.join(os.path.expanduser("~"), ".local", "state")
    return os.path.join(state, "forge", "witness")


def config_dir() -> str:
    """forge's folder in this user's configuration (`$XDG_CONFIG_HOME/forge`, by default
    `~/.config/forge`): a person's settings outside every work tree, which the guard keeps
    from the agent (the notification channels, notify/config.py)."""
    config = os.environ.get("XDG_CONFIG_HOME")
    if not config or not os.path.isabs(config):
        config = os.path.join(os.path.expanduser("~"), ".config")
    return os.path.join(config, "forge")
