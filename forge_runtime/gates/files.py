"""Small JSON files under `.forge/local/gates/`, written so a crash leaves old or new."""

from __future__ import annotations

import os

from forge_runtime import fastjson


def encode(data: object) -> bytes:
    """The bytes `write_json` writes for `data` (a witness keeps their digest)."""
    return fastjson.dumps(data, separators=(",", ":")).encode("utf-8")


def write_json(path: str | os.PathLike, data: object) -> None:
    write_bytes(path, encode(data))


def write_bytes(path: str | os.PathLike, body: bytes) -> None:
    """Write through a new temporary file, never an existing one, nor through a linked
    directory below the project root: forge's hooks write here unsandboxed (safeio.py)."""
    from forge_runtime import safeio
    from forge_runtime.roots import root_of_forge_path

    safeio.replace(path, body, root_of_forge_path(path), durable=False, create_dirs=True)


def read_json(path: str | os.PathLike) -> object | None:
    """The file's JSON, or None when it is missing or unreadable (a cache rebuilt, a receipt
    never written)."""
    from forge_runtime import safeio

    try:
        return fastjson.loads(safeio.read_bytes(path, _forge_root(path)))
    except (OSError, ValueError):
        return None


def goal_record_path(project, nonce: str):
    """The gates record of goal `nonce`: what forge's own runs found (confirm.py) and what
    the hooks told of them (goal.py), beside the goal's ledger."""
    from forge_runtime.goal.store.layout import GATES_DIR
    from forge_runtime.project import join

    return join(project.ledger_root, GATES_DIR, f"{nonce}.json")


def read_record(project, nonce: str) -> dict:
    """The goal's gates record as forge last wrote it; FORGE_GOAL_LEDGER_TAMPERED when it
    is not (witnessed.py)."""
    import time

    from forge_runtime.gates import witnessed

    for attempt in (1, 2):
        body, changed_ns = _bytes(goal_record_path(project, nonce))
        why = witnessed.problem(project, nonce, body, changed_ns)
        if why is None:
            return witnessed.parsed(body) or {}
        if attempt == 1:
            time.sleep(witnessed.RETRY_SECONDS)
    raise witnessed.tampered(nonce, why)


def write_record(project, nonce: str, record: dict) -> None:
    """Replace the record, its digest noted in the goal witness first (witnessed.py)."""
    from forge_runtime.gates import witnessed

    body = encode(record)
    witnessed.note(project, nonce, body)
    write_bytes(goal_record_path(project, nonce), body)


def reset_record(project, nonce: str) -> str | None:
    """For a person's `forge goal verify-gates`: a record that is not forge's is replaced by
    an empty one (nothing of it is trusted); returns why, or None when it was forge's."""
    from forge_runtime.errors import ForgeError

    try:
        read_record(project, nonce)
        return None
    except ForgeError as exc:
        write_record(project, nonce, {})
        return exc.message


def _bytes(path) -> tuple[bytes | None, int]:
    """A file's bytes and its ctime, or (None, 0) when there is none."""
    from forge_runtime import safeio

    try:
        fd = safeio.open_regular(path, _forge_root(path))
    except FileNotFoundError:
        return None, 0
    with os.fdopen(fd, "rb") as handle:
        return handle.read(), os.fstat(handle.fileno()).st_ctime_ns


def _forge_root(path) -> str | None:
    from forge_runtime.roots import root_of_forge_path

    return root_of_forge_path(path)
