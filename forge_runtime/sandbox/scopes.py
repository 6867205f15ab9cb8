"""The settings files Claude Code reads, and the one `forge sandbox enable --scope` writes.

Precedence, lowest first (the host's documented order): user, project, project-local,
managed. `--settings` on the host's command line sits between local and managed; it is
a file forge cannot see, so a sandbox turned on only there reads as off here (the host's
own `claude sandbox status` misses it too).
"""

from __future__ import annotations

import os
from pathlib import Path

from forge_runtime.errors import ForgeError
from forge_runtime.project import Project

PROJECT, USER, MANAGED = "project", "user", "managed"
SCOPES = (PROJECT, USER, MANAGED)
LOCAL = "local"
MANAGED_DIR = Path("/etc/claude-code")
MANAGED_DROP_IN = "50-forge.json"


def home() -> Path:
    return Path(os.environ.get("HOME") or os.path.expanduser("~"))


def settings_path(scope: str, project: Project) -> Path:
    """The file `forge sandbox enable --scope <scope>` merges into."""
    if scope == PROJECT:
        return project.root / ".claude" / "settings.json"
    if scope == USER:
        return home() / ".claude" / "settings.json"
    if scope == MANAGED:
        return MANAGED_DIR / "managed-settings.d" / MANAGED_DROP_IN
    raise ValueError(f"unknown scope {scope!r}")


def files_in_force(project: Project) -> list[tuple[str, Path]]:
    """Every settings file the host reads for `project`, lowest precedence first."""
    found = [(USER, home() / ".claude" / "settings.json"),
             (PROJECT, project.root / ".claude" / "settings.json"),
             (LOCAL, project.root / ".claude" / "settings.local.json"),
             (MANAGED, MANAGED_DIR / "managed-settings.json")]
    drop_ins = MANAGED_DIR / "managed-settings.d"
    try:  # noqa: SIM105 (no `contextlib` for a person's `/goal`, which reads these)
        found += [(MANAGED, path) for path in sorted(drop_ins.glob("*.json"))]
    except OSError:
        pass
    return found


def read(path: Path) -> dict | None:
    """The settings object in `path`; None when the file does not exist."""
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError) as exc:
        raise broken(path, f"cannot be read ({exc.__class__.__name__})") from None
    from forge_runtime import fastjson

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


def broken(path: Path, problem: str) -> ForgeError:
    return ForgeError(f"settings file {path} {problem}; forge left it untouched",
                      f"python3 -m json.tool {path}",
                      rationale="shows where the file is broken; repair it, then run the "
                                "forge command again")
