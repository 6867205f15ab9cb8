"""Two clones' histories of one goal, joined: the union of their turns, never a sum.

Clones charge a goal each in their own ledger; the remote (remote.py) holds the chain that
won the last race. A clone whose chain forked from the remote's at record `fork` joins them
with one `merge` record on top of the remote's head:

    {"kind": "merge", "prev": <remote head hash>, "merged": <this clone's head hash>,
     "fork": <seq both chains share>, "side": [this clone's records after the fork],
     "turns": [the side's charged turns the remote chain lacks], "activations": [...],
     "spent": {turn: tokens} for those turns, "spent_usd": {turn: picodollars} for those
     a price table priced (left out when none), "goal": <the joined goal>}

The side travels whole inside the record, so the hash chain stays verifiable: the side's
first record seals the shared record at `fork`, every side record seals the one before it
and obeys the transition rules, and the joined goal is recomputed from the two histories
(`expected`) and must be exactly the one the record carries. Turns are joined by identity
(a turn both chains charged counts once), activations by their ids (a tranche a person
granted in either clone counts once), and a join that brings an active goal to its
ceiling exhausts it. The record is a function of the two chains alone (its time is the later
head's), so any clone joining the same two chains writes the same record; the remote's
compare-and-swap then makes every clone converge on one chain.
"""

from __future__ import annotations

from forge_runtime.goal import records

MERGE = "merge"
_TRANCHE_KEYS = ("activation_id", "token_ceiling", "tranche_tokens", "minute_ceiling",
                 "tranche_started", "usd_ceiling", "tranche_usd", "prices", "plan_ceilings",
                 "after_usage_limit")


def contributions(record: dict) -> tuple[list[str], list[str], dict]:
    """(turns, activation ids, {turn: tokens}) one record adds to a chain's union."""
    kind = record.get("kind")
    if kind == "charge":
        usage = record.get("usage")
        spent = usage.get("counted", 0) if isinstance(usage, dict) else 0
        return [record["turn"]], [], {record["turn"]: spent} if spent else {}
    if kind == "activate":
        return [], [record["goal"]["activation_id"]], {}
    if kind == MERGE:
        return list(record["turns"]), list(record["activations"]), dict(record["spent"])
    return [], [], {}


def dollars(record: dict) -> dict:
    """{turn: picodollars} one record adds to a chain's union (charges a table priced)."""
    if record.get("kind") == "charge":
        usage = record.get("usage")
        spent = usage.get("picousd", 0) if isinstance(usage, dict) else 0
        return {record["turn"]: spent} if spent else {}
    if record.get("kind") == MERGE:
        return dict(record.get("spent_usd") or {})
    return {}


class Union:
    """The turns and activations a chain holds (fed its records oldest first)."""

    def __init__(self) -> None:
        self.turns: set[str] = set()
        self.activations: set[str] = set()

    def add(self, record: dict) -> None:
        turns, activations, _ = contributions(record)
        self.turns.update(turns)
        self.activations.update(activations)

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
    activations: list[str] = []
    spent: dict[str, int] = {}
    spent_usd: dict[str, int] = {}
    for record in side:
        new_turns, new_activations, tokens = contributions(record)
        priced = dollars(record)
        for turn in new_turns:
            if turn not in main.turns and turn not in spent and turn not in turns:
                turns.append(turn)
                if tokens.get(turn):
                    spent[turn] = tokens[turn]
                if priced.get(turn):
                    spent_usd[turn] = priced[turn]
        activations += [one for one in new_activations
                        if one not in main.activations and one not in activations]
    goal = dict(main_head["goal"])
    goal["turn_count"] += len(turns)
    goal["token_count"] = goal.get("token_count", 0) + sum(spent.values())
    if spent_usd or "picousd" in goal:
        goal["picousd"] = goal.get("picousd", 0) + sum(spent_usd.values())
    if activations:  # a person granted a tranche in the side: its ceilings and id lead
        last = side[-1]["goal"]
        goal.update({key: last[key] for key in _TRANCHE_KEYS if key in last})
        goal["activation_count"] += len(activations)
        goal["turn_ceiling"] = 20 * goal["activation_count"]
        goal["status"] = "active"
    if goal["status"] == "active" and goal["turn_count"] >= goal["turn_ceiling"]:
        goal["status"] = "exhausted"
    fields = {"kind": MERGE, "at": max(str(main_head.get("at")), str(side[-1].get("at"))),
              "merged": side[-1]["hash"], "fork": side[0]["seq"] - 1, "side": side,
              "turns": turns, "activations": activations, "spent": spent, "goal": goal}
    if spent_usd:
        fields["spent_usd"] = spent_usd
    return fields


def build(main_chain: list[dict], side: list[dict]) -> dict:
    """The sealed merge record joining `side` (records after the shared fork) onto
    `main_chain` (every record of the remote's chain, oldest first)."""
    head = main_chain[-1]
    fields = expected(head, Union.of(main_chain), side)
    return records.seal({**fields, "seq": head["seq"] + 1, "prev": head["hash"]})


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
    """The O(1) rules of a merge following `old`: its fields are there and add up (the
    join itself is recomputed by `check`, at every full verification)."""
    side, turns, activations = record.get("side"), record.get("turns"), \
        record.get("activations")
    spent, fork, goal, was = record.get("spent"), record.get("fork"), record["goal"], \
        old["goal"]
    spent_usd = record.get("spent_usd", {})
    if not (isinstance(side, list) and side and all(isinstance(one, dict) for one in side)
            and isinstance(turns, list) and all(isinstance(one, str) for one in turns)
            and len(set(turns)) == len(turns) and isinstance(activations, list)
            and all(isinstance(one, str) for one in activations)
            and isinstance(spent, dict) and set(spent) <= set(turns)
            and all(isinstance(n, int) and n > 0 for n in spent.values())
            and isinstance(spent_usd, dict) and set(spent_usd) <= set(turns)
            and all(isinstance(n, int) and n > 0 for n in spent_usd.values())
            and isinstance(fork, int) and 1 <= fork < record["seq"] - 1
            and record.get("merged") == side[-1].get("hash") and (turns or activations)):
        return False
    status = "active" if activations else was["status"]
    if status == "active" and goal["turn_count"] >= goal["turn_ceiling"]:
        status = "exhausted"
    return (goal["turn_count"] == was["turn_count"] + len(turns)
            and goal.get("token_count", 0) == was.get("token_count", 0) + sum(spent.values())
            and goal.get("picousd", 0) == was.get("picousd", 0) + sum(spent_usd.values())
            and goal["activation_count"] == was["activation_count"] + len(activations)
            and goal["status"] == status
            and (bool(activations) or all(goal.get(key) == was.get(key)
                                          for key in _TRANCHE_KEYS)))


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
        if records.seal(one).get("hash") != one.get("hash"):
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
    for key in ("turns", "activations", "spent", "goal", "at", "fork", "merged"):
        if record.get(key) != want[key]:
            return f"says {key} {record.get(key)!r} where joining its side gives {want[key]!r}"
    return None
