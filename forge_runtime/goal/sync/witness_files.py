"""The goal witness's files (witness.py, ledger_location.py): small JSON objects outside the work
tree, read whole and replaced whole; one that is not forge's fails closed."""

from __future__ import annotations

import os

from forge_runtime import fastjson

FIX = "forge goal verify"


def _tampered(message: str):
    from forge_runtime.goal.store.ledger import tampered

    return tampered(message, FIX)


def read(path: str) -> dict | None:
    """A witness file, None when there is none; one that is not forge's fails closed."""
    from forge_runtime import safeio

    try:
        data = fastjson.loads(safeio.read_bytes(path))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        raise _tampered(f"forge's witness file {os.path.basename(path)} cannot be read") \
            from None
    if not isinstance(data, dict):
        raise _tampered(f"forge's witness file {os.path.basename(path)} is not forge's")
    return data


def write(path: str, data: dict) -> None:
    """Replace a witness file whole. No fsync: after a power cut the witness may lag the
    ledger (allowed), never lead it."""
    from forge_runtime import safeio

    safeio.replace(path, fastjson.dumps(data).encode("utf-8"), durable=False,
                   create_dirs=True)
