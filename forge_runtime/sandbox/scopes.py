"""The settings files Claude Code reads, and the one `forge sandbox enable --scope` writes.

Precedence, lowest first (the host's documented order): user, project, project-local,
managed. `--settings` on the host's command line sits between local and managed; it is
a file forge cannot see, so a sandbox turned on only there reads as off here (the host's
own `claude sandbox status` misses it too).
"""

from __future__ import annotations

import os

from forge_runtime import fastjson, safeio
from forge_runtime.errors import ForgeError
from forge_runtime.project import Project
from forge_runtime.protected import paths

PROJECT, USER, MANAGED = "project", "user", "managed"
SCOPES = (PROJECT, USER, MANAGED)
LOCAL = "local"
MANAGED_DIR = paths.MANAGED_DIR
MANAGED_DROP_IN = "50-forge.json"


def home_dir() -> str:
    return os.environ.get("HOME") or os.path.expanduser("~")


def home():
    """The home directory as a `pathlib.Path` (the `/goal` path uses `home_dir()`)."""
    from pathlib import Path

    return Path(home_dir())


def settings_path(scope: str, project: Project):
    """The file `forge sandbox enable --scope <scope>` merges into, as a `pathlib.Path`."""
    from pathlib import Path

    if scope == PROJECT:
        return Path(project.root, ".claude", "settings.json")
    if scope == USER:
        return home() / ".claude" / "settings.json"
    if scope == MANAGED:
        return Path(MANAGED_DIR, "managed-settings.d", MANAGED_DROP_IN)
    raise ValueError(f"unknown scope {scope!r}")


def files_in_force(project: Project) -> list[tuple[str, str]]:
    """Every settings file the host reads for `project`, lowest precedence first (plain
    strings: a person's `/goal` reads these, and pathlib costs it a bare start)."""
    found = [(USER, os.path.join(home_dir(), ".claude", "settings.json")),
             (PROJECT, os.path.join(project.root, ".claude", "settings.json")),
             (LOCAL, os.path.join(project.root, ".claude", "settings.local.json")),
             (MANAGED, os.path.join(MANAGED_DIR, "managed-settings.json"))]
    drop_ins = os.path.join(MANAGED_DIR, "managed-settings.d")
    try:  # every `*.json` there, in name order (as a glob of it finds them)
        names = sorted(name for name in os.listdir(drop_ins) if name.endswith(".json"))
    except OSError:
        names = []
    return found + [(MANAGED, os.path.join(drop_ins, name)) for name in names]


def read(path: str | os.PathLike) -> dict | None:
    """The settings object in `path`; None when the file does not exist."""
    try:
        with safeio.reader(path, encoding="utf-8", follow_links=True) as handle:
            text = handle.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise broken(path, f"cannot be read ({exc.__class__.__name__})") from None
    try:
        settings = fastjson.loads(text)
    except ValueError:  # json itself decides, and its message says where the file breaks
        import json

        try:
            settings = json.loads(text)
        except ValueError as exc:
            raise broken(path, f"is not valid JSON ({exc})") from None
    if not isinstance(settings, dict):
        raise broken(path, f"holds a JSON {type(settings).__name__}, not an object")
    return settings


def broken(path: str | os.PathLike, problem: str) -> ForgeError:
    return ForgeError(f"settings file {path} {problem}; forge left it untouched",
                      f"python3 -m json.tool {path}",
                      rationale="shows where the file is broken; repair it, then run the "
                                "forge command again")
