"""Before a goal may run, check that forge can keep every promise it makes.

A goal runs only when forge's own hooks are the ones the host fires, the dependencies that
verification needs import, the ledger directory is writable and lockable, the repository's
ledger location resolves, and the goal witness's directory is writable. Any failure is
`BLOCKED: <what>` with a `Fix:`, and no activation: forge never runs a goal with fewer
guarantees than the contract promises.
"""

from __future__ import annotations

import os

from forge_runtime import safeio
from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.project import Project

_HOOK_EVENTS = ("UserPromptSubmit", "Stop")


def blocked(what: str, fix: str) -> ForgeError:
    return ForgeError(f"BLOCKED: {what}", fix, exit_code=EXIT_REFUSED)


def _check_hooks(plugin_root: str) -> None:
    """The plugin the host loaded routes UserPromptSubmit and Stop to forge's launcher."""
    from forge_runtime import fastjson

    path = os.path.join(plugin_root, "hooks", "hooks.json")
    try:
        config = fastjson.loads(safeio.read_bytes(path))["hooks"]
    except (OSError, ValueError, KeyError, TypeError):
        raise blocked(f"forge's hooks file {os.path.basename(path)} cannot be read from the "
                      "loaded plugin",
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
    uses them imports them when it needs them. Asked of the import system's finders
    directly (hook_python), as `importlib.util.find_spec` does: `importlib.util` brings
    `contextlib`, `functools` and more to the hook of every `/goal`."""
    from forge_runtime.hook_python import missing_modules

    missing = missing_modules(("jsonschema", "yaml"))
    if missing:
        raise blocked(f"dependency {missing[0]} is not installed", "forge doctor")


def _check_ledger_dir(project: Project) -> None:
    from forge_runtime.goal.store.lock import locked
    from forge_runtime.goal.store.record_file import create_exclusive

    root = project.ledger_root
    if os.path.islink(root):
        raise blocked(f"the ledger directory {os.path.basename(root)} is a symlink",
                      "forge goal verify")
    if project.is_git and not os.path.isdir(project.git_common_dir):
        raise blocked("the repository's git directory does not resolve", "forge doctor")
    try:
        os.makedirs(root, exist_ok=True)
        probe = os.path.join(root, f".probe-{os.getpid()}")
        create_exclusive(probe, b"", durable=False)  # removed at once: no fsync to wait for
        os.unlink(probe)
        with locked(root):
            pass
    except OSError as exc:
        raise blocked(f"the ledger directory is not writable and lockable ({exc.strerror})",
                      "forge doctor") from None


def _check_witness_dir() -> None:
    """Every append notes the goal's head in the witness (witness.py): it must be writable."""
    from forge_runtime.goal.store.record_file import create_exclusive
    from forge_runtime.roots import witness_dir

    root = witness_dir()
    try:
        os.makedirs(root, exist_ok=True)
        probe = os.path.join(root, f".probe-{os.getpid()}")
        create_exclusive(probe, b"", durable=False)
        os.unlink(probe)
    except OSError as exc:
        from forge_runtime.goal.store.unwritable import describe

        existing = root
        while not os.path.exists(existing) and os.path.dirname(existing) != existing:
            existing = os.path.dirname(existing)
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
