"""The objective index: which goal each objective is, by its hash.

`<ledger root>/objectives/<sha256 of the objective>` names the goal's nonce, written once
under the activation lock. An activation reads it (activation.py), and so does a clone that
takes in the goal its remote holds (remote.py); neither imports the other for it.
"""

from __future__ import annotations

import os

from forge_runtime.goal.store import layout, record_file
from forge_runtime.goal.store.ledger import Ledger, tampered


def find_nonce(ledger_root: str | os.PathLike, digest: str) -> str | None:
    """The nonce of the goal with this objective hash, or None if there never was one."""
    path = os.path.join(layout.objectives_dir(ledger_root), digest)
    from forge_runtime import safeio

    try:
        if os.path.islink(path):
            raise tampered(f"objective index {digest[:12]} is a symlink")
        nonce = safeio.read_bytes(path).decode("ascii").strip()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        raise tampered(f"objective index {digest[:12]} cannot be read") from None
    if len(nonce) != 32 or not Ledger(ledger_root, nonce).exists():
        raise tampered(f"objective index {digest[:12]} names goal {nonce!r}, which is missing")
    if Ledger(ledger_root, nonce).current().goal.get("objective_hash") != digest:
        raise tampered(f"objective index {digest[:12]} names goal {nonce}, which is another "
                       "objective's")
    return nonce


def publish_index(ledger_root: str | os.PathLike, digest: str, nonce: str) -> None:
    """Name `nonce` as the goal of the objective `digest` (under the activation lock)."""
    index = layout.objectives_dir(ledger_root)
    os.makedirs(index, exist_ok=True)
    if not record_file.create_exclusive(os.path.join(index, digest), nonce.encode("ascii")):
        raise tampered(f"objective index {digest[:12]} appeared while the activation lock "
                       "was held")
