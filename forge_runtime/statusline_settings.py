"""`forge init --statusline` / `--remove-statusline`: forge's status line in a settings file.

A plugin cannot set the host's `statusLine` (the host reads only `agent` and
`subagentStatusLine` from a plugin's settings), so forge writes it into the settings file
the person chooses: `local` (`.claude/settings.local.json`, the default: a status line is
one person's display, and the command names this machine's interpreter), `project`
(`.claude/settings.json`) or `user` (`~/.claude/settings.json`).

Merging keeps the person's own status line: the one in the chosen file becomes
`--wrap <their command>`, else the one a file of lower precedence shows (the chosen file's
entry would hide it) becomes `--wrap-inherited <their command>`, so their output stays and
forge's part joins it. Running it again only refreshes forge's part; removing puts their
command back into the file (or drops the entry when it was inherited from a lower file,
which then shows again: the flag, not a comparison, says which, so a person's own entry
that happens to equal a lower file's stays theirs). Every other setting is kept, and
a file that cannot be read is left exactly as it was.
"""

from __future__ import annotations

import json
import os
import shlex
import sys
from pathlib import Path

from forge_runtime.errors import ForgeError
from forge_runtime.hook_settings import read_settings
from forge_runtime.initializer import write_atomically

# `-c`, not `-m`: `-m` imports runpy first, about 6 ms of a lean interpreter's start.
ENTRY = "from forge_runtime.statusline import main; main()"
WRAP_FLAG = "--wrap"
INHERITED_FLAG = "--wrap-inherited"
KEY = "statusLine"
SCOPES = ("local", "project", "user")  # highest precedence first, as the host reads them
AGAIN = "forge init --statusline"


def settings_path(scope: str, project_root: Path) -> Path:
    if scope == "local":
        return project_root / ".claude" / "settings.local.json"
    if scope == "project":
        return project_root / ".claude" / "settings.json"
    config = os.environ.get("CLAUDE_CONFIG_DIR")
    return (Path(config) if config else Path.home() / ".claude") / "settings.json"


def _words(command: object) -> list[str]:
    if not isinstance(command, str):
        return []
    try:
        return shlex.split(command)
    except ValueError:
        return []


def is_forge(command: object) -> bool:
    """True for a status-line command forge wrote (with or without a wrapped one)."""
    words = _words(command)
    return any(words[i:i + 2] == ["-c", ENTRY] for i in range(len(words)))


def _wrap(command: object) -> tuple[str, str] | None:
    """(flag, the person's command) inside forge's, or None."""
    words = _words(command)
    if not is_forge(command):
        return None
    for index, word in enumerate(words[:-1]):
        if word in (WRAP_FLAG, INHERITED_FLAG):
            return word, words[index + 1]
    return None


def wrapped(command: object) -> str | None:
    """The person's own command inside forge's, or None."""
    found = _wrap(command)
    return found[1] if found else None


def wraps_inherited(command: object) -> bool:
    """Whether forge's command wraps one it took from a lower settings file."""
    found = _wrap(command)
    return bool(found) and found[0] == INHERITED_FLAG


def forge_command(own: str | None = None, python: str = sys.executable, *,
                  inherited: bool = False) -> str:
    """The shell command the host runs: this interpreter, `-P`, forge's entry point.

    When forge's code is importable only through PYTHONPATH (the plugin's `cli/forge` sets
    it), the command sets it too, so the host's shell finds the same code. Should forge be
    gone one day (uninstalled, a plugin update that moved it), the shell says nothing of
    it and still runs the person's own command.
    """
    flag = INHERITED_FLAG if inherited else WRAP_FLAG
    words = [python, "-P", "-c", ENTRY, *([flag, own] if own else [])]
    command = shlex.join(words) + " 2>/dev/null"
    code_root = str(Path(__file__).resolve().parent.parent)
    if any(os.path.realpath(entry) == code_root
           for entry in os.environ.get("PYTHONPATH", "").split(os.pathsep) if entry):
        command = f"PYTHONPATH={shlex.quote(code_root)} {command}"
    return f"{command} || sh -c {shlex.quote(own)}" if own else command


def _entry(settings: dict, path: Path) -> dict | None:
    entry = settings.get(KEY)
    if entry is not None and not isinstance(entry, dict):
        raise ForgeError(f"{path} has a \"{KEY}\" that is not an object; forge left it "
                         "untouched", f"{shlex.quote(sys.executable)} -m json.tool "
                         f"{shlex.quote(str(path))}", or_=[AGAIN])
    return entry


def _inherited(scope: str, project_root: Path) -> str | None:
    """The status-line command a lower-precedence settings file shows, if not forge's."""
    for lower in SCOPES[SCOPES.index(scope) + 1:]:
        path = settings_path(lower, project_root)
        try:
            entry = _entry(read_settings(path, AGAIN), path)
        except ForgeError:
            continue  # not ours to judge here; the host reports its own settings errors
        if entry and isinstance(entry.get("command"), str):
            command = entry["command"]
            return wrapped(command) if is_forge(command) else command
    return None


def _write(path: Path, settings: dict) -> None:
    write_atomically(path, (json.dumps(settings, indent=2) + "\n").encode("utf-8"))


def install(project_root: Path, scope: str = "local") -> tuple[Path, bool, str | None]:
    """Put forge's status line into the scope's file; (path, changed, the person's kept
    command or None)."""
    path = settings_path(scope, project_root)
    settings = read_settings(path, AGAIN)
    entry = _entry(settings, path) or {}
    command = entry.get("command")
    inherited = False
    if is_forge(command):
        own, inherited = wrapped(command), wraps_inherited(command)
    elif isinstance(command, str) and command.strip():
        own = command
    else:
        own = _inherited(scope, project_root)
        inherited = own is not None
    updated = {**settings, KEY: {**entry, "type": "command",
                                 "command": forge_command(own, inherited=inherited)}}
    if updated == settings:
        return path, False, own
    _write(path, updated)
    return path, True, own


def remove(project_root: Path, scope: str = "local") -> tuple[Path, bool]:
    """Take forge's part out of the scope's file, giving the person's own line back."""
    path = settings_path(scope, project_root)
    settings = read_settings(path, AGAIN)
    entry = _entry(settings, path)
    if not entry or not is_forge(entry.get("command")):
        return path, False
    own = wrapped(entry["command"])
    updated = dict(settings)
    if own is None or wraps_inherited(entry["command"]):
        del updated[KEY]
    else:
        updated[KEY] = {**entry, "command": own}
    _write(path, updated)
    return path, True
