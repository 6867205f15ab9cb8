"""Two clones' histories of one goal, joined: the union of their turns, never a sum.

Clones charge a goal each in their own ledger; the remote (remote.py) holds the chain that
won the last race. A clone whose chain forked from the remote's at record `fork` joins them
with one `merge` record on top of the remote's head:

    {"kind": "merge", "prev": <remote head hash>, "merged": <this clone's head hash>,
     "fork": <seq both chains share>, "side": [this clone's records after the fork],
     "turns": [the side's charged turns the remote chain lacks], "activations": [...],
     "overruns": [the side's over-budget turns the remote chain lacks] (left out when none),
     "spent": {turn: tokens} for those turns and overruns, "spent_usd": {turn: picodollars}
     for those a price table priced (left out when none), "goal": <the joined goal>}

The side travels whole inside the record, so the hash chain stays verifiable: the side's
first record seals the shared record at `fork`, every side record seals the one before it
and obeys the transition rules, and the joined goal is recomputed from the two histories
(`expected`) and must be exactly the one the record carries. What each side holds joins
by identity, so nothing is counted twice and nothing is lost:
- charged turns and over-budget turns (a host's turn after the goal ended, the ledger's
  `overrun`), each by its turn: one both chains hold counts once, in the turn count or the
  over-budget count; its tokens and dollars count once whichever way each chain has it;
- activations by their ids: a tranche a person granted in either clone counts once, and
  one granted in the side leads (its ceilings, its id, its usage-limit mark);
- the plan's figures per window, and the goal's own use of the week the larger of the two
  counts (plan.joined says why);
- the tranche's end: the host's usage-limit mark, or an exhaustion, in either clone's run
  of the joined goal's tranche holds in the joined goal (a mark or an end in a tranche the
  other clone has moved past, by a person's `/goal` there, does not).
A join that brings an active goal to its turn ceiling exhausts it too; any other ceiling it
reaches (tokens, dollars, time, the plan's) stops the goal at its next event, as
`ceilings.reached` says. The record is a function of the two chains alone (its time is the
later head's), so any clone joining the same two chains writes the same record; the
remote's compare-and-swap then makes every clone converge on one chain.
"""

from __future__ import annotations

from forge_runtime.goal.store import record_file
from forge_runtime.records import record as value_type

MERGE = "merge"
# a turn the host started for the agent after the goal ended (the ledger's record kind)
OVERRUN = "overrun"
_TRANCHE_KEYS = ("activation_id", "token_ceiling", "tranche_tokens", "minute_ceiling",
                 "tranche_started", "usd_ceiling", "tranche_usd", "prices", "plan_ceilings",
                 "after_usage_limit")


class Contribution(value_type("Contribution", "turns overruns activations tokens picousd",
                              defaults=((), (), (), {}, {}))):
    """What one record adds to a chain's union: charged turns, over-budget turns, activation
    ids, and {turn: tokens}, {turn: picodollars} for the turns that spent any."""

    __slots__ = ()


def contributions(record: dict) -> Contribution:
    """What `record` adds to its chain's union (`Contribution`)."""
    kind = record.get("kind")
    if kind in ("charge", OVERRUN):
        turn, usage = record["turn"], record.get("usage")
        usage = usage if isinstance(usage, dict) else {}
        tokens = {turn: usage["counted"]} if usage.get("counted") else {}
        priced = {turn: usage["picousd"]} if usage.get("picousd") else {}
        if kind == OVERRUN:
            return Contribution(overruns=[turn], tokens=tokens, picousd=priced)
        return Contribution(turns=[turn], tokens=tokens, picousd=priced)
    if kind == "activate":
        return Contribution(activations=[record["goal"]["activation_id"]])
    if kind == MERGE:
        return Contribution(record["turns"], record.get("overruns", ()),
                            record["activations"], record["spent"],
                            record.get("spent_usd") or {})
    return Contribution()


def marked(record: dict) -> list[str]:
    """The turns `record` stands for in the ledger's turn markers (charged or over budget)."""
    adds = contributions(record)
    return [*adds.turns, *adds.overruns]


class Union:
    """The turns, over-budget turns and activations a chain holds (fed oldest first)."""

    def __init__(self) -> None:
        self.turns: set[str] = set()
        self.overruns: set[str] = set()
        self.activations: set[str] = set()

    def add(self, record: dict) -> None:
        adds = contributions(record)
        self.turns.update(adds.turns)
        self.overruns.update(adds.overruns)
        self.activations.update(adds.activations)

    def paid(self, turn: str) -> bool:
        """Are `turn`'s tokens and dollars in this chain's counts already?"""
        return turn in self.turns or turn in self.overruns

    @classmethod
    def of(cls, chain) -> Union:
        union = cls()
        for record in chain:
            union.add(record)
        return union


def expected(main_head: dict, main: Union, side: list[dict]) -> dict:
    """The merge record's fields for `side` joined onto the chain ending in `main_head`
    (whose union is `main`): everything but seq, prev and hash."""
    turns: list[str] = []
    overruns: list[str] = []
    activations: list[str] = []
    spent: dict[str, int] = {}
    spent_usd: dict[str, int] = {}
    paid: set[str] = set()
    for record in side:
        adds = contributions(record)
        new = [turn for turn in adds.turns if turn not in main.turns and turn not in turns]
        late = [turn for turn in adds.overruns
                if turn not in main.overruns and turn not in overruns]
        turns += new
        overruns += late
        for turn in new + late:
            if not main.paid(turn) and turn not in paid:
                paid.add(turn)
                if adds.tokens.get(turn):
                    spent[turn] = adds.tokens[turn]
                if adds.picousd.get(turn):
                    spent_usd[turn] = adds.picousd[turn]
        activations += [one for one in adds.activations
                        if one not in main.activations and one not in activations]
    at = max(str(main_head.get("at")), str(side[-1].get("at")))
    fields = {"kind": MERGE, "at": at, "merged": side[-1]["hash"],
              "fork": side[0]["seq"] - 1, "side": side, "turns": turns,
              "activations": activations, "spent": spent}
    if overruns:
        fields["overruns"] = overruns
    if spent_usd:
        fields["spent_usd"] = spent_usd
    fields["goal"] = joined_goal(main_head, fields)
    return fields


def joined_goal(main_head: dict, record: dict) -> dict:
    """The goal a merge `record` (its lists, side and time) makes of the goal at `main_head`:
    what the record checks in O(1) (`shape_ok`), and `expected` writes."""
    side_goal = record["side"][-1]["goal"]
    goal = dict(main_head["goal"])
    goal["turn_count"] += len(record["turns"])
    goal["token_count"] = goal.get("token_count", 0) + sum(record["spent"].values())
    spent_usd = record.get("spent_usd") or {}
    if spent_usd or "picousd" in goal:
        goal["picousd"] = goal.get("picousd", 0) + sum(spent_usd.values())
    overruns = record.get("overruns") or []
    if overruns or "overrun_count" in goal:
        goal["overrun_count"] = goal.get("overrun_count", 0) + len(overruns)
    side_leads = bool(record["activations"])
    if side_leads:  # a person granted a tranche in the side: its ceilings and id lead
        goal.update({key: side_goal[key] for key in _TRANCHE_KEYS if key in side_goal})
        goal["activation_count"] += len(record["activations"])
        goal["turn_ceiling"] = 20 * goal["activation_count"]
        goal["status"] = "active"
    # the side ran the joined goal's tranche (not one the main chain has moved past): what
    # ended that tranche there, or stopped it at the host's usage limit, holds here too
    in_tranche = side_goal.get("activation_id") == goal.get("activation_id")
    goal.pop("usage_limited", None)
    if (main_head["goal"].get("usage_limited") is True and not side_leads) or (
            in_tranche and side_goal.get("usage_limited") is True):
        goal["usage_limited"] = True
    from forge_runtime.goal.budget import plan  # only a join reads it: not on every Stop's path

    for key in ("plan_seen", "plan_host", "plan_week"):
        goal.pop(key, None)
    goal.update(plan.joined(main_head["goal"], side_goal, str(main_head.get("at")),
                            str(record["side"][-1].get("at"))))
    if goal["status"] == "active" and (goal["turn_count"] >= goal["turn_ceiling"] or (
            in_tranche and side_goal.get("status") == "exhausted")):
        goal["status"] = "exhausted"
    return goal


def owed(record: dict) -> tuple[list, dict]:
    """(turns, {turn: usage}) the last exhaustion inside a join's side saw past the
    ceiling, when no activation in the side charged them since: the next tranche charges
    them, in whichever clone a person's `/goal` grants it (activation.py)."""
    for one in reversed(record.get("side") or []):
        kind = one.get("kind")
        if kind == "activate":
            return [], {}
        if kind == "exhaust":
            return list(one.get("owed") or []), dict(one.get("owed_usage") or {})
        if kind == MERGE:
            turns, spent = owed(one)
            if turns:
                return turns, spent
    return [], {}


def joined_spending(record: dict) -> list[dict]:
    """The charge and over-budget records whose spending a merge `record` added (its side's,
    and those of joins inside it), oldest first: what a report counts per model."""
    paid = {*record["spent"], *(record.get("spent_usd") or {})}
    found = []
    for one in record["side"]:
        inner = joined_spending(one) if one.get("kind") == MERGE else [one]
        found += [spending for spending in inner if spending.get("turn") in paid
                  and spending.get("kind") in ("charge", OVERRUN)]
    return found


def build(main_chain: list[dict], side: list[dict]) -> dict:
    """The sealed merge record joining `side` (records after the shared fork) onto
    `main_chain` (every record of the remote's chain, oldest first)."""
    head = main_chain[-1]
    fields = expected(head, Union.of(main_chain), side)
    return record_file.seal({**fields, "seq": head["seq"] + 1, "prev": head["hash"]})


def fork_point(left: list[dict], right: list[dict]) -> int:
    """The last sequence number at which both chains hold the same record (0: none)."""
    seq = min(len(left), len(right))
    while seq and left[seq - 1]["hash"] != right[seq - 1]["hash"]:
        seq -= 1
    return seq


def holds(chain, seq, digest) -> bool:
    """Does `chain` hold record (`seq`, `digest`), itself or inside a join's side?"""
    return any(mentions(record, seq, digest) for record in chain)


def mentions(record: dict, seq, digest) -> bool:
    """Is `record` the record (`seq`, `digest`), or does a side it joined hold it?"""
    if record.get("seq") == seq and record.get("hash") == digest:
        return True
    return record.get("kind") == MERGE and isinstance(record.get("side"), list) and \
        any(mentions(one, seq, digest) for one in record["side"] if isinstance(one, dict))


def shape_ok(old: dict, record: dict) -> bool:
    """The O(1) rules of a merge following `old`: its fields are there and the goal it
    carries is exactly what they make of `old`'s (`joined_goal`; the join itself, whether
    its lists are what the two chains give, is recomputed by `check` at every full
    verification). A side that adds nothing (a `bind`, a `complete`) still joins: the
    other clone's chain moved, and refusing would fail a clean goal closed."""
    side, fork = record.get("side"), record.get("fork")
    turns, overruns = record.get("turns"), record.get("overruns", [])
    lists = (turns, overruns, record.get("activations"))
    spent, spent_usd = record.get("spent"), record.get("spent_usd", {})
    if not (isinstance(side, list) and side and all(isinstance(one, dict) for one in side)
            and isinstance(side[-1].get("goal"), dict)
            and all(isinstance(one, list) and all(isinstance(item, str) for item in one)
                    and len(set(one)) == len(one) for one in lists)
            and all(isinstance(money, dict) and set(money) <= {*turns, *overruns}
                    and all(isinstance(n, int) and not isinstance(n, bool) and n > 0
                            for n in money.values()) for money in (spent, spent_usd))
            and isinstance(fork, int) and 1 <= fork < record["seq"] - 1
            and record.get("merged") == side[-1].get("hash")):
        return False
    try:
        return record["goal"] == joined_goal(old, record)
    except (KeyError, TypeError, AttributeError):  # a side goal that is not forge's
        return False


def check(chain_before: list[dict], record: dict, nonce: str,
          check_transition) -> str | None:
    """Why the merge `record` is not the join of its side onto `chain_before` (every record
    before it, oldest first), or None. Side records that are joins themselves are checked
    the same way against the chain they were written on; each side record obeys the
    ledger's rules, `check_transition(before, record, nonce)` (the ledger hands them over:
    the merge rule is one of them, so this module does not import the ledger)."""
    fork = record["fork"]
    base = chain_before[:fork]
    before = base[-1]
    for index, one in enumerate(record["side"]):
        if record_file.seal(one).get("hash") != one.get("hash"):
            return f"holds side record {one.get('seq')}, which does not match its own hash"
        if one.get("seq") != before["seq"] + 1 or one.get("prev") != before["hash"]:
            return f"holds side record {one.get('seq')}, which does not follow the one before"
        check_transition(before, one, nonce)
        if one.get("kind") == MERGE:
            why = check([*base, *record["side"][:index]], one, nonce, check_transition)
            if why:
                return why
        before = one
    if fork < len(chain_before) and record["side"][0]["hash"] == chain_before[fork]["hash"]:
        return "joins a side the chain already holds (its fork is not where the two part)"
    want = expected(chain_before[-1], Union.of(chain_before), record["side"])
    for key in ("turns", "overruns", "activations", "spent", "spent_usd", "goal", "at", "fork",
                "merged"):
        if record.get(key) != want.get(key):
            return f"says {key} {record.get(key)!r} where joining its side gives " \
                   f"{want.get(key)!r}"
    return None
