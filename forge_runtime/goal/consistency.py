"""Rule 7: the state file must agree with the ledger, or the goal fails closed.

state.md is the agent's working copy, so every charge compares its goal fields with the
ledger's. Allowed: the turn count lagging by exactly one (a Stop charged the ledger and was
interrupted before it rewrote the state). Refused: the file deleted or its goal removed, the
count reduced or lagging by two or more, the count ahead of the ledger, and the nonce,
objective, activation or ceiling changed. The way out is `forge goal sync`, which rewrites
the fields from the ledger: it can only ever restore what the ledger says.

Worktrees share one ledger but each has its own state.md, so a work tree's state also falls
behind when a session in another work tree charges the goal or adds a tranche. That is not
an edit: the state then equals the goal as some recent record left it, and at most one of
the charges after that record was made for this state file (charge records name the state
file they mirror to). Only on a mismatch are records read back, newest first, and never past
the state's own count, so a Stop of an untouched goal still reads no record for this.
"""

from __future__ import annotations

import hashlib
import os
from pathlib import Path

from forge_runtime.errors import ForgeError
from forge_runtime.goal import state
from forge_runtime.goal.ledger import Head, Ledger, tampered

SYNC_FIX = "forge goal sync"
_IDENTITY = ("nonce", "objective_hash", "activation_id", "activation_count", "turn_ceiling")


def mirror_id(state_path: Path) -> str:
    """Which state file a charge was mirrored to: one id per work tree's state.md."""
    return hashlib.sha256(os.fsencode(os.path.abspath(state_path))).hexdigest()[:16]


def check(state_path: Path, ledger: Ledger, head: Head | None = None) -> state.StateFile:
    """The parsed state file, after checking its goal against the ledger (at `head`)."""
    head = head or ledger.head()
    try:
        current = state.read(state_path)
    except ForgeError as exc:
        raise tampered(f"state file: {exc.message}", SYNC_FIX) from None
    try:
        _compare(current.goal, head.goal)
    except ForgeError:
        if not _behind_other_worktrees(ledger, head, current.goal, mirror_id(state_path)):
            raise
    return current


def _compare(mine: dict | None, goal: dict) -> None:
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


def _behind_other_worktrees(ledger: Ledger, head: Head, mine: dict | None, mine_id: str) -> bool:
    """True when `mine` is the goal as a recent record left it, and other work trees' charges
    (plus at most one of this state file's own) explain everything since."""
    count = (mine or {}).get("turn_count")
    if not isinstance(count, int) or isinstance(count, bool):
        return False
    own, record = 0, head.record
    while True:
        if state.mirror(record["goal"]) == mine:
            return True
        if record.get("kind") == "charge" and record.get("mirror") == mine_id:
            own += 1
        if own > 1 or record["seq"] == 1 or record["goal"]["turn_count"] < count:
            return False
        record = ledger.previous(record)
