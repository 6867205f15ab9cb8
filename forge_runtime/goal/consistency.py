"""Rule 7: the state file must agree with the ledger, or the goal fails closed.

state.md is the agent's working copy, so every charge compares its goal fields with the
ledger's. Allowed: the turn count lagging by exactly one (a Stop charged the ledger and was
interrupted before it rewrote the state). Refused: the file deleted or its goal removed, the
count reduced or lagging by two or more, the count ahead of the ledger, and the nonce,
objective, activation or ceiling changed. The way out is `forge goal sync`, which rewrites
the fields from the ledger: it can only ever restore what the ledger says.
"""

from __future__ import annotations

from pathlib import Path

from forge_runtime.errors import ForgeError
from forge_runtime.goal import state
from forge_runtime.goal.ledger import tampered

SYNC_FIX = "forge goal sync"
_IDENTITY = ("nonce", "objective_hash", "activation_id", "activation_count", "turn_ceiling")


def check(state_path: Path, goal: dict) -> state.StateFile:
    """The parsed state file, after checking its goal against the ledger's `goal`."""
    try:
        current = state.read(state_path)
    except ForgeError as exc:
        raise tampered(f"state file: {exc.message}", SYNC_FIX) from None
    mine = current.goal
    if mine is None:
        raise tampered(f"state file has no goal while goal {goal['nonce']} is running",
                       SYNC_FIX)
    for key in _IDENTITY:
        if mine.get(key) != goal[key]:
            raise tampered(f"state file {key} is {mine.get(key)!r}, the ledger says "
                           f"{goal[key]!r}", SYNC_FIX)
    count = mine.get("turn_count")
    if not isinstance(count, int) or isinstance(count, bool):
        raise tampered("state file turn_count is not a number", SYNC_FIX)
    if count > goal["turn_count"]:
        raise tampered(f"state file turn_count {count} is ahead of the ledger's "
                       f"{goal['turn_count']}", SYNC_FIX)
    if count < goal["turn_count"] - 1:
        raise tampered(f"state file turn_count {count} lags the ledger's {goal['turn_count']} "
                       f"by {goal['turn_count'] - count} turns (reduced or stale)", SYNC_FIX)
    return current
