"""Rule 9: before a goal may run, check that forge can keep every promise it makes.

A goal runs only when forge's own hooks are the ones the host fires, the dependencies that
verification needs import, the ledger directory is writable and lockable, the repository's
ledger location resolves, and the goal witness's directory is writable. Any failure is
`BLOCKED: <what>` with a `Fix:`, and no activation: forge never runs a goal with fewer
guarantees than the contract promises.
"""

from __future__ import annotations

import json
import os
from pathlib import Path

from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.project import Project

_HOOK_EVENTS = ("UserPromptSubmit", "Stop")


def blocked(what: str, fix: str) -> ForgeError:
    return ForgeError(f"BLOCKED: {what}", fix, exit_code=EXIT_REFUSED)


def _check_hooks(plugin_root: str) -> None:
    """The plugin the host loaded routes UserPromptSubmit and Stop to forge's launcher."""
    path = Path(plugin_root) / "hooks" / "hooks.json"
    try:
        config = json.loads(path.read_text(encoding="utf-8"))["hooks"]
    except (OSError, ValueError, KeyError, TypeError):
        raise blocked(f"forge's hooks file {path.name} cannot be read from the loaded plugin",
                      "forge doctor") from None
    for event in _HOOK_EVENTS:
        commands = [hook.get("command", "") for group in config.get(event, [])
                    for hook in group.get("hooks", [])]
        if not any(command.endswith("forge-hook") for command in commands):
            raise blocked(f"the {event} hook is not forge's, so turns would go uncounted",
                          "forge doctor")


def _check_dependencies() -> None:
    """forge's dependencies are installed: found, not imported (importing jsonschema and
    yaml costs a lean interpreter about 115 ms, eight times a bare start); the code that
    uses them imports them when it needs them."""
    from importlib.util import find_spec

    for name in ("jsonschema", "yaml"):
        try:
            found = find_spec(name) is not None
        except (ImportError, ValueError):
            found = False
        if not found:
            raise blocked(f"dependency {name} is not installed", "forge doctor")


def _check_ledger_dir(project: Project) -> None:
    from forge_runtime.goal.lock import locked
    from forge_runtime.goal.records import create_exclusive

    root = project.ledger_root
    if root.is_symlink():
        raise blocked(f"the ledger directory {root.name} is a symlink", "forge goal verify")
    if project.is_git and not project.git_common_dir.is_dir():
        raise blocked("the repository's git directory does not resolve", "forge doctor")
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = root / f".probe-{os.getpid()}"
        create_exclusive(probe, b"")
        os.unlink(probe)
        with locked(root):
            pass
    except OSError as exc:
        raise blocked(f"the ledger directory is not writable and lockable ({exc.strerror})",
                      "forge doctor") from None


def _check_witness_dir() -> None:
    """Every append notes the goal's head in the witness (witness.py): it must be writable."""
    from forge_runtime.goal.records import create_exclusive
    from forge_runtime.goal.witness import witness_root

    root = witness_root()
    try:
        root.mkdir(parents=True, exist_ok=True)
        probe = root / f".probe-{os.getpid()}"
        create_exclusive(probe, b"", durable=False)
        os.unlink(probe)
    except OSError as exc:
        from forge_runtime.goal.storage import describe

        existing = next(parent for parent in (root, *root.parents) if parent.exists())
        what, fix, _ = describe(exc, existing)
        raise blocked(f"forge's goal witness directory {root} cannot be written: {what}",
                      fix) from None


def require(project: Project, plugin_root: str | None = None) -> None:
    """Raise `BLOCKED` unless a goal may run in `project` (hooks checked when in a hook)."""
    if plugin_root:
        _check_hooks(plugin_root)
    _check_dependencies()
    _check_ledger_dir(project)
    _check_witness_dir()
