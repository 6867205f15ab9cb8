"""A goal's gates record, read back only as forge wrote it.

The record (`<ledger root>/gates/<nonce>.json`, gates/goal.py) holds what forge's own run
of the recorded gates found, the `met` forge holds and the turn it last continued at: what
makes a goal "verified" and what keeps forge from continuing a Stop it did not charge. The
ledger's own records are hash-chained and witnessed; this file is rewritten at every Stop,
so the goal witness (goal/witness.py, outside the work tree) keeps the digests of forge's
last two writes of it instead, and a read that finds other bytes (edited, replaced,
deleted, not JSON) fails closed with FORGE_GOAL_LEDGER_TAMPERED. In a sandboxed posture the
kernel keeps the agent off the file already; unsandboxed, a script the guard cannot read
reaches it (docs/guard.md), and this is what catches that write.

The witness takes the new digest before the record is replaced and keeps the one before, so
a hook killed between the two writes leaves a record the next read accepts: the one before,
only while the record is older than the witness (a copy of it put back later, to undo what
forge noted since, is not); a read that races another session's write looks once more. As
with the ledger, deleting the witness too is what the guard and the kernel stand against: a
record with no witnessed digest (written before forge kept one) is adopted as it is and
witnessed at its next write.
"""

from __future__ import annotations

import os
import time

from forge_runtime import fastjson
from forge_runtime.digest import sha256_hex

RETRY_SECONDS = 0.05
RESET_FIX = "forge goal verify-gates"


def read(project, nonce: str, path: str) -> dict:
    """The record at `path` as forge last wrote it ({} before its first write)."""
    witness = _witness(project)
    for attempt in (1, 2):
        body, changed_ns = _bytes(path)
        seen = witness.gates_record(nonce)
        witnessed_ns = _changed_ns(witness.gates_record_path(nonce))
        problem = _problem(body, seen, witnessed_ns >= changed_ns)
        if problem is None:
            return _parsed(body) or {}
        if attempt == 1:
            time.sleep(RETRY_SECONDS)  # another session's write between its two files
    raise tampered(nonce, problem)


def write(project, nonce: str, path: str, record: dict) -> None:
    """Replace the record, its digest first noted in the witness."""
    from forge_runtime.gates.files import encode, write_bytes

    witness = _witness(project)
    before = witness.gates_record(nonce) or {}
    body = encode(record)
    witness.note_gates_record(nonce, {"sha256": sha256_hex(body),
                                      "previous": before.get("sha256")})
    write_bytes(path, body)


def tampered(nonce: str, problem: str):
    from forge_runtime.goal.ledger import tampered as ledger_tampered

    return ledger_tampered(f"goal {nonce}'s gates record {problem}, so what forge's own run "
                           "of its final gates found cannot be trusted", RESET_FIX)


def _witness(project):
    from forge_runtime.goal.witness import Witness

    return Witness(project)


def _bytes(path: str) -> tuple[bytes | None, int]:
    """The record's bytes and change time (ctime: only the kernel sets it), or None."""
    try:
        with open(path, "rb") as handle:
            return handle.read(), os.fstat(handle.fileno()).st_ctime_ns
    except FileNotFoundError:
        return None, 0


def _changed_ns(path: str) -> int:
    try:
        return os.stat(path).st_ctime_ns
    except OSError:
        return 0


def _problem(body: bytes | None, seen: dict | None, older_than_witness: bool) -> str | None:
    """Why `body` is not the record forge last wrote, or None. The digest before the last
    counts only while the record is `older_than_witness` (a hook killed between them)."""
    if seen is None:  # never witnessed: adopted, if it is a record at all
        return None if body is None or isinstance(_parsed(body, None), dict) else \
            "is not forge's"
    if body is None:
        return "is missing (forge wrote it, the witness says)"
    digest = sha256_hex(body)
    if digest == seen.get("sha256") or (digest == seen.get("previous")
                                        and older_than_witness):
        return None
    return "is not the one forge last wrote (the witness holds another digest)"


def _parsed(body: bytes | None, default: dict | None = None) -> dict | None:
    if body is None:
        return {}
    try:
        data = fastjson.loads(body)
    except ValueError:
        return default
    return data if isinstance(data, dict) else default


def reset(project, nonce: str, path: str) -> str | None:
    """For a person's `forge goal verify-gates`: when the record is not forge's, replace it
    with an empty one (nothing of it is trusted) and say why; None when it is forge's."""
    from forge_runtime.errors import ForgeError

    try:
        read(project, nonce, path)
        return None
    except ForgeError as exc:
        write(project, nonce, path, {})
        return exc.message
