"""Many processes charging one goal at once: turns per second, and nothing lost."""

from __future__ import annotations

from pathlib import Path

from bench.scenarios import NotAvailable, require_module
from bench.suite import NOT_AVAILABLE, Settings

PROCESSES = 8


def measure(settings: Settings, base: Path, rounds: int) -> dict:
    try:
        require_module("forge_runtime.goal.charging", "the goal ledger's charging")
        raise NotAvailable("the bench does not drive concurrent charging yet")
    except NotAvailable as exc:
        return {"status": NOT_AVAILABLE, "reason": str(exc), "processes": PROCESSES}
