"""What says a goal's gates record is the one forge wrote: its digest in the goal witness.

The record (`<ledger root>/gates/<nonce>.json`, read and written by gates/files.py) holds
what forge's own run of the recorded gates found, the `met` forge holds and the turn it
last continued at: what makes a goal "verified" and what keeps forge from continuing a Stop
it did not charge. The ledger's own records are hash-chained and witnessed; this file is
rewritten at every Stop, so the goal witness (goal/sync/witness.py, outside the work tree) keeps
the digests of forge's last two writes of it instead, and a read that finds other bytes
(edited, replaced, deleted, not JSON) fails closed with FORGE_GOAL_LEDGER_TAMPERED. In a
sandboxed posture the kernel keeps the agent off the file already; unsandboxed, a script
the guard cannot read reaches it (docs/guard.md), and this is what catches that write.

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

from forge_runtime import fastjson
from forge_runtime.digest import sha256_hex

RETRY_SECONDS = 0.05  # a read that races another session's two writes looks once more
RESET_FIX = "forge goal verify-gates"


def note(project, nonce: str, body: bytes) -> None:
    """Before forge replaces the record with `body`: its digest, and the one before."""
    witness = _witness(project)
    before = witness.gates_record(nonce) or {}
    witness.note_gates_record(nonce, {"sha256": sha256_hex(body),
                                      "previous": before.get("sha256")})


def problem(project, nonce: str, body: bytes | None, changed_ns: int) -> str | None:
    """Why the record's `body` (None: no file; `changed_ns`: its ctime, which only the
    kernel sets) is not what forge last wrote, or None. The digest before the last counts
    only while the record is older than the witness (a hook killed between the two)."""
    witness = _witness(project)
    seen = witness.gates_record(nonce)
    if seen is None:  # never witnessed: adopted, if it is a record at all
        return None if body is None or isinstance(parsed(body), dict) else "is not forge's"
    if body is None:
        return "is missing (forge wrote it, the witness says)"
    digest = sha256_hex(body)
    if digest == seen.get("sha256") or (
            digest == seen.get("previous")
            and _changed_ns(witness.gates_record_path(nonce)) >= changed_ns):
        return None
    return "is not the one forge last wrote (the witness holds another digest)"


def parsed(body: bytes | None) -> dict | None:
    """The record `body` holds ({} for none), or None when it is not a JSON object."""
    if body is None:
        return {}
    try:
        data = fastjson.loads(body)
    except ValueError:
        return None
    return data if isinstance(data, dict) else None


def tampered(nonce: str, why: str):
    from forge_runtime.goal.store.ledger import tampered as ledger_tampered

    return ledger_tampered(f"goal {nonce}'s gates record {why}, so what forge's own run "
                           "of its final gates found cannot be trusted", RESET_FIX)


class CacheWitness:
    """The same for forge's stat cache of goal `nonce` (confirm.py): a cache whose bytes are
    not forge's last write is not read, only rebuilt (boundary.Hasher)."""

    def __init__(self, project, nonce: str) -> None:
        self.witness, self.name = _witness(project), f"{nonce}.stat-cache"

    def trusts(self, body: bytes) -> bool:
        seen = self.witness.gates_record(self.name) or {}
        return sha256_hex(body) == seen.get("sha256")

    def note(self, body: bytes) -> None:
        self.witness.note_gates_record(self.name, {"sha256": sha256_hex(body)})


def _witness(project):
    from forge_runtime.goal.sync.witness import Witness

    return Witness(project)


def _changed_ns(path: str) -> int:
    try:
        return os.stat(path).st_ctime_ns
    except OSError:
        return 0
