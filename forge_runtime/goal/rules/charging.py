"""Every turn the transcript shows is charged once; the ceiling ends autonomy; turns
without progress bring the stuck warning.

A turn is identified by the uuid of the assistant entry that closed it in the transcript
(transcript.py). The host writes that entry before it runs the Stop hooks, every turn gets a
fresh one, and a repeated Stop for the same turn sees the same one, so charging is
idempotent: the ledger keeps one marker file per charged turn (and the last record names its
turn, which covers a crash between the record and its marker). `prompt_id` would not do: all
turns of one `/goal` run share it.

A Stop hook can die (killed, timed out, the machine out of memory) and the host goes on
without it, so a Stop charges every finished turn the transcript shows since the session's
last charged one, not only its own: under one lock, in transcript order, each turn its own
record, the ones whose own Stop did not charge them marked `"late": true`. SessionEnd and
UserPromptSubmit do the same, so a goal never keeps more turns worked than charged once a
later event of its session has run.

When a charge brings the count to the ceiling, the ledger gets a checkpoint (the state's next
unchecked step) and an exhaustion record, which says how many of the tranche's turns came
late and which turns the transcript showed past the ceiling (`owed`: charged first when a
person adds a tranche). Every later Stop of the goal is refused until a person runs `/goal` with the
same objective again or clears it.

A turn the host starts for the agent after the goal ended (a wake-up it scheduled, a cron,
a background task's notice: no person typed its prompt, `transcript.prompt_origin`) is never
dropped: `overrun` appends it as an over-budget record, with its tokens, and the Stop ends it.
"""

from __future__ import annotations

import os

from forge_runtime.errors import ForgeError
from forge_runtime.goal.budget.ceilings import USAGE_LIMIT, usage_limited
from forge_runtime.goal.rules import consistency
from forge_runtime.goal.store import state_file
from forge_runtime.goal.store.ledger import (
    ACTIVE,
    CANCELLED,
    COMPLETE,
    EXHAUSTED,
    OVERRUN,
    TURNS,
    Head,
    Ledger,
    now,
    reached,
)
from forge_runtime.records import record

CHARGED, REPEATED, REFUSED, ENDED = "charged", "repeated", "refused", "ended"
# The progress of a charge whose state file could not be read as forge's.
UNKNOWN_PROGRESS = "unknown"
STUCK_AFTER = 5
# The warning of a stuck goal: its checklist unchanged (goal/events/), its final gates failing
# the same way (gates/streak.py), each for STUCK_AFTER charged turns.
STUCK_CODE = "FORGE_GOAL_STUCK_WARNING"


class Charge(record("Charge", "outcome goal unchanged_turns late stuck owed overrun host_turn "
                              "head", defaults=(0, 0, False, 0, 0, False, None))):
    """The outcome of one event for a goal: charged, repeated (no-op), refused, or ended.

    `late` counts the turns this event charged for Stops that did not (at exhaustion: the
    whole tranche's); `stuck` says the progress stayed unchanged across another multiple of
    5 charged turns; `owed`, the turns shown past the ceiling, left for the next tranche;
    `overrun`, the turns the host started after the goal ended, recorded over budget now;
    `host_turn`, this event's own turn is one of those (its Stop ends it); `head`, the
    ledger's head a charge left (its last record, checked), so what the Stop says next
    reads no head again.
    Records, not dataclasses: `dataclasses` costs every charging Stop a bare interpreter
    start.
    """

    __slots__ = ()

    @property
    def exhausted_now(self) -> bool:
        """This event's charges reached the ceiling."""
        return self.outcome == CHARGED and self.goal["status"] == EXHAUSTED


class Progress(record("Progress", "digest next_step mirror")):
    """What a charge record says about the state file it mirrors to."""

    __slots__ = ()


def _late_in_tranche(ledger: Ledger, head: Head) -> int:
    """How many of this tranche's charges came late: read back to its activation, once per
    tranche (at most its 20 charges and a few records beside them)."""
    record, late = head.record, 0
    while record.get("kind") != "activate" and record["seq"] > 1:
        late += record.get("late") is True
        record = ledger.previous(record)
    return late


def _exhaust(ledger: Ledger, head: Head, progress: Progress, session: str,
             owed: list[str], ceiling: str = TURNS, usage: dict | None = None) -> Head:
    """Checkpoint and exhaustion; the turns `owed` past the ceiling are kept in the record,
    with the tokens each spent (`owed_usage`), for the next tranche to charge. At the host's
    usage limit with no turn to mark (`USAGE_LIMIT`), the exhaustion carries the mark."""
    late = _late_in_tranche(ledger, head)
    head = ledger.append(head, "checkpoint", head.goal, next_step=progress.next_step,
                         session=session)
    extra = {"late_turns": late} if late else {}
    goal = {**head.goal, "status": EXHAUSTED}
    if ceiling == USAGE_LIMIT and goal.get("usage_limited") is not True:
        goal["usage_limited"] = extra["usage_limit"] = True
    if owed:
        extra["owed"] = owed
        spent = {turn: usage[turn] for turn in owed if turn in (usage or {})}
        if spent:
            extra["owed_usage"] = spent
    head = ledger.append(head, "exhaust", goal, session=session, ceiling=ceiling, **extra)
    _told(ledger, head)
    return head


def _told(ledger: Ledger, head: Head) -> None:
    """An end just recorded, noted for the person's notification (end_notes.py, imported
    here: a charge that ends nothing never loads it)."""
    from forge_runtime.goal.rules import end_notes

    end_notes.recorded(ledger.root, head.record)


class Seen(record("Seen", "plan usage_limit", defaults=(None, False))):
    """What the host reported at this event beside the turns: its plan's windows (a
    goal/budget/plan.py reading, for a goal with plan ceilings) and whether it stopped the last
    turn for its usage limit. Both go with the event's last charge."""

    __slots__ = ()


def charge(ledger: Ledger, state_path: str | os.PathLike, turns: list[str], session: str,
           own_turn: str | None = None, usage: dict | None = None,
           seen: Seen | None = None) -> Charge:
    """Charge each of `turns` (transcript order) once; refuse past the ceiling; fail closed
    on tampering. Every turn but `own_turn` (the one whose Stop this is) is charged late.
    `usage` maps a turn to the tokens it spent (usage.usage_record), kept in its record;
    `seen`, what the host reported beside them (`Seen`)."""
    if isinstance(turns, str):
        raise TypeError("charge() takes a list of turn identities")
    with ledger.lock():
        head = ledger.settle()
        try:
            current = consistency.check(state_path, ledger, head)
        except ForgeError:
            # state.md is the agent's file: edited, deleted or swapped for a FIFO or a link,
            # it ends the session (the caller's refusal), but the turns it shows ran all the
            # same, so they are charged first: a broken state file is never a free turn
            charge_locked(ledger, head, turns, session, own_turn,
                          Progress(UNKNOWN_PROGRESS, None, consistency.mirror_id(state_path)),
                          usage, seen)
            raise
        progress = Progress(current.progress(), current.next_step,
                            consistency.mirror_id(state_path))
        mirrored = current.goal
        if mirrored != state_file.mirror(head.goal):
            # A Stop that died after its append left the state behind, which the check
            # allows for one append. Catch it up before charging, so that dying in this
            # charge too leaves it one append behind again, not two (a false tampering).
            state_file.write_goal(state_path, head.goal)
            mirrored = state_file.mirror(head.goal)
        result = charge_locked(ledger, head, turns, session, own_turn, progress, usage, seen)
        if mirrored != state_file.mirror(result.goal):
            state_file.write_goal(state_path, result.goal)
        return result


def charge_locked(ledger: Ledger, head: Head, turns: list[str], session: str,
                  own_turn: str | None, progress: Progress, usage: dict | None = None,
                  seen: Seen | None = None) -> Charge:
    """`charge` for a caller that holds the lock and has settled `head`."""
    goal, seen = head.goal, seen or Seen()
    if goal["status"] in (COMPLETE, CANCELLED):
        return Charge(ENDED, goal)
    usage = usage or {}
    due = list(dict.fromkeys(turn for turn in turns if not ledger.turn_charged(turn, head)))
    if goal["status"] == ACTIVE and goal["turn_count"] >= goal["turn_ceiling"]:
        # a Stop died between the last charge and the exhaustion: finish it now, with the
        # tranche's late count and owing what this event brought, as at the ceiling
        head = _exhaust(ledger, head, progress, session, due, TURNS, usage)
        return Charge(REFUSED, head.goal, 0, head.record.get("late_turns", 0), False, len(due))
    if not due and goal["status"] == ACTIVE and (
            reached(goal, now()) is not None or _stops_at_limit(goal, seen)):
        # the tranche's tokens or time ran out with no Stop to say so (a Stop that died, or
        # the clock), or the host stopped for its usage limit with no turn to charge; with
        # new turns, they are charged first (they ran), then it exhausts
        ceiling = USAGE_LIMIT if _stops_at_limit(goal, seen) else reached(goal, now())
        head = _exhaust(ledger, head, progress, session, [], ceiling)
        return Charge(REFUSED, head.goal, 0, head.record.get("late_turns", 0))
    if head.goal["status"] == EXHAUSTED:
        return Charge(REFUSED, head.goal)
    if not due:
        return Charge(REPEATED, goal)
    room = goal["turn_ceiling"] - goal["turn_count"]
    charged, owed = due[:room], due[room:]
    first, late, stuck = head.seq + 1, 0, False
    for turn in charged:
        last = head.record
        unchanged = last.get("unchanged", 0) + 1 \
            if last.get("kind") == "charge" and last.get("progress") == progress.digest else 0
        stuck = stuck or (unchanged > 0 and unchanged % STUCK_AFTER == 0)
        fields = {"turn": turn, "session": session, "mirror": progress.mirror,
                  "progress": progress.digest, "unchanged": unchanged}
        if len(charged) > 1:
            fields["batch"] = first  # one locked append: consistency counts it as one
        if turn != own_turn:
            fields["late"] = True
            late += 1
        spent = usage.get(turn)
        charged_goal = {**head.goal, "token_count": head.goal.get("token_count", 0),
                        "turn_count": head.goal["turn_count"] + 1}
        if spent is not None:
            fields["usage"] = spent
            charged_goal["token_count"] += spent["counted"]
            if "picousd" in spent:
                charged_goal["picousd"] = head.goal.get("picousd", 0) + spent["picousd"]
        if turn == charged[-1]:
            charged_goal = _with_seen(charged_goal, fields, seen)
        head = ledger.append(head, "charge", charged_goal, **fields)
    ceiling = reached(head.goal, now())
    if ceiling is not None:
        head = _exhaust(ledger, head, progress, session, owed, ceiling, usage)
        late = head.record.get("late_turns", 0)
    elif stuck:
        from forge_runtime.goal.rules import end_notes

        end_notes.stuck(ledger.root, head.goal, f"the checklist and next step in state.md "
                                                f"have not changed for {unchanged} charged turns")
    return Charge(CHARGED, head.goal, unchanged, late, stuck, len(owed), head=head)


def _stops_at_limit(goal: dict, seen: Seen) -> bool:
    """The host stopped for its usage limit, and the goal stops there (goal/budget/ceilings.py)."""
    return seen.usage_limit and usage_limited({**goal, "usage_limited": True})


def _with_seen(goal: dict, fields: dict, seen: Seen) -> dict:
    """The event's last charge with what the host reported beside its turns (`Seen`): the
    plan's reading for a goal with plan ceilings, the usage-limit mark."""
    from forge_runtime.goal.budget import plan

    if seen.plan is not None and isinstance(goal.get("plan_ceilings"), dict) \
            and plan.valid(seen.plan):
        fields["plan"] = seen.plan
        goal = plan.advanced(goal, seen.plan)
    if seen.usage_limit:
        fields["usage_limit"] = True
        goal = {**goal, "usage_limited": True}
    return goal


def overrun(ledger: Ledger, state_path: str | os.PathLike, turns: list[str], session: str,
            usage: dict | None = None) -> tuple[dict, int]:
    """Record each of `turns` (transcript order), turns the host started after the goal
    ended, as an over-budget record with the tokens it spent (`usage`, as for `charge`);
    a turn recorded or charged already is skipped. Returns the goal and how many were
    recorded now. A goal still active records none (its turns are charged)."""
    usage = usage or {}
    with ledger.lock():
        head = ledger.settle()
        consistency.check(state_path, ledger, head)
        if head.goal["status"] == ACTIVE:
            return head.goal, 0
        due = [turn for turn in dict.fromkeys(turns) if not ledger.turn_charged(turn, head)]
        for turn in due:
            fields = {"turn": turn, "session": session, "origin": "host"}
            spent = usage.get(turn)
            goal = {**head.goal, "overrun_count": head.goal.get("overrun_count", 0) + 1}
            if spent is not None:
                fields["usage"] = spent
                goal["token_count"] = goal.get("token_count", 0) + spent["counted"]
                if "picousd" in spent:
                    goal["picousd"] = goal.get("picousd", 0) + spent["picousd"]
            head = ledger.append(head, OVERRUN, goal, **fields)
        return head.goal, len(due)


# The ends forge records of its own (beside the host's verdicts, native_goal.py): the gates
# confirmed a met goal, or a met goal held for them ended unconfirmed; the plan's figures
# a goal watches were missing; the ledger's lock stayed held past its deadline.
VERIFIED, MET_UNVERIFIED = "verified", "met, unverified"
PLAN_UNAVAILABLE, WEDGED = "plan figures missing", "wedged"
ENDS_BY_FORGE = (VERIFIED, MET_UNVERIFIED, PLAN_UNAVAILABLE, WEDGED)


def end(ledger: Ledger, state_path: str | os.PathLike, kind: str, session: str, why: str,
        ended: str | None = None) -> dict:
    """Mark the goal complete or cancelled, counts unchanged: the host's native goal ended,
    or forge ended it. `ended` names the end for status and report (the host's verdict:
    met, cleared, impossible, unknown; or forge's own: ENDS_BY_FORGE), by default the
    host's plain one for `kind` (met, cleared); `why` says it."""
    status = COMPLETE if kind == "complete" else CANCELLED
    if ended is None:
        ended = "met" if kind == "complete" else "cleared"
    with ledger.lock():
        head = ledger.settle()
        consistency.check(state_path, ledger, head)
        if head.goal["status"] not in (ACTIVE, EXHAUSTED):
            return head.goal
        head = ledger.append(head, kind, {**head.goal, "status": status, "ended": ended},
                             session=session, reason=why)
        _told(ledger, head)
        state_file.write_goal(state_path, head.goal)
        return head.goal
