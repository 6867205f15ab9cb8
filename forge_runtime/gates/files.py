"""Small JSON files under `.forge/local/gates/`, written so a crash leaves old or new."""

from __future__ import annotations

import json
import os
from pathlib import Path


def write_json(path: Path, data: object) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "w", encoding="utf-8") as handle:
        json.dump(data, handle, separators=(",", ":"))
    os.replace(temporary, path)


def read_json(path: Path) -> object | None:
    """The file's JSON, or None when it is missing or unreadable (a cache rebuilt, a receipt
    never written)."""
    try:
        with open(path, encoding="utf-8") as handle:
            return json.load(handle)
    except (OSError, ValueError):
        return None
