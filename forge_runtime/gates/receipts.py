"""The receipt of a gate's last run: what ran, how it ended, and what it covered.

    .forge/local/gates/receipts/<gate>.json   one receipt per gate, replaced by each run
    .forge/local/gates/<gate>.log             the output of that run, as it streamed

Receipts live in the work tree's git-ignored local area (each work tree judges its own
files), where an agent's tools can write. So each one is sealed with an HMAC whose key
lives beside the goal ledger (`<ledger root>/gates/receipt.key`, a path the guard keeps the
agent's tools out of): a receipt written by hand, or copied from another gate, reads as no
receipt at all. Like the ledger's chain this makes forgery deliberate, not impossible: a
process that reads the key can seal anything, and the agent's own `forge gate run` must read
it. So a receipt only tells the model what to run next; what verifies a goal is forge's own
run of the gates the goal recorded (confirm.py). The guard still refuses the agent's tools
a read of the key (guard/gate_files.py), as cheap depth.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import secrets
from pathlib import Path

from forge_runtime.gates.config import cache_dir
from forge_runtime.gates.files import read_json, write_json
from forge_runtime.goal.store.layout import receipt_key


def receipt_path(project, name: str) -> Path:
    return cache_dir(project) / "receipts" / f"{name}.json"


def log_path(project, name: str) -> Path:
    return cache_dir(project) / f"{name}.log"


def shown(project, path: Path) -> str:
    """A path as the person sees it: relative to the project root."""
    return path.relative_to(project.root).as_posix()


def _key(project, create: bool) -> bytes | None:
    from forge_runtime import safeio

    path = Path(receipt_key(str(project.ledger_root)))
    try:
        return safeio.read_bytes(path)
    except FileNotFoundError:
        if not create:
            return None
    path.parent.mkdir(parents=True, exist_ok=True)
    # exclusive: two first runs at once agree on one key
    safeio.create(path, secrets.token_bytes(32), mode=0o600)
    return safeio.read_bytes(path)


def ensure_key(project) -> None:
    """Create the key if there is none: a person's `/goal` does (from its hook), since in a
    sandboxed posture the agent's `forge gate run` cannot write beside the ledger."""
    _key(project, create=True)


def _seal(key: bytes, receipt: dict) -> str:
    body = json.dumps({k: v for k, v in receipt.items() if k != "seal"}, sort_keys=True)
    return hmac.new(key, body.encode("utf-8"), hashlib.sha256).hexdigest()


def read(project, name: str) -> dict | None:
    """The gate's receipt; None when there is none or it is not one forge sealed."""
    receipt = read_json(receipt_path(project, name))
    if not isinstance(receipt, dict) or receipt.get("gate") != name:
        return None
    key = _key(project, create=False)
    if key is None or not hmac.compare_digest(str(receipt.get("seal")), _seal(key, receipt)):
        return None
    return receipt


def write(project, receipt: dict) -> None:
    sealed = {**receipt, "seal": _seal(_key(project, create=True), receipt)}
    write_json(receipt_path(project, receipt["gate"]), sealed)
