"""Two clones' histories of one goal joined (goal/store/merge.py), without a remote: each clone's
ledger is written as forge's charging writes it, the join is built, staged and installed in
the clone that writes it (as remote.py does), then verified whole. Both ways round, the
joined counts are the union: turns, over-budget turns, tokens and dollars once each, the
plan's figures and the host's usage-limit mark kept; a merge record altered to drop any of
them fails closed (tests/test_goal_remote.py runs joins through a real remote)."""

from __future__ import annotations

import copy
import shutil
import time

import pytest

from forge_runtime.errors import ForgeError
from forge_runtime.goal.budget import ceilings
from forge_runtime.goal.rules.charging import Progress, Seen, charge_locked
from forge_runtime.goal.store import merge, record_file
from forge_runtime.goal.store.ledger import OVERRUN, TAMPERED, Ledger, check_transition, stage

NONCE = "5e" * 16
# the weekly window's reset (epoch s) a minute ago: a clone may already see the next week
WEEK = int(time.time()) - 60
PROGRESS = Progress("progress", None, None)


def _genesis(**extra) -> dict:
    return {"nonce": NONCE, "objective": "the parser ships", "objective_hash": "h" * 64,
            "repository": "r" * 32, "activation_id": "tranche-1", "activation_count": 1,
            "turn_count": 0, "turn_ceiling": 20, "status": "active", "token_count": 0,
            "picousd": 0, **extra}


def _usage(tokens: int, picousd: int = 0) -> dict:
    spent = {"input": tokens, "output": 0, "cache_creation": 0, "cache_read": 0}
    if picousd:
        return {"by_model": {"m": {**spent, "picousd": picousd}}, "counted": tokens,
                "picousd": picousd}
    return {"by_model": {"m": spent}, "counted": tokens}


def _reading(week_used: int, resets_at: int = WEEK, host: str = "claude") -> dict:
    return {"host": host, "at": int(time.time()),
            "windows": {"seven_day": {"used": week_used, "resets_at": resets_at}}}


class Clone:
    """One clone's ledger of the goal, written by charging's own functions."""

    def __init__(self, root) -> None:
        self.root = root
        self.ledger = Ledger(root, NONCE)

    def charge(self, *turns: str, tokens: int = 0, picousd: int = 0, **seen) -> dict:
        with self.ledger.lock():
            usage = {turn: _usage(tokens, picousd) for turn in turns} if tokens else None
            return charge_locked(self.ledger, self.ledger.settle(), list(turns), "s",
                                 turns[-1], PROGRESS, usage, Seen(**seen)).goal

    def overrun(self, turn: str, tokens: int, picousd: int = 0) -> dict:
        """A turn the host started after the goal ended (as charging.overrun records it)."""
        with self.ledger.lock():
            head = self.ledger.settle()
            goal = {**head.goal, "overrun_count": head.goal.get("overrun_count", 0) + 1,
                    "token_count": head.goal["token_count"] + tokens,
                    "picousd": head.goal["picousd"] + picousd}
            return self.ledger.append(head, OVERRUN, goal, turn=turn, session="s",
                                      origin="host", usage=_usage(tokens, picousd)).goal

    def activate(self, activation_id: str) -> dict:
        """A person's `/goal` adding the next tranche to an exhausted goal."""
        with self.ledger.lock():
            head = self.ledger.settle()
            goal = {key: value for key, value in head.goal.items() if key != "usage_limited"}
            count = goal["activation_count"] + 1
            goal.update(activation_id=activation_id, activation_count=count,
                        turn_ceiling=20 * count, status="active")
            return self.ledger.append(head, "activate", goal, session="s").goal

    def fork(self, root) -> Clone:
        """A second clone holding this one's chain as it is now."""
        shutil.copytree(self.ledger.dir, root / NONCE)
        return Clone(root)

    def records(self) -> list[dict]:
        return self.ledger.history()


def _shared(tmp_path, shared=(), tokens=0, picousd=0, reading=None,
            **extra) -> tuple[Clone, Clone]:
    """Clone a starts the goal and charges the `shared` turns; clone b copies its chain."""
    a = Clone(tmp_path / "a")
    a.ledger.create(_genesis(**extra))
    if shared:
        a.charge(*shared, tokens=tokens, picousd=picousd, plan=reading)
    return a, a.fork(tmp_path / "b")


def join(theirs: Clone, ours: Clone) -> tuple[dict, dict]:
    """`ours` takes in `theirs`' chain as remote.py's sync does: a merge record on top of
    it carrying our records since the fork, installed here. (the record, the goal as a
    full verification of our ledger then reads it)"""
    main, mine = theirs.records(), ours.records()
    fork = merge.fork_point(mine, main)
    record = merge.build(main, mine[fork:])
    with ours.ledger.lock():
        ours.ledger.install(stage(ours.root, NONCE, [*main, record]))
    return record, ours.ledger.verified()


COUNTS = ("turn_count", "token_count", "picousd", "overrun_count", "activation_count",
          "turn_ceiling", "status", "plan_week", "plan_seen", "plan_host", "usage_limited")


def _both_ways(tmp_path, a: Clone, b: Clone) -> dict:
    """Join b onto a and, in copies made first, a onto b: both give the same counts."""
    a2, b2 = a.fork(tmp_path / "a2"), b.fork(tmp_path / "b2")
    _, one = join(a, b)
    _, other = join(b2, a2)
    assert {key: one.get(key) for key in COUNTS} == {key: other.get(key) for key in COUNTS}
    return one


def test_tokens_and_dollars_a_side_spent_join_once(tmp_path):
    a, b = _shared(tmp_path)
    a.charge("t-1", tokens=100, picousd=10)
    a.charge("a-1", tokens=7, picousd=3)
    b.charge("b-1", tokens=11, picousd=5)
    goal = _both_ways(tmp_path, a, b)
    assert (goal["turn_count"], goal["token_count"], goal["picousd"]) == (3, 118, 18)


def test_the_report_counts_what_each_model_spent_in_either_clone(tmp_path):
    from forge_runtime.goal.budget import usage
    from forge_runtime.goal.views import report

    a, b = _shared(tmp_path, ["t-0"], tokens=100, picousd=10)
    a.charge("a-1", tokens=7, picousd=3)
    b.charge("b-1", tokens=11, picousd=5)
    b.charge(*[f"b-{n}" for n in range(2, 21)], tokens=1)  # b's tranche ends past a turn
    b.overrun("wake-b", 4, picousd=40)
    c = b.fork(tmp_path / "c")  # a third clone, which joins a chain holding a join already
    c.overrun("wake-c", 2)
    join(a, b)
    _, goal = join(b, c)
    by_model = report.spent_by_model(c.records())
    assert usage.counted(by_model) == goal["token_count"] == 100 + 7 + 11 + 18 + 4 + 2
    assert usage.picousd(by_model) == goal["picousd"] == 10 + 3 + 5 + 40


def test_a_join_carried_inside_another_joins_side_is_counted_once(tmp_path):
    from forge_runtime.goal.budget import usage
    from forge_runtime.goal.views import report

    a, b = _shared(tmp_path, ["t-0"], tokens=100)
    a.charge("a-1", tokens=7)
    b.charge("b-1", tokens=11)
    join(a, b)
    a.charge("a-2", tokens=13)  # a moved on without b's join: b joins again, its join inside
    record, goal = join(a, b)
    assert [one["kind"] for one in record["side"]] == ["merge"]
    assert (goal["turn_count"], goal["token_count"]) == (4, 100 + 7 + 11 + 13)
    assert usage.counted(report.spent_by_model(b.records())) == goal["token_count"]


def test_over_budget_turns_of_both_clones_join_by_turn_identity(tmp_path):
    a, b = _shared(tmp_path, [f"t-{n}" for n in range(20)], tokens=10)  # exhausted
    for clone, turn, tokens in ((a, "wake-a", 5), (b, "wake-b", 3), (a, "cron", 2),
                                (b, "cron", 2)):
        clone.overrun(turn, tokens, picousd=tokens * 1000)
    goal = _both_ways(tmp_path, a, b)
    assert goal["overrun_count"] == 3  # wake-a, wake-b, and the one both recorded, once
    assert goal["token_count"] == 200 + 5 + 3 + 2
    assert goal["picousd"] == (5 + 3 + 2) * 1000
    assert (goal["turn_count"], goal["status"]) == (20, "exhausted")


def test_a_turn_one_clone_charged_and_the_other_recorded_over_budget_is_paid_once(tmp_path):
    a, b = _shared(tmp_path, [f"t-{n}" for n in range(19)], tokens=10)
    a.charge("t-19", tokens=10)  # a's tranche ends
    a.overrun("same-turn", 5, picousd=50)
    b.charge("same-turn", tokens=5, picousd=50)  # the same turn identity, charged in b
    goal = _both_ways(tmp_path, a, b)
    assert (goal["turn_count"], goal["overrun_count"]) == (21, 1)  # each count's union
    assert (goal["token_count"], goal["picousd"]) == (200 + 5, 50)  # its spending once


def test_a_clone_over_budget_and_a_clone_reading_the_plan_join_both_ways(tmp_path):
    a, b = _shared(tmp_path, [f"t-{n}" for n in range(10)], tokens=10,
                   reading=_reading(1000), plan_ceilings={"seven_day_spend": 5000})
    a.charge(*[f"a-{n}" for n in range(10)], tokens=10, plan=_reading(1400))
    assert a.ledger.current().goal["status"] == "exhausted"
    a.overrun("wake-a", 4, picousd=9)
    for n, used in enumerate((1100, 1300, 1800)):  # b's turns read the same weekly window
        b.charge(f"b-{n}", tokens=1, plan=_reading(used))
    goal = _both_ways(tmp_path, a, b)
    assert (goal["turn_count"], goal["overrun_count"]) == (23, 1)
    assert (goal["token_count"], goal["picousd"]) == (200 + 4 + 3, 9)
    assert goal["status"] == "exhausted"
    # each clone counted the window's rise from the shared figure (1000): a 400, b 800 of
    # one account's week, which holds a's turns too: the larger, never the sum
    assert goal["plan_week"] == 800
    assert goal["plan_seen"] == {"claude": {"seven_day": {"used": 1800, "resets_at": WEEK}}}
    assert goal["plan_host"] == "claude"


def test_a_week_one_clone_saw_reset_counts_the_new_week(tmp_path):
    a, b = _shared(tmp_path, ["t-0"], reading=_reading(1000),
                   plan_ceilings={"seven_day_spend": 5000})
    a.charge("a-1", plan=_reading(3000))  # 2000 of the old week
    b.charge("b-1", plan=_reading(200, resets_at=WEEK + 7 * 86400))  # the week reset
    goal = _both_ways(tmp_path, a, b)
    assert goal["plan_week"] == 200
    assert goal["plan_seen"]["claude"]["seven_day"]["resets_at"] == WEEK + 7 * 86400


def test_clones_on_two_hosts_keep_each_hosts_figures_and_the_later_host(tmp_path,
                                                                        monkeypatch):
    from forge_runtime.goal.store import ledger

    a, b = _shared(tmp_path, ["t-0"], reading=_reading(1000),
                   plan_ceilings={"seven_day_spend": 5000})
    monkeypatch.setattr(ledger, "now", lambda: "2030-01-01T10:00:00Z")
    b.charge("b-1", plan=_reading(4000, host="codex"))  # codex's first figure: its start
    b.charge("b-2", plan=_reading(4300, host="codex"))
    monkeypatch.setattr(ledger, "now", lambda: "2030-01-01T11:00:00Z")
    a.charge("a-1", plan=_reading(1100))  # the later head: claude is where the goal ran last
    goal = _both_ways(tmp_path, a, b)
    assert goal["plan_seen"] == {
        "claude": {"seven_day": {"used": 1100, "resets_at": WEEK}},
        "codex": {"seven_day": {"used": 4300, "resets_at": WEEK}}}
    # each clone's count is its own host's rise (b 300, a 100); the join keeps the larger
    # (the limit plan.joined names: two hosts' rises are not told apart)
    assert goal["plan_week"] == 300
    assert goal["plan_host"] == "claude"


def test_a_usage_limit_in_either_clone_stops_the_tranche(tmp_path):
    a, b = _shared(tmp_path, ["t-0"])
    a.charge("a-1")
    limited = b.charge("b-1", usage_limit=True)
    assert (limited["status"], limited["usage_limited"]) == ("exhausted", True)
    goal = _both_ways(tmp_path, a, b)  # a, still active, takes in b's end, and b a's turn
    assert (goal["usage_limited"], goal["status"], goal["turn_count"]) == (True, "exhausted", 3)


def test_after_usage_limit_continue_a_joined_mark_does_not_stop(tmp_path):
    a, b = _shared(tmp_path, after_usage_limit="continue")
    a.charge("t-0")
    a.charge("a-1")
    b.charge("b-1", usage_limit=True)
    _, goal = join(b, a)
    assert goal["usage_limited"] is True and ceilings.reached(goal, ceilings.now()) is None


def test_a_mark_of_a_tranche_a_person_renewed_in_the_other_clone_is_not_kept(tmp_path):
    a, b = _shared(tmp_path, ["t-0"])
    a.charge(*[f"a-{n}" for n in range(19)])  # exhausted; a person's /goal renews it
    a.activate("tranche-2")
    b.charge("b-1", usage_limit=True)  # the host's limit, in tranche 1
    goal = _both_ways(tmp_path, a, b)
    assert goal.get("usage_limited") is None and goal["activation_count"] == 2
    assert (goal["status"], goal["turn_count"]) == ("active", 21)


def test_a_side_that_only_bound_a_session_joins_without_failing_closed(tmp_path):
    a, b = _shared(tmp_path)
    a.charge("t-0")
    a.charge("a-1", tokens=5)
    with b.ledger.lock():
        head = b.ledger.settle()
        b.ledger.append(head, "bind", head.goal, session="fresh")
    record, goal = join(a, b)
    assert (record["turns"], goal["turn_count"], goal["token_count"]) == ([], 2, 5)


def _joined(tmp_path) -> tuple[list[dict], dict]:
    """(the main chain, the merge record joining onto it a side with a turn, an
    over-budget turn, a plan reading and the usage-limit mark)"""
    a, b = _shared(tmp_path, ["t-0"], reading=_reading(1000),
                   plan_ceilings={"seven_day_spend": 5000})
    a.charge("a-1", plan=_reading(1100))
    b.charge("b-1", tokens=6, picousd=60, plan=_reading(1500), usage_limit=True)
    b.overrun("wake-b", 4, picousd=40)
    main, side = a.records(), b.records()[2:]
    return main, merge.build(main, side)


def _drop_overrun(record):
    record["overruns"] = []


def _drop_overrun_whole(record):
    del record["overruns"]
    del record["spent"]["wake-b"]
    del record["spent_usd"]["wake-b"]
    record["goal"].update(overrun_count=0, token_count=6, picousd=60)


def _lower_count(record):
    record["goal"]["overrun_count"] = 0


def _drop_tokens(record):
    record["goal"]["token_count"] -= 4


def _drop_dollars(record):
    del record["spent_usd"]["wake-b"]
    record["goal"]["picousd"] -= 40


def _drop_plan(record):
    record["goal"].update(plan_week=100, plan_seen={
        "claude": {"seven_day": {"used": 1100, "resets_at": WEEK}}})


def _drop_mark(record):
    del record["goal"]["usage_limited"]


@pytest.mark.parametrize("alter", [_drop_overrun, _drop_overrun_whole, _lower_count,
                                   _drop_tokens, _drop_dollars, _drop_plan, _drop_mark])
def test_a_merge_record_altered_to_drop_what_the_side_holds_fails_closed(tmp_path, alter):
    main, record = _joined(tmp_path)
    assert (record["overruns"], record["goal"]["overrun_count"]) == (["wake-b"], 1)
    assert (record["goal"]["token_count"], record["goal"]["picousd"]) == (10, 100)
    assert (record["goal"]["plan_week"], record["goal"]["usage_limited"]) == (500, True)
    forged = copy.deepcopy(record)
    del forged["hash"]
    alter(forged)
    forged = record_file.seal(forged)
    with pytest.raises(ForgeError) as refused:
        stage(tmp_path / "staging", NONCE, [*main, forged])
    assert refused.value.code == TAMPERED


@pytest.mark.parametrize("alter", [_drop_overrun, _lower_count, _drop_tokens, _drop_plan,
                                   _drop_mark])
def test_a_merge_head_whose_goal_does_not_follow_its_fields_fails_the_o1_check(tmp_path,
                                                                                alter):
    main, record = _joined(tmp_path)
    check_transition(main[-1], record, NONCE)
    forged = copy.deepcopy(record)
    del forged["hash"]
    alter(forged)
    with pytest.raises(ForgeError) as refused:
        check_transition(main[-1], record_file.seal(forged), NONCE)
    assert refused.value.code == TAMPERED
