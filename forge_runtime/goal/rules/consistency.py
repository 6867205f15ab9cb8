"""The state file must agree with the ledger, or the goal fails closed.

state.md is the agent's working copy, so every charge compares its goal fields with the
ledger's. Allowed: the turn count lagging by one Stop's charges (a Stop charged the ledger
and was interrupted before it rewrote the state). Refused: the file deleted or its goal
removed, the count reduced or lagging by more, the count ahead of the ledger, and the nonce,
objective, activation or ceiling changed. The way out is `forge goal sync`, which rewrites
the fields from the ledger: it can only ever restore what the ledger says.

Worktrees share one ledger but each has its own state.md, so a work tree's state also falls
behind when a session in another work tree charges the goal or adds a tranche. That is not
an edit: the state then equals the goal as some recent record left it, and at most one of
the appends after that record was made for this state file (charge records name the state
file they mirror to; the records of one catch-up share a `batch`; a join with another
clone's chain keeps this clone's records in its side). Only on a mismatch are
records read back, newest first, and never past the state's own count, so
a Stop of an untouched goal still reads no record for this.

One work tree has one state.md, so it mirrors one goal: when a later `/goal` in another
session of the same work tree started another goal, the state names that goal, correctly.
The first goal then stops with FORGE_GOAL_WORKTREE_TAKEN and the way back (its own `/goal`),
not with a tamper error whose `forge goal sync` could not help.
"""

from __future__ import annotations

import os

from forge_runtime.digest import sha256_hex
from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.goal.store import state_file
from forge_runtime.goal.store.ledger import Head, Ledger, tampered

SYNC_FIX = "forge goal sync"
WORKTREE_TAKEN = "FORGE_GOAL_WORKTREE_TAKEN"
_IDENTITY = ("nonce", "objective_hash", "activation_id", "activation_count", "turn_ceiling")


def mirror_id(state_path: str | os.PathLike) -> str:
    """Which state file a charge was mirrored to: one id per work tree's state.md."""
    return sha256_hex(os.fsencode(os.path.abspath(state_path)))[:16]


def check(state_path: str | os.PathLike, ledger: Ledger,
          head: Head | None = None) -> state_file.StateFile:
    """The parsed state file, after checking its goal against the ledger (at `head`)."""
    head = head or ledger.head()
    try:
        current = state_file.read(state_path)
    except ForgeError as exc:
        raise tampered(f"state file: {exc.message}", SYNC_FIX) from None
    try:
        _compare(current.goal, head.goal)
    except ForgeError:
        if not _behind_other_worktrees(ledger, head, current.goal, mirror_id(state_path)):
            other = _other_goal_mirrored(ledger, current.goal, mirror_id(state_path))
            if other is not None:
                raise _taken(head.goal, other) from None
            raise
    return current


def _taken(goal: dict, other: dict) -> ForgeError:
    return ForgeError(
        f"state.md follows goal {other['nonce']} ({other['objective']!r}), "
        f"which a later /goal in this work tree started; goal {goal['nonce']} stops here",
        f"/goal {goal['objective']}", exit_code=EXIT_REFUSED, code=WORKTREE_TAKEN,
        rationale="in this session: this work tree follows this goal again (the other stops)",
        or_=[f"forge goal status --nonce {other['nonce']}"])


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
    own, record = set(), head.record
    while True:
        # a join with another clone's chain (merge.py) carries this clone's records since
        # the fork in its side: the state may mirror one of those
        for seen in (record, *reversed(record.get("side") or [])):
            if state_file.mirror(seen["goal"]) == mine:
                return True
            if seen.get("kind") == "charge" and seen.get("mirror") == mine_id:
                own.add(seen.get("batch", seen["seq"]))  # one locked append, one write
        if len(own) > 1 or record["seq"] == 1 or record["goal"]["turn_count"] < count:
            return False
        record = ledger.previous(record)


def _other_goal_mirrored(ledger: Ledger, mine: dict | None, mine_id: str) -> dict | None:
    """The repository's other goal that `mine` faithfully mirrors, or None.

    Read without that goal's lock (this caller holds its own goal's; taking a second
    could deadlock): a read racing its writer just leaves the tamper error standing.
    """
    nonce = (mine or {}).get("nonce")
    if not isinstance(nonce, str) or len(nonce) != 32 or nonce == ledger.nonce or \
            not all(char in "0123456789abcdef" for char in nonce):
        return None
    other = Ledger(ledger.root, nonce)
    try:
        head = other.head()
        try:
            _compare(mine, head.goal)
        except ForgeError:
            if not _behind_other_worktrees(other, head, mine, mine_id):
                return None
    except ForgeError:
        return None
    return head.goal
