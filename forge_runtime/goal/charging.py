"""Rules 4, 5 and 8: one turn charged per Stop, the ceiling, and the stuck warning.

A turn is identified by the uuid of the assistant entry that closed it in the transcript
(transcript.py). The host writes that entry before it runs the Stop hooks, every turn gets a
fresh one, and a repeated Stop for the same turn sees the same one, so charging is
idempotent: the ledger keeps one marker file per charged turn (and the last record names its
turn, which covers a crash between the record and its marker). `prompt_id` would not do: all
turns of one `/goal` run share it.

When a charge brings the count to the ceiling, the ledger gets a checkpoint (the state's next
unchecked step) and an exhaustion record; every later Stop of the goal is refused until a
person runs `/goal` with the same objective again (one more tranche) or clears it.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from forge_runtime.goal import consistency, state
from forge_runtime.goal.ledger import (
    ACTIVE,
    CANCELLED,
    COMPLETE,
    EXHAUSTED,
    Head,
    Ledger,
)

CHARGED, REPEATED, REFUSED, ENDED = "charged", "repeated", "refused", "ended"
STUCK_AFTER = 5


@dataclass(frozen=True)
class Charge:
    """The outcome of one Stop for a goal: charged, repeated (no-op), refused, or ended."""

    outcome: str
    goal: dict
    unchanged_turns: int = 0

    @property
    def stuck(self) -> bool:
        """Progress unchanged for another 5 charged turns (warn at 5, 10, 15, ...)."""
        return self.outcome == CHARGED and self.unchanged_turns > 0 and \
            self.unchanged_turns % STUCK_AFTER == 0


def _exhaust(ledger: Ledger, head: Head, next_step: str | None, session: str) -> Head:
    head = ledger.append(head, "checkpoint", head.goal, next_step=next_step, session=session)
    return ledger.append(head, "exhaust", {**head.goal, "status": EXHAUSTED}, session=session)


def charge(ledger: Ledger, state_path: Path, turn: str, session: str) -> Charge:
    """Charge `turn` to the goal once; refuse past the ceiling; fail closed on tampering."""
    with ledger.lock():
        head = ledger.settle()
        current = consistency.check(state_path, ledger, head)
        result = _charge_locked(ledger, head, current, turn, session,
                                consistency.mirror_id(state_path))
        if current.goal != state.mirror(result.goal):  # catch up a state a crash left behind
            state.write_goal(state_path, result.goal)
        return result


def _charge_locked(ledger: Ledger, head: Head, current: state.StateFile, turn: str,
                   session: str, mirror: str) -> Charge:
    goal = head.goal
    if goal["status"] in (COMPLETE, CANCELLED):
        return Charge(ENDED, goal)
    if goal["status"] == ACTIVE and goal["turn_count"] >= goal["turn_ceiling"]:
        head = _exhaust(ledger, head, current.next_step, session)  # a crash cut it short
    if head.goal["status"] == EXHAUSTED:
        return Charge(REFUSED, head.goal)
    if ledger.turn_charged(turn, head):
        return Charge(REPEATED, goal)
    progress = current.progress()
    last = head.record
    unchanged = last.get("unchanged", 0) + 1 \
        if last.get("kind") == "charge" and last.get("progress") == progress else 0
    goal = {**goal, "turn_count": goal["turn_count"] + 1}
    head = ledger.append(head, "charge", goal, turn=turn, session=session, mirror=mirror,
                         progress=progress, unchanged=unchanged)
    if goal["turn_count"] >= goal["turn_ceiling"]:
        head = _exhaust(ledger, head, current.next_step, session)
    return Charge(CHARGED, head.goal, unchanged)


def end(ledger: Ledger, state_path: Path, kind: str, session: str, why: str) -> dict:
    """Mark the goal complete or cancelled (the host's native goal ended); counts unchanged."""
    status = COMPLETE if kind == "complete" else CANCELLED
    with ledger.lock():
        head = ledger.settle()
        consistency.check(state_path, ledger, head)
        if head.goal["status"] not in (ACTIVE, EXHAUSTED):
            return head.goal
        head = ledger.append(head, kind, {**head.goal, "status": status}, session=session,
                             reason=why)
        state.write_goal(state_path, head.goal)
        return head.goal
