"""Which `forge` a shell would run, and whether it is this one.

`forge` is also the name of other widely installed tools (Foundry's Solidity toolchain,
Laravel Forge's CLI). Every hint forge prints says `Next: forge ...`, so a foreign `forge`
earlier on PATH would make an agent run the wrong program. The plugin keeps its launcher in
`cli/`, a folder the host gives no meaning (it would append a plugin's `bin/` to the Bash
tool's PATH, after the session's own entries, but claude.ai refuses a plugin with files
there). SessionStart puts `cli/` first on that PATH through the host's per-session
environment file, and `forge doctor` names a foreign `forge` with the fix for a terminal.

Strings and `os` only: SessionStart runs this on every session start.
"""

import os

# A forge of ours, whatever installed it, names its package in its first bytes: the
# plugin's cli/forge launcher runs forge_runtime/entry.py, a console script imports
# forge_runtime.cli.main.
OUR_MARK = b"forge_runtime"
HEAD_BYTES = 4096


# The plugin's folder holding the agent's `forge` launcher.
PLUGIN_CLI_DIR = "cli"


def plugin_cli_dir() -> str | None:
    """The plugin's own `cli/` when forge runs from a plugin tree (or a checkout), else None."""
    root = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    directory = os.path.join(root, PLUGIN_CLI_DIR)
    return directory if os.path.isfile(os.path.join(directory, "forge")) else None


def first_on_path(path: str | None = None) -> str | None:
    """The `forge` a shell with `path` (default: this process's PATH) runs, or None."""
    for entry in (os.environ.get("PATH", "") if path is None else path).split(os.pathsep):
        candidate = os.path.join(entry or ".", "forge")
        if os.path.isfile(candidate) and os.access(candidate, os.X_OK):
            return candidate
    return None


def is_ours(executable: str) -> bool:
    """True when `executable` is a forge of ours (a launcher or console script naming
    forge_runtime), not a program of the same name."""
    try:
        with open(executable, "rb") as stream:
            return OUR_MARK in stream.read(HEAD_BYTES)
    except OSError:
        return False


def foreign_forge(path: str | None = None) -> str | None:
    """The path of a foreign `forge` that a shell with `path` would run before ours."""
    found = first_on_path(path)
    return found if found is not None and not is_ours(found) else None
