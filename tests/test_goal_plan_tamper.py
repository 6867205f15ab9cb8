"""A hostile corpus against the plan's allowance and the price table: every way an
agent could lower, hide, replace, link, truncate, delete, roll back or forge the figures
forge reads, run in a scratch project through forge's own hook entry points. Each attack
must end in a denial, FORGE_GOAL_LEDGER_TAMPERED or the goal stopped, or be provably
harmless (it can only stop the goal sooner); never more budget, never a traceback.

Where an attacker could recompute a hash (a record of the ledger, sealed as forge seals
it), the case writes it so: only the witness, or the ledger's rules, may catch it.
"""

from __future__ import annotations

import json
import os
import shutil
import threading
import time
from pathlib import Path

import pytest
from goal_support import Session, goal_project_fixture

from forge_runtime.goal.budget import plan
from forge_runtime.goal.events import catch_up
from forge_runtime.goal.events.stop import PLAN_UNAVAILABLE_CODE
from forge_runtime.goal.hosts import plan_readings
from forge_runtime.goal.store import layout, record_file, state_file
from forge_runtime.goal.store.ledger import Ledger, now
from forge_runtime.hooks import pre_tool_use, stop

OBJECTIVE = "the invoice totals add up"
HOUR, DAY = 3600, 86400
TAMPERED = "FORGE_GOAL_LEDGER_TAMPERED"
STOPPED_CODES = (TAMPERED, "FORGE_GOAL_BUDGET_EXHAUSTED", PLAN_UNAVAILABLE_CODE)

project = goal_project_fixture()


@pytest.fixture(autouse=True)
def _own_witness(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    monkeypatch.setattr(catch_up, "PLAN_WAIT_SECONDS", 0.05)


def _guard(project, text: str) -> None:
    (project.root / ".forge").mkdir(exist_ok=True)
    (project.root / ".forge" / "guard.yaml").write_text(
        "goal:\n  require_sandbox: false\n" + text)


class Clock:
    """The windows of one account: a 5-hour window resetting in an hour, a week in six days."""

    def __init__(self) -> None:
        self.now = int(time.time())
        self.five_hour_reset = self.now + HOUR
        self.week_reset = self.now + 6 * DAY

    def reading(self, five_hour=None, seven_day=None, **changes) -> dict:
        windows = {}
        if five_hour is not None:
            windows["five_hour"] = {"used": round(five_hour * 100),
                                    "resets_at": self.five_hour_reset}
        if seven_day is not None:
            windows["seven_day"] = {"used": round(seven_day * 100),
                                    "resets_at": self.week_reset}
        return {"host": "claude", "at": int(time.time()), "windows": windows, **changes}


def _show(project, session: Session, reading: dict) -> None:
    """forge's status line keeps what the host reports now (both copies, as forge does)."""
    plan_readings.record(str(project.ledger_root), session.id, reading)


def _paths(project, session: Session):
    stored = project.ledger_root / "sessions" / f"{session.id}.plan.json"
    mirror = project.root.parent / "state" / "forge" / "witness" / "plan" / \
        f"{session.id}.json"
    assert stored.is_file() and mirror.is_file()
    return stored, mirror


def _ledger(project) -> Ledger:
    return Ledger(project.ledger_root, state_file.read(project.state_path).goal["nonce"])


def _tool_call(session: Session) -> str | None:
    """forge's real PreToolUse entry point: the deny reason, or None (allowed)."""
    reply = pre_tool_use.handle(session.event("PreToolUse", tool_name="Bash",
                                              tool_input={"command": "true"}))
    if reply is None:
        return None
    return reply["hookSpecificOutput"]["permissionDecisionReason"]


def _stop(session: Session) -> dict | None:
    """One model turn, answered by forge's real Stop entry point."""
    session.work()
    return stop.handle(session.event("Stop", stop_hook_active=True))


def _assert_stopped(session: Session) -> tuple[str, str]:
    """The attack got nothing: the next tool call is denied and the turn's Stop ends the
    session, each with one of the fail-closed codes."""
    denied = _tool_call(session)
    assert denied is not None and any(code in denied for code in STOPPED_CODES), denied
    reply = _stop(session)
    assert reply is not None and reply.get("continue") is False, reply
    assert any(code in reply["stopReason"] for code in STOPPED_CODES), reply["stopReason"]
    return denied, reply["stopReason"]


def _typed(project, ceilings: str, shown: dict) -> tuple[Session, Clock]:
    """A person's /goal held to the plan `ceilings`, typed while the status line showed the
    windows `shown` (Clock.reading's arguments)."""
    _guard(project, f"  plan: {ceilings}\n")
    clock = Clock()
    session = Session(project)
    _show(project, session, clock.reading(**shown))
    session.person_goal(OBJECTIVE)
    return session, clock


def _charged(project, ceilings: str, typed: dict, charged: dict | None = None
             ) -> tuple[Session, Clock]:
    """`_typed`'s goal with its first turn charged at `charged` (at `typed` when None),
    below every ceiling (its pace may make the next turn the last: the model is told)."""
    session, clock = _typed(project, ceilings, typed)
    if charged is not None:
        _show(project, session, clock.reading(**charged))
    going_on = _stop(session)
    assert going_on is None or "continue" not in going_on, going_on
    return session, clock


# -- Claude Code's stored readings and their mirror -----------------------------------------

def _rising(project) -> tuple[Session, Clock]:
    """A goal held to 80% of the 5-hour window, charged at 70%; the status line has since
    stored 90%: without an attack, the next tool call is denied."""
    session, clock = _charged(project, "{five_hour: 80}", {"five_hour": 70})
    _show(project, session, clock.reading(five_hour=90))
    return session, clock


def _write_json(path, reading) -> None:
    path.write_text(json.dumps(reading))


def _lower(path, clock) -> None:
    _write_json(path, clock.reading(five_hour=10))


def _fifo(path) -> None:
    path.unlink()
    os.mkfifo(path)


def _link_to_forgery(path, clock) -> None:
    forged = path.parent / "forged.json"
    _write_json(forged, clock.reading(five_hour=10))
    path.unlink()
    os.symlink(forged, path)


STORE_ATTACKS = {
    "stored copy lowered": lambda stored, mirror, clock: _lower(stored, clock),
    "mirror lowered": lambda stored, mirror, clock: _lower(mirror, clock),
    "stored copy lowered, mirror deleted": lambda stored, mirror, clock: (
        _lower(stored, clock), mirror.unlink()),
    "stored copy a link to a forgery": lambda stored, mirror, clock: _link_to_forgery(
        stored, clock),
    "mirror a link to a forgery": lambda stored, mirror, clock: _link_to_forgery(mirror, clock),
    "stored copy a FIFO": lambda stored, mirror, clock: _fifo(stored),
    "mirror a FIFO": lambda stored, mirror, clock: _fifo(mirror),
    "stored copy truncated": lambda stored, mirror, clock: stored.write_bytes(b""),
    "mirror truncated": lambda stored, mirror, clock: mirror.write_bytes(
        mirror.read_bytes()[:20]),
    "stored copy a directory": lambda stored, mirror, clock: (stored.unlink(), stored.mkdir()),
    "stored copy not a reading": lambda stored, mirror, clock: _write_json(
        stored, {"five_hour": 0}),
    "stored copy rolled back to the charged reading": lambda stored, mirror, clock:
        _write_json(stored, clock.reading(five_hour=70)),
    "stored copy claims the window reset": lambda stored, mirror, clock: _write_json(
        stored, {**clock.reading(), "windows": {"five_hour": {
            "used": 0, "resets_at": clock.five_hour_reset + 5 * HOUR}}}),
}


@pytest.mark.parametrize("attack", STORE_ATTACKS.values(), ids=STORE_ATTACKS.keys())
def test_a_stored_reading_the_agent_changed_grants_nothing(project, attack):
    session, clock = _rising(project)
    attack(*_paths(project, session), clock)
    _assert_stopped(session)


def test_a_reading_planted_where_the_status_line_never_wrote_one_grants_nothing(project):
    """No status line ran (an API key login, `claude -p`): the goal must end for want of
    figures, and a low reading the agent plants under the ledger root must not stand in."""
    _guard(project, "  plan: {five_hour: 80}\n")
    clock = Clock()
    session = Session(project)
    session.person_goal(OBJECTIVE)
    stored = project.ledger_root / "sessions" / f"{session.id}.plan.json"
    stored.parent.mkdir(parents=True, exist_ok=True)
    _write_json(stored, clock.reading(five_hour=1))
    reply = _stop(session)
    assert reply["continue"] is False and TAMPERED in reply["stopReason"]
    assert TAMPERED in _tool_call(session)


# -- the witness root written too: forged in both copies, a reading still only adds ----------

def _charged_high(project) -> tuple[Session, Clock]:
    """A goal held to 80% of the 5-hour window and 5 points of the week, charged at 79% and
    4 points (34% of the week, from 30% when the person typed /goal)."""
    session, clock = _charged(project, "{five_hour: 80, seven_day_spend: 5}",
                              {"five_hour": 30, "seven_day": 30},
                              {"five_hour": 79, "seven_day": 34})
    goal = _ledger(project).current().goal
    assert goal["plan_week"] == 400 and goal["plan_seen"]["claude"]["five_hour"]["used"] == 7900
    return session, clock


def _both(forgery):
    def attack(stored, mirror, clock):
        for path in (stored, mirror):
            _write_json(path, forgery(clock))
    return attack


def _claimed_reset(clock: Clock, **reading) -> dict:
    return {**clock.reading(), **reading, "windows": {
        "five_hour": {"used": 0, "resets_at": clock.five_hour_reset + 5 * HOUR},
        "seven_day": {"used": 0, "resets_at": clock.week_reset + 7 * DAY}}}


WITNESS_FORGERIES = {
    "both lowered in the same windows": _both(lambda clock: clock.reading(five_hour=5,
                                                                          seven_day=5)),
    "both rolled back to the /goal's reading": _both(lambda clock: clock.reading(
        five_hour=30, seven_day=30)),
    "both claim the windows reset": _both(_claimed_reset),
    "both claim the windows reset, read in the future": _both(lambda clock: _claimed_reset(
        clock, at=clock.week_reset + 60)),
    "both say the windows end now": _both(lambda clock: clock.reading(windows={
        "five_hour": {"used": 7900, "resets_at": clock.now - 1},
        "seven_day": {"used": 3400, "resets_at": clock.now - 1}})),
    "both leave the week out": _both(lambda clock: clock.reading(five_hour=79)),
    "both leave the 5-hour window out": _both(lambda clock: clock.reading(seven_day=34)),
    "both report no windows": _both(lambda clock: clock.reading()),
    "both from another host": _both(lambda clock: clock.reading(five_hour=1, seven_day=1,
                                                                host="codex")),
    "mirror lowered, stored copy deleted": lambda stored, mirror, clock: (
        _lower(mirror, clock), stored.unlink()),
    "both deleted": lambda stored, mirror, clock: (stored.unlink(), mirror.unlink()),
}


@pytest.mark.parametrize("attack", WITNESS_FORGERIES.values(), ids=WITNESS_FORGERIES.keys())
def test_a_reading_forged_in_both_copies_lowers_nothing_the_goal_was_charged(project, attack):
    """Past what forge can tell from a plausible figure: the forgery either ends the goal,
    or the goal keeps every figure its charges carried (no window lower, none reset before
    its time, none dropped, the goal's own week not restarted)."""
    session, clock = _charged_high(project)
    attack(*_paths(project, session), clock)
    _tool_call(session)  # no traceback, whatever it answers
    reply = _stop(session)
    if reply is not None and reply.get("continue") is False:
        assert any(code in reply["stopReason"] for code in STOPPED_CODES), reply
        return
    goal = _ledger(project).current().goal
    windows = goal["plan_seen"]["claude"]
    assert goal["plan_host"] == "claude" and goal["plan_week"] >= 400
    assert windows["five_hour"] == {"used": 7900, "resets_at": clock.five_hour_reset}
    assert windows["seven_day"]["used"] >= 3400
    assert windows["seven_day"]["resets_at"] == clock.week_reset
    # the host's own next figures stop it as they would have without the forgery
    _show(project, session, clock.reading(five_hour=79.5, seven_day=35.5))
    _assert_stopped(session)


def test_a_crash_between_the_mirror_and_the_stored_copy_still_counts(project):
    """The one state a crash leaves (record() writes the mirror first): a first reading with
    no stored copy yet. Not tampering; the reading counts."""
    session, clock = _rising(project)
    stored, mirror = _paths(project, session)
    stored.unlink()
    denied, text = _assert_stopped(session)
    assert "FORGE_GOAL_BUDGET_EXHAUSTED" in denied and TAMPERED not in text


def test_a_status_line_parked_between_its_two_writes_is_no_tampering(project, monkeypatch):
    """A loaded machine can stop the status line between the mirror and the copy for far
    longer than the writes take (here a second, a new figure in the same second as the
    last): the copy dated before its mirror is that writer's, not the agent's."""
    from forge_runtime import safeio

    session, clock = _rising(project)
    stored, _ = _paths(project, session)
    replace, mirrored = safeio.replace, threading.Event()

    def parked_before_the_copy(path, data, *args, **kwargs):
        if path == str(stored):
            mirrored.set()
            time.sleep(1.0)
        return replace(path, data, *args, **kwargs)

    monkeypatch.setattr(safeio, "replace", parked_before_the_copy)
    writer = threading.Thread(target=_show, args=(project, session,
                                                  clock.reading(five_hour=95)))
    writer.start()
    try:
        assert mirrored.wait(5)
        denied, text = _assert_stopped(session)
    finally:
        writer.join()
    assert "FORGE_GOAL_BUDGET_EXHAUSTED" in denied and TAMPERED not in denied + text, denied
    assert "95%" in denied, denied


def test_two_figures_in_one_second_are_kept_a_second_apart(project):
    """What lets `latest` tell a writer between its writes from a forgery: each reading kept
    is dated after the last, so the copy a parked writer has not replaced is the older."""
    session, clock = _rising(project)
    stored, mirror = _paths(project, session)
    first = json.loads(mirror.read_text())
    _show(project, session, {**clock.reading(five_hour=95), "at": first["at"]})
    kept = json.loads(mirror.read_text())
    assert kept["at"] == first["at"] + 1 and kept["windows"]["five_hour"]["used"] == 9500
    assert json.loads(stored.read_text()) == kept
    _show(project, session, kept)  # the same figures again: nothing moves
    assert json.loads(mirror.read_text()) == kept


# -- the ledger's charge records, rewritten (the witness catches) or appended (the rules do) -

def _sealed_after(ledger: Ledger, head: dict, kind: str, goal: dict, **fields) -> dict:
    """A record the attacker seals and appends as forge would (a sha256 anyone computes),
    the head pointer moved to it; no rule of forge's is asked."""
    record = record_file.seal({"at": now(), **fields, "seq": head["seq"] + 1,
                           "prev": head["hash"], "kind": kind, "goal": goal})
    path = os.path.join(ledger.records_dir, record_file.record_name(record["seq"]))
    with open(path, "w") as handle:
        handle.write(json.dumps(record))
    with open(ledger.head_path, "w") as handle:
        handle.write(json.dumps({"seq": record["seq"], "hash": record["hash"]}))
    return record


def _append(project, kind: str, change, **fields) -> dict:
    """Append a `kind` record whose goal is the head's after `change`, sealed as forge
    seals one (`_sealed_after`)."""
    ledger = _ledger(project)
    head = ledger.current()
    return _sealed_after(ledger, head.record, kind, change(dict(head.goal)), **fields)


def _one_more_turn(goal: dict) -> dict:
    return {**goal, "turn_count": goal["turn_count"] + 1}


def _forged_charge(project, reading: dict | None, **goal_changes) -> dict:
    """Append a charge carrying `reading`, its goal moved as goal/budget/plan.py moves it (so the
    ledger's own rule accepts the arithmetic), plus `goal_changes`."""
    def change(goal: dict) -> dict:
        goal = _one_more_turn(goal)
        return {**(goal if reading is None else plan.advanced(goal, reading)), **goal_changes}

    fields = {"turn": "forged-turn", "session": "forged", "unchanged": 0}
    if reading is not None:
        fields["plan"] = reading
    return _append(project, "charge", change, **fields)


def _over(project) -> tuple[Session, Clock]:
    """A goal held to 80% of the 5-hour window, 40% of the week and 5 points of its own,
    charged at 70% and 30%; the status line now shows 90% of the 5-hour window: without
    an attack, the next tool call is denied and the Stop ends the goal."""
    session, clock = _charged(project, "{five_hour: 80, seven_day: 40, seven_day_spend: 5}",
                              {"five_hour": 70, "seven_day": 30})
    _show(project, session, clock.reading(five_hour=90, seven_day=30))
    return session, clock


def _reset_claim(clock: Clock) -> dict:
    return clock.reading(windows={
        "five_hour": {"used": 0, "resets_at": clock.five_hour_reset + 5 * HOUR},
        "seven_day": {"used": 0, "resets_at": clock.week_reset + 7 * DAY}})


LEDGER_ATTACKS = {
    # appended, sealed as forge seals: the ledger's rules are what stand
    "charge with a lower reading in the same window":
        lambda project, clock: _forged_charge(project, clock.reading(five_hour=5, seven_day=30)),
    "charge claiming both windows reset before they could":
        lambda project, clock: _forged_charge(project, _reset_claim(clock)),
    "charge whose reading says the windows end now":
        lambda project, clock: _forged_charge(project, clock.reading(windows={
            "five_hour": {"used": 9000, "resets_at": clock.now - 1},
            "seven_day": {"used": 3000, "resets_at": clock.now - 1}})),
    "charge whose reading leaves the windows out":
        lambda project, clock: _forged_charge(project, clock.reading()),
    "charge whose reading is of another host":
        lambda project, clock: _forged_charge(project, clock.reading(
            five_hour=1, seven_day=1, host="codex")),
    "charge whose reading is from the future, past the reset":
        lambda project, clock: _forged_charge(project, {
            **_reset_claim(clock), "at": clock.week_reset + 8 * DAY}),
    "charge and its reading dated in the future, past the reset":
        lambda project, clock: _append(project, "charge", lambda goal: plan.advanced(
            _one_more_turn(goal), {**_reset_claim(clock), "at": clock.week_reset + 60}),
            turn="forged", plan={**_reset_claim(clock), "at": clock.week_reset + 60},
            at=time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(clock.week_reset + 60))),
    "charge lowering the goal's own week without a reading":
        lambda project, clock: _forged_charge(project, None, plan_week=0),
    "charge dropping the figures it was seen at":
        lambda project, clock: _forged_charge(project, None, plan_seen={}),
    "charge dropping the plan ceilings":
        lambda project, clock: _forged_charge(project, None, plan_ceilings=None),
    "charge going on after the usage limit":
        lambda project, clock: _forged_charge(project, None, after_usage_limit="continue"),
    "charge with a reading that is not one":
        lambda project, clock: _forged_charge(project, {"host": "claude", "at": "now",
                                                         "windows": {}}),
    "charge marked usage_limit false":
        lambda project, clock: _append(project, "charge", _one_more_turn, turn="forged",
                                       usage_limit=False),
    "checkpoint that moves the plan's figures":
        lambda project, clock: _append(project, "checkpoint", lambda goal: plan.advanced(
            goal, clock.reading(five_hour=1))),
}


@pytest.mark.parametrize("attack", LEDGER_ATTACKS.values(), ids=LEDGER_ATTACKS.keys())
def test_a_forged_charge_record_grants_no_plan_allowance(project, attack):
    session, clock = _over(project)
    attack(project, clock)
    _assert_stopped(session)


def test_a_forged_reset_in_the_ledger_alone_does_not_reset_the_goals_own_week(project):
    """Appended with no status line to contradict it: the charge that claims the week reset
    before its reset time must not restart the goal's own use of the week."""
    session, clock = _charged(project, "{seven_day_spend: 5}", {"seven_day": 30},
                              {"seven_day": 34})
    assert _ledger(project).current().goal["plan_week"] == 400
    _forged_charge(project, clock.reading(windows={
        "seven_day": {"used": 0, "resets_at": clock.week_reset + 7 * DAY}}))
    assert _ledger(project).current().goal["plan_week"] >= 400
    _show(project, session, clock.reading(seven_day=35.5))
    _assert_stopped(session)


def test_a_forged_charge_that_leaves_the_week_out_does_not_hide_the_goals_rise(project):
    session, clock = _charged(project, "{seven_day_spend: 5}", {"seven_day": 30},
                              {"seven_day": 34})
    _forged_charge(project, clock.reading(five_hour=1))
    assert _ledger(project).current().goal["plan_seen"]["claude"]["seven_day"]["used"] == 3400
    _show(project, session, clock.reading(seven_day=35.5))
    _assert_stopped(session)


def _assert_caught(session: Session) -> None:
    """The goal was under its ceilings, so a tool call may run on the figures the session's
    last charge left (no traceback either way); its Stop, with the witness, ends it."""
    _tool_call(session)
    reply = _stop(session)
    assert reply is not None and reply["continue"] is False and TAMPERED in reply["stopReason"]


def _rewrite_last_charge(project, change) -> None:
    """Edit the last charge record and reseal it, the head pointer with it: a hash anyone
    computes, so only the witness's note of the head catches it."""
    ledger = _ledger(project)
    head = ledger.current()
    record = dict(head.record)
    change(record)
    sealed = record_file.seal(record)
    path = os.path.join(ledger.records_dir, record_file.record_name(record["seq"]))
    with open(path, "w") as handle:
        handle.write(json.dumps(sealed))
    with open(ledger.head_path, "w") as handle:
        handle.write(json.dumps({"seq": sealed["seq"], "hash": sealed["hash"]}))


def _lowered_reading(record: dict) -> None:
    """The charge's reading at 0%, and its goal's figures with it (as if it had carried
    that reading)."""
    windows = {name: {**window, "used": 0} for name, window in record["plan"]["windows"].items()}
    record["plan"] = {**record["plan"], "windows": windows}
    record["goal"] = {**record["goal"], "plan_seen": {"claude": windows}}


REWRITES = {
    "last charge's reading lowered with its goal": _lowered_reading,
    "last charge's plan_week zeroed": lambda record: record["goal"].update(plan_week=0),
    "last charge's reading dropped": lambda record: record.pop("plan"),
    "last charge's plan ceilings dropped": lambda record: record["goal"].pop("plan_ceilings"),
    "last charge's price table swapped": lambda record: record["goal"].update(
        prices={"digest": "0" * 64, "version": "genai-prices forged"}),
}


@pytest.mark.parametrize("change", REWRITES.values(), ids=REWRITES.keys())
def test_a_resealed_charge_record_is_caught(project, change):
    session, _ = _charged(project, "{five_hour: 80, seven_day_spend: 5}",
                              {"five_hour": 70, "seven_day": 30},
                              {"five_hour": 75, "seven_day": 32})
    _rewrite_last_charge(project, change)
    _assert_caught(session)


def test_a_ledger_rolled_back_past_the_charge_that_carried_a_reading_is_caught(project):
    session, clock = _charged(project, "{seven_day_spend: 5}", {"seven_day": 30},
                              {"seven_day": 33})
    ledger = _ledger(project)
    saved = project.root.parent / "saved"
    shutil.copytree(ledger.dir, saved)
    _show(project, session, clock.reading(seven_day=34.5))
    assert _stop(session) is None
    shutil.rmtree(ledger.dir)
    shutil.copytree(saved, ledger.dir)
    _assert_caught(session)


# -- .forge/guard.yaml edited after the person's /goal (a write the guard missed) ---------

GUARD_EDITS = {
    "plan ceilings removed": "",
    "plan ceilings raised": "  plan: {five_hour: 100, seven_day: 100}\n",
    "after_usage_limit: continue": "  plan: {five_hour: 80}\n  after_usage_limit: continue\n",
    "not YAML": "  plan: [\n",
}


@pytest.mark.parametrize("text", GUARD_EDITS.values(), ids=GUARD_EDITS.keys())
def test_guard_yaml_edited_mid_goal_changes_nothing_sealed(project, text):
    session, clock = _rising(project)
    _guard(project, text)
    _assert_stopped(session)


def test_a_usage_limit_mark_survives_guard_yaml_saying_continue(project):
    from forge_runtime.goal.rules import charging

    session = Session(project)
    session.person_goal(OBJECTIVE)
    assert _stop(session) is None
    _guard(project, "  after_usage_limit: continue\n")
    turn = session.work()
    result = charging.charge(_ledger(project), project.state_path, [turn], session.id, turn,
                             seen=charging.Seen(usage_limit=True))
    assert result.exhausted_now
    reply = _stop(session)
    assert reply["continue"] is False and "FORGE_GOAL_USAGE_LIMIT" in reply["stopReason"]


# -- the sealed price table ------------------------------------------------------------------

def _priced(project) -> tuple[Session, str]:
    _guard(project, "  tranche: {usd: 5}\n")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    assert _stop(session) is None

    digest = _ledger(project).current().goal["prices"]["digest"]
    return session, layout.sealed_prices_file(project.ledger_root, digest)


def _other_table(path: str) -> None:
    from forge_runtime.goal.budget import pricing

    table = json.loads(Path(path).read_text())
    for entry in table["models"]:
        entry["prices"] = {key: 0 for key in entry["prices"]}
    with open(path, "wb") as handle:
        handle.write(pricing.encode(table))


def _table_link(path: str) -> None:
    copy = path + ".copy"
    shutil.copy(path, copy)
    os.unlink(path)
    os.symlink(copy, path)


def _table_fifo(path: str) -> None:
    os.unlink(path)
    os.mkfifo(path)


TABLE_ATTACKS = {
    "edited to price nothing": _other_table,
    "deleted": os.unlink,
    "truncated": lambda path: open(path, "w").close(),
    "a link to its own copy": _table_link,
    "a FIFO": _table_fifo,
    "a directory": lambda path: (os.unlink(path), os.mkdir(path)),
}


@pytest.mark.parametrize("attack", TABLE_ATTACKS.values(), ids=TABLE_ATTACKS.keys())
def test_a_sealed_price_table_changed_on_disk_fails_closed(project, attack, monkeypatch):
    from forge_runtime.goal.budget import pricing

    session, path = _priced(project)
    monkeypatch.setattr(pricing, "_loaded", {})  # each hook is a process of its own
    attack(path)
    denied, text = _assert_stopped(session)
    assert TAMPERED in denied and TAMPERED in text


def test_a_charge_that_swaps_the_sealed_table_is_refused(project):
    from forge_runtime.goal.budget import pricing

    session, path = _priced(project)
    table = json.loads(Path(path).read_text())
    table["version"] = "forged"
    other = pricing.seal(project.ledger_root, pricing.encode(table))
    _append(project, "charge", lambda goal: {**_one_more_turn(goal), "prices": other},
            turn="forged")
    denied, text = _assert_stopped(session)
    assert TAMPERED in text


# -- the pending note of a /goal (under the ledger root, written before the first turn) -----

def _pending(project, session: Session) -> dict:
    from forge_runtime.goal.store import sessions

    return sessions.read_pending(str(project.ledger_root), session.id)


def _forge_pending(project, session: Session, change) -> None:
    from forge_runtime.goal.store import sessions

    note = _pending(project, session)
    change(note)
    path = project.ledger_root / "sessions" / f"{session.id}.pending.json"
    path.write_text(json.dumps(note))
    assert sessions.read_pending(str(project.ledger_root), session.id) == note


def _high_start(clock: Clock, **reading) -> dict:
    return {**clock.reading(**reading), "windows": {
        "seven_day": {"used": 9999, "resets_at": clock.week_reset}}}


PENDING_FORGERIES = {
    "the prompt's reading raised": lambda note, clock: note.update(plan=_high_start(clock)),
    "the prompt's reading raised, a later reset": lambda note, clock: note.update(plan={
        **clock.reading(), "windows": {"seven_day": {"used": 9999,
                                                     "resets_at": clock.week_reset + DAY}}}),
    "the prompt's reading of another host": lambda note, clock: note.update(
        plan=_high_start(clock, host="codex")),
    "the first turn's plan ceilings dropped": lambda note, clock: note["limits"].pop(
        "plan_ceilings"),
    "the first turn's figures raised": lambda note, clock: note["limits"].update(
        plan_seen={"claude": _high_start(clock)["windows"]}),
}


@pytest.mark.parametrize("change", PENDING_FORGERIES.values(), ids=PENDING_FORGERIES.keys())
def test_a_forged_pending_note_does_not_move_where_the_goals_week_starts(project, change):
    """The goal's own use of the week counts from the reading the person's prompt found; an
    agent's first turn that rewrites the pending note must not start it higher (which would
    hide the goal's use) nor free the goal of its ceilings."""
    session, clock = _typed(project, "{seven_day_spend: 5}", {"seven_day": 30})
    _forge_pending(project, session, lambda note: change(note, clock))
    _tool_call(session)  # the first turn: no traceback
    _show(project, session, clock.reading(seven_day=33))
    assert _stop(session) is None
    goal = _ledger(project).current().goal
    assert goal["plan_ceilings"] == {"seven_day_spend": 500} and goal["plan_week"] == 300
    _show(project, session, clock.reading(seven_day=35))
    _assert_stopped(session)


def test_a_binding_whose_goal_lost_its_plan_ceilings_still_stops_at_the_stop(project):
    """The binding's copy of the goal (what a tool call starts from) sits under the ledger
    root without a witness: edited, the turn's tool calls may run on it, but its Stop
    charges against the ledger and ends the goal."""
    from forge_runtime.goal.store import sessions

    session, clock = _rising(project)
    binding = sessions.read_binding(str(project.ledger_root), session.id)
    binding["goal"].pop("plan_ceilings")
    sessions.write_binding(str(project.ledger_root), session.id, binding)
    _tool_call(session)
    reply = _stop(session)
    assert reply is not None and reply["continue"] is False
    assert any(code in reply["stopReason"] for code in STOPPED_CODES)


@pytest.mark.parametrize("damage", [
    lambda path: path.write_text("{"),
    lambda path: path.write_text(json.dumps({"limits": {}, "plan": {"host": "claude"}})),
    lambda path: path.write_text(json.dumps({"plan": None})),
    lambda path: (path.unlink(), os.mkfifo(path)),
], ids=["not JSON", "not a reading", "no ceilings", "a FIFO"])
def test_what_the_prompt_found_damaged_in_the_witness_root_fails_closed(project, damage):
    session, _ = _typed(project, "{seven_day_spend: 5}", {"seven_day": 30})
    kept = project.root.parent / "state" / "forge" / "witness" / "prompts" / \
        f"{session.id}.json"
    assert json.loads(kept.read_text())["plan"]["windows"]["seven_day"]["used"] == 3000
    damage(kept)
    reply = _stop(session)
    assert reply["continue"] is False and TAMPERED in reply["stopReason"]


# -- the compiled price table an activation seals -------------------------------------------

def _zero_priced(path) -> None:
    """A compiled table in which every model, family and host costs nothing."""
    from forge_runtime.goal.budget import price_table, pricing

    table = price_table.compile_table()
    for entry in table["models"]:
        entry["prices"], entry["tiers"] = {key: 0 for key in entry["prices"]}, []
    for group in (table["families"], table["hosts"]):
        for name in group:
            group[name] = {key: 0 for key in group[name]}
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_bytes(pricing.encode(table))


@pytest.mark.parametrize("where", ["user cache", "project virtualenv"])
def test_a_compiled_table_an_agent_could_write_is_never_sealed(project, monkeypatch, where):
    """An interpreter outside forge-env keeps its compiled table in the user's cache (or a
    virtualenv inside the project): places the guard lets an agent write. A table of zero
    prices planted there before a person's /goal must not price the goal's turns."""
    from forge_runtime.goal.budget import price_table

    home = project.root.parent / "home"
    monkeypatch.setenv("HOME", str(home))
    planted = (home / ".cache" if where == "user cache" else project.root / ".venv") / \
        "forge" / "forge-prices.json"
    _zero_priced(planted)
    monkeypatch.setattr(price_table, "compiled_path", lambda: planted)
    write = pre_tool_use.handle({"session_id": "agent", "hook_event_name": "PreToolUse",
                                 "cwd": str(project.root), "tool_name": "Write",
                                 "tool_input": {"file_path": str(planted), "content": "{}"}})
    assert write is None  # the guard does not keep the agent out of it
    _guard(project, "  tranche: {usd: 5}\n")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    session._append({"type": "assistant", "message": {
        "id": "msg_1", "model": "claude-opus-4-5", "role": "assistant", "stop_reason": "end_turn",
        "usage": {"input_tokens": 100_000, "output_tokens": 1000},
        "content": [{"type": "text", "text": "working"}]}})
    assert stop.handle(session.event("Stop", stop_hook_active=True)) is None
    goal = _ledger(project).current().goal
    assert goal["picousd"] > 0
    assert _ledger(project).history()[-1]["usage"]["picousd"] == goal["picousd"]


def test_forge_envs_compiled_table_is_kept_from_agents(project, monkeypatch):
    """forge-env's own table (in the plugin's data) is what an activation reads as it is:
    the guard denies an agent's write to it, by the file tools and by Bash."""
    data = project.root.parent / "data"
    monkeypatch.setenv("CLAUDE_PLUGIN_DATA", str(data))
    table = data / "forge-env" / "share" / "forge" / "forge-prices.json"
    for tool, tool_input in (("Write", {"file_path": str(table), "content": "{}"}),
                             ("Bash", {"command": f"echo '{{}}' > {table}"})):
        reply = pre_tool_use.handle({"session_id": "agent", "hook_event_name": "PreToolUse",
                                     "cwd": str(project.root), "tool_name": tool,
                                     "tool_input": tool_input})
        assert reply["hookSpecificOutput"]["permissionDecision"] == "deny"
    from forge_runtime.goal.rules import activation

    assert activation._kept_from_agents(project, table)


# -- a Codex rollout with a later token_count line the agent wrote ---------------------------
# Codex's reader (the host adapter's `plan_reading`) hands the last token_count's
# `rate_limits` to `plan.from_codex`, read now; whatever that line says, what the goal was
# charged stays (the reader itself, and keeping what it read, are Codex's adapter's).

def _codex(clock: Clock, five_hour: dict | None, week: dict | None) -> dict:
    limits = {}
    if five_hour is not None:
        limits["primary"] = {"window_minutes": 300, **five_hour}
    if week is not None:
        limits["secondary"] = {"window_minutes": 10080, **week}
    return plan.from_codex(limits, clock.now)


CODEX_LINES = {
    "lower figures": lambda clock: _codex(
        clock, {"used_percent": 1, "resets_at": clock.five_hour_reset},
        {"used_percent": 1, "resets_at": clock.week_reset}),
    "a reset before its time": lambda clock: _codex(
        clock, {"used_percent": 0, "resets_at": clock.five_hour_reset + 5 * HOUR},
        {"used_percent": 0, "resets_at": clock.week_reset + 7 * DAY}),
    "windows that end now": lambda clock: _codex(
        clock, {"used_percent": 90, "resets_at": clock.now - 1},
        {"used_percent": 34, "resets_at": clock.now - 1}),
    "the windows' lengths swapped": lambda clock: plan.from_codex({
        "primary": {"used_percent": 1, "window_minutes": 10080, "resets_at": clock.week_reset},
        "secondary": {"used_percent": 1, "window_minutes": 300,
                      "resets_at": clock.five_hour_reset}}, clock.now),
    "the week left out": lambda clock: _codex(
        clock, {"used_percent": 90, "resets_at": clock.five_hour_reset}, None),
    "lengths no host has": lambda clock: plan.from_codex({
        "primary": {"used_percent": 0, "window_minutes": 60, "resets_at": clock.now + 60}},
        clock.now),
}


@pytest.mark.parametrize("line", CODEX_LINES.values(), ids=CODEX_LINES.keys())
def test_a_forged_codex_rate_limits_line_lowers_nothing_the_goal_was_charged(line):
    clock = Clock()
    goal = {"plan_ceilings": {"five_hour": 8000, "seven_day_spend": 500}, "plan_week": 0}
    for five_hour, week in ((30, 30), (90, 34)):
        goal = plan.advanced(goal, _codex(clock, {"used_percent": five_hour,
                                                  "resets_at": clock.five_hour_reset},
                                          {"used_percent": week,
                                           "resets_at": clock.week_reset}))
    assert goal["plan_week"] == 400 and plan.over(goal, clock.now) == ["five_hour"]
    forged = plan.advanced(goal, line(clock))
    assert plan.over(forged, clock.now) == ["five_hour"]
    assert forged["plan_week"] >= 400
    assert forged["plan_seen"]["codex"]["five_hour"] == {"used": 9000,
                                                         "resets_at": clock.five_hour_reset}


@pytest.mark.parametrize("text", GUARD_EDITS.values(), ids=GUARD_EDITS.keys())
def test_guard_yaml_edited_in_the_first_turn_changes_nothing_the_prompt_found(project, text):
    """Between the person's `/goal` prompt and the Stop that confirms it, the agent's first
    turn runs: an edit of .forge/guard.yaml then must not seal laxer ceilings than the
    prompt found."""
    session, clock = _typed(project, "{five_hour: 80}", {"five_hour": 70})
    _guard(project, text)
    reply = _stop(session)
    if reply is not None:  # a rule file forge cannot read ends the session there
        assert reply["continue"] is False and "\nError: " in "\n" + reply["stopReason"]
        return
    goal = _ledger(project).current().goal
    assert goal["plan_ceilings"]["five_hour"] == 8000
    assert goal.get("after_usage_limit") != "continue"
    _show(project, session, clock.reading(five_hour=90))
    _assert_stopped(session)


def test_a_tranche_loosened_in_the_first_turn_is_not_sealed(project):
    _guard(project, "  tranche: {tokens: 50000, minutes: 30}\n")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    _guard(project, "  tranche: {tokens: 5000000}\n")
    assert _stop(session) is None
    goal = _ledger(project).current().goal
    assert goal["token_ceiling"] == 50000 and goal["minute_ceiling"] == 30


@pytest.mark.parametrize("damage", [
    lambda path: path.write_text("not json"),
    lambda path: (path.unlink(), os.mkfifo(path)),
    lambda path: (path.unlink(), os.symlink(path.parent / "elsewhere.json", path)),
], ids=["not JSON", "a FIFO", "a link"])
def test_a_binding_that_is_not_forges_denies_and_stops_without_a_traceback(project, damage):
    session, clock = _rising(project)
    damage(project.ledger_root / "sessions" / f"{session.id}.json")
    _assert_stopped(session)


def test_a_usage_limit_mark_is_not_cleared_by_a_forged_charge(project):
    from forge_runtime.goal.rules import charging

    _guard(project, "  after_usage_limit: continue\n")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    assert _stop(session) is None
    turn = session.work()
    charging.charge(_ledger(project), project.state_path, [turn], session.id, turn,
                    seen=charging.Seen(usage_limit=True))
    assert _ledger(project).current().goal["usage_limited"] is True
    _append(project, "charge", lambda goal: {
        key: value for key, value in _one_more_turn(goal).items() if key != "usage_limited"},
        turn="forged")
    _tool_call(session)
    reply = _stop(session)
    assert reply["continue"] is False and TAMPERED in reply["stopReason"]


@pytest.mark.parametrize("ceilings, shown", [
    ("{five_hour: 80}", {"seven_day": 30}),
    ("{seven_day: 40}", {"five_hour": 30}),
    ("{seven_day_spend: 5}", {"five_hour": 30}),
], ids=["5-hour watched, week shown", "week watched, 5-hour shown", "own week, 5-hour shown"])
def test_a_goal_whose_host_never_shows_a_watched_window_stops(project, ceilings, shown):
    """Figures of other windows are no figures of the one a ceiling watches (a host that
    reports only some, or a store the agent filled with the others): fail closed. With no
    figures when the /goal was typed, the Stop ends it; with figures then, the /goal itself
    is refused, the window named (goal/hosts/unreported_windows.py)."""
    _guard(project, f"  plan: {ceilings}\n")
    clock = Clock()
    session = Session(project)
    assert "decision" not in (session.person_goal(OBJECTIVE) or {})
    _show(project, session, clock.reading(**shown))
    reply = _stop(session)
    assert reply["continue"] is False
    assert PLAN_UNAVAILABLE_CODE in reply["stopReason"]
    assert f"\nFix: /goal {OBJECTIVE}\n  after taking what the host does not report out of " \
        "goal.plan" in reply["stopReason"]  # not a status line: the plan has no such window

    again = Session(project)
    _show(project, again, clock.reading(**shown))
    refused = again.person_goal(OBJECTIVE)
    assert refused["decision"] == "block"
    assert refused["reason"].startswith("Error: FORGE_GOAL_PLAN_UNREPORTED: "), refused
    assert f"\nFix: /goal {OBJECTIVE}\n" in refused["reason"] + "\n"


def test_a_prompt_noted_again_keeps_what_it_first_found(project):
    """A host that notes a `/goal` at a later event (Codex: its first tool call, again when
    the pending note is gone) must not replace what the prompt first found with a
    guard.yaml the first turn changed since."""
    from forge_runtime.goal.store import prompt_notes

    root = str(project.ledger_root)
    prompt_notes.keep(root, "s-1", {"token_ceiling": 1000}, None, "prompt-1")
    prompt_notes.keep(root, "s-1", {}, None, "prompt-1")
    assert prompt_notes.found(root, "s-1")["limits"] == {"token_ceiling": 1000}
    prompt_notes.keep(root, "s-1", {}, None, "prompt-2")  # a new /goal: its own note
    assert prompt_notes.found(root, "s-1")["limits"] == {}


# -- a Codex rollout, read through forge's store of what it read (plan_readings.current) ----

def _codex_line(clock: Clock, five_hour: float, week: float, *, stamp: float | None = None,
                five_hour_reset: int | None = None, week_reset: int | None = None,
                minutes=(300, 10080)) -> str:
    """A `token_count` line as Codex writes it (and as an agent can append one)."""
    limits = {"limit_id": "codex", "limit_name": None, "credits": None, "plan_type": None,
              "rate_limit_reached_type": None,
              "primary": {"used_percent": five_hour, "window_minutes": minutes[0],
                          "resets_at": five_hour_reset or clock.five_hour_reset},
              "secondary": {"used_percent": week, "window_minutes": minutes[1],
                            "resets_at": week_reset or clock.week_reset}}
    when = time.strftime("%Y-%m-%dT%H:%M:%S.000Z", time.gmtime(stamp or clock.now))
    return json.dumps({"timestamp": when, "type": "event_msg", "payload": {
        "type": "token_count", "info": None, "rate_limits": limits}}) + "\n"


CODEX_ROLLOUT_ATTACKS = {
    "a later line with lower figures": lambda rollout, clock: rollout.open("a").write(
        _codex_line(clock, 1, 1)),
    "a later line claiming the windows reset": lambda rollout, clock: rollout.open("a").write(
        _codex_line(clock, 0, 0, five_hour_reset=clock.five_hour_reset + 5 * HOUR,
                    week_reset=clock.week_reset + 7 * DAY)),
    "a later line saying the windows end now": lambda rollout, clock: rollout.open("a").write(
        _codex_line(clock, 90, 34, five_hour_reset=clock.now - 1, week_reset=clock.now - 1)),
    "a later line with the windows' lengths swapped": lambda rollout, clock: rollout.open(
        "a").write(_codex_line(clock, 1, 1, minutes=(10080, 300))),
    "a later line dated in the future": lambda rollout, clock: rollout.open("a").write(
        _codex_line(clock, 0, 0, stamp=clock.week_reset + 60,
                    five_hour_reset=clock.five_hour_reset + 5 * HOUR)),
    "the lines forge read cut away": lambda rollout, clock: rollout.write_text(
        _codex_line(clock, 1, 1)),
    "the rollout emptied": lambda rollout, clock: rollout.write_text(""),
}


@pytest.mark.parametrize("attack", CODEX_ROLLOUT_ATTACKS.values(),
                         ids=CODEX_ROLLOUT_ATTACKS.keys())
def test_a_rollout_the_agent_rewrote_lowers_nothing_forge_read(project, attack):
    from forge_runtime.errors import ForgeError
    from forge_runtime.hosts import codex

    clock = Clock()
    rollout = project.root.parent / "rollout-2026-12-04T17-11-10-x.jsonl"
    rollout.write_text(_codex_line(clock, 30, 30) + _codex_line(clock, 90, 34))
    event = {"session_id": "codex-session", "transcript_path": str(rollout),
             "cwd": str(project.root), "hook_event_name": "PreToolUse", codex.KEY: codex}
    root = str(project.ledger_root)
    first = plan_readings.current(event, root)
    assert first["windows"]["five_hour"]["used"] == 9000
    attack(rollout, clock)
    for _ in range(2):  # and once more, from what forge kept of the forged read
        try:
            reading = plan_readings.current(event, root)
        except ForgeError as exc:
            assert TAMPERED in exc.hint().render()
            return
        # no figure lower, no window over sooner (a later reset only holds it longer)
        five_hour, week = reading["windows"]["five_hour"], reading["windows"]["seven_day"]
        assert five_hour["used"] >= 9000 and five_hour["resets_at"] >= clock.five_hour_reset
        assert week["used"] >= 3400 and week["resets_at"] >= clock.week_reset
