"""Which host session is bound to which goal, and `/goal` prompts awaiting confirmation.

    <ledger_root>/sessions/<session id>.json          binding: nonce, repository, the
                                                       transcript, its reader, the offset
                                                       read to, last turn seen
    <ledger_root>/sessions/<session id>.pending.json  a `/goal` prompt seen at
                                                       UserPromptSubmit, not yet confirmed
    <ledger_root>/sessions/<session id>.midturn.json  where PreToolUse's token count of
                                                       the running turn has read to
                                                       (events/tool_call.py)
    <ledger_root>/sessions/<session id>.first.midturn.json  the same for the first turn
                                                       of a pending `/goal`
    <ledger_root>/sessions/goals/<nonce>/<session id>  an empty file: the session is bound
                                                       to that goal

Hooks of a session with no goal only ask `involvement()`: two stat calls, a third (the goal
witness's marker, witness.py) when both find nothing, and nothing imported that os does not
bring (not json, re or pathlib: the status line asks it too, and pays for every import).
A binding is never a grant of autonomy on its own: it names a goal whose ledger is checked
on every event, and a pending file is only a reminder to look at the transcript.
"""

import os

from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.goal.store import layout

BOUND, PENDING, WITNESSED = "bound", "pending", "witnessed"
# the cursor of a first turn no Stop has confirmed (events/tool_call.py)
FIRST_TURN_CURSOR = "first"


def _safe_id(session_id: str) -> bool:
    """1 to 128 ASCII letters, digits, `-` and `_`: a file name of its own, nothing more."""
    return 0 < len(session_id) <= 128 and session_id.isascii() and \
        session_id.replace("-", "a").replace("_", "a").isalnum()


def _paths(ledger_root: str | os.PathLike, session_id: str) -> tuple[str, str] | None:
    if not _safe_id(session_id):
        return None
    base = layout.session_base(ledger_root, session_id)
    return base + layout.BINDING_SUFFIX, base + layout.PENDING_SUFFIX


def session_file(ledger_root: str | os.PathLike, session_id: str, suffix: str) -> str | None:
    """`<ledger root>/sessions/<id><suffix>`: another file of a session's own (goal/budget/plan.py's
    readings); None for an id that could not name one."""
    if not _safe_id(session_id):
        return None
    return layout.session_base(ledger_root, session_id) + suffix


def project_for(event: dict):
    """The `Project` a hook event belongs to: the host's project dir, else the event's cwd
    (of plain strings: the goal path never imports pathlib, project.py)."""
    from forge_runtime.project import locate_project

    return locate_project(os.environ.get("CLAUDE_PROJECT_DIR") or event.get("cwd") or None)


def event_ledger_root(event: dict) -> str:
    """The ledger root of a hook event's project, from `roots`' strings: building a
    `Project` would import pathlib, and with it `re`."""
    from forge_runtime.roots import ledger_root_of

    return ledger_root_of(os.environ.get("CLAUDE_PROJECT_DIR") or event.get("cwd") or None)


def event_involvement(event: dict) -> set[str]:
    """`involvement()` for a hook event: what the hooks ask before importing anything else."""
    return involvement(event_ledger_root(event), event["session_id"])


def involvement(ledger_root: str | os.PathLike, session_id: str) -> set[str]:
    """{"bound"} / {"pending"} / both / {"witnessed"} / empty: the hot-path question, two
    stats, and a third (the witness's marker) only when both found nothing. "witnessed"
    alone means the witness knows the session as bound and the ledger lost its binding."""
    paths = _paths(ledger_root, session_id)
    if paths is None:
        return set()
    found = set()
    if os.path.lexists(paths[0]):
        found.add(BOUND)
    if os.path.lexists(paths[1]):
        found.add(PENDING)
    if not found and os.path.lexists(layout.session_marker(session_id)):
        found.add(WITNESSED)
    return found


def _read(path: str, ledger_root: str | os.PathLike) -> dict | None:
    """A session file, opened as safeio opens the work tree's (the ledger is the agent's to
    write where the kernel layer is off): no link below the ledger root, no FIFO."""
    from forge_runtime import fastjson, safeio

    try:
        data = fastjson.loads(safeio.read_bytes(path, ledger_root))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        data = None
    if not isinstance(data, dict):
        from forge_runtime.goal.store.ledger import tampered

        raise tampered(f"session file {os.path.basename(path)} is not forge's")
    return data


def _write(path: str, data: dict, ledger_root: str | os.PathLike) -> None:
    from forge_runtime import fastjson, safeio

    safeio.replace(path, fastjson.dumps(data).encode("utf-8"), ledger_root, durable=False,
                   create_dirs=True)


def bound_sessions(ledger_root: str | os.PathLike, nonce: str) -> dict[str, dict]:
    """Every session bound to goal `nonce` ({session id: binding}): the goal's index of its
    sessions (`write_binding` keeps it), each binding read and checked to name the goal. A
    binding that is not forge's is left to its own session's next event (which refuses
    it), not read here."""
    from forge_runtime.goal.store.ledger import TAMPERED

    try:
        names = os.listdir(layout.goal_sessions_dir(ledger_root, nonce))
    except (FileNotFoundError, NotADirectoryError):
        return {}
    found = {}
    for session_id in names:
        if not _safe_id(session_id):
            continue
        try:
            binding = read_binding(ledger_root, session_id)
        except ForgeError as exc:
            if exc.code != TAMPERED:
                raise
            continue
        if binding is not None and binding.get("nonce") == nonce:
            found[session_id] = binding
    return found


def read_binding(ledger_root: str | os.PathLike, session_id: str) -> dict | None:
    paths = _paths(ledger_root, session_id)
    return _read(paths[0], ledger_root) if paths else None


def _paths_to_write(ledger_root: str | os.PathLike, session_id: str) -> tuple[str, str]:
    """`_paths()`, refusing an id that could not name a file of its own."""
    paths = _paths(ledger_root, session_id)
    if paths is None:
        raise ForgeError(f"session id {session_id!r} is not a host session id",
                         "forge doctor", exit_code=EXIT_REFUSED)
    return paths


def write_binding(ledger_root: str | os.PathLike, session_id: str, binding: dict) -> None:
    """Write the session's binding, and its entry in its goal's index (one lstat once it
    is there)."""
    _write(_paths_to_write(ledger_root, session_id)[0], binding, ledger_root)
    nonce = binding.get("nonce")
    if isinstance(nonce, str) and len(nonce) == 32 and nonce.isalnum():
        marker = os.path.join(layout.goal_sessions_dir(ledger_root, nonce), session_id)
        if not os.path.lexists(marker):
            from forge_runtime import safeio

            safeio.replace(marker, b"", ledger_root, durable=False, create_dirs=True)


def _cursor_path(paths: tuple[str, str], kind: str | None) -> str:
    return paths[0][:-len(layout.BINDING_SUFFIX)] + (f".{kind}" if kind else "") + \
        layout.CURSOR_SUFFIX


def read_cursor(ledger_root: str | os.PathLike, session_id: str,
                kind: str | None = None) -> dict | None:
    """The mid-turn token count's cursor (`kind`: the first turn's, before a binding), or
    None (missing or unreadable: start again)."""
    paths = _paths(ledger_root, session_id)
    if paths is None:
        return None
    from forge_runtime import fastjson, safeio

    try:
        cursor = fastjson.loads(safeio.read_bytes(_cursor_path(paths, kind), ledger_root))
    except (OSError, ValueError):
        return None
    return cursor if isinstance(cursor, dict) else None


def write_cursor(ledger_root: str | os.PathLike, session_id: str, cursor: dict,
                 kind: str | None = None) -> None:
    _write(_cursor_path(_paths_to_write(ledger_root, session_id), kind), cursor, ledger_root)


def read_pending(ledger_root: str | os.PathLike, session_id: str) -> dict | None:
    paths = _paths(ledger_root, session_id)
    return _read(paths[1], ledger_root) if paths else None


def write_pending(ledger_root: str | os.PathLike, session_id: str, pending: dict) -> None:
    _write(_paths_to_write(ledger_root, session_id)[1], pending, ledger_root)


def drop_pending(ledger_root: str | os.PathLike, session_id: str) -> None:
    """Forget a pending `/goal` once the transcript has confirmed or refuted it, and where
    its first turn's token count had read to (events/tool_call.py)."""
    paths = _paths(ledger_root, session_id)
    if paths:
        for path in (paths[1], _cursor_path(paths, FIRST_TURN_CURSOR)):
            try:  # noqa: SIM105 (`contextlib` costs the confirming Stop a few ms to import)
                os.unlink(path)
            except FileNotFoundError:
                pass
