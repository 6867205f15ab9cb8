"""When a goal's budget runs out at its pace (goal/views/forecast.py, goal/views/tranche.py): pure
arithmetic on constructed goals and tranche starts, the tranche start found on a real
ledger, and what `forge goal status` and the status line say of it."""

from __future__ import annotations

import json

import pytest
from goal_support import Session, goal_again, goal_of, goal_project

from forge_runtime.goal.budget.ceilings import epoch
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.goal.views import forecast, gauge, tranche

OBJECTIVE = "the CSV importer handles quoted commas"
NOW = epoch("2026-12-05T12:00:00Z")
HOUR_AGO = "2026-12-05T11:00:00Z"


def _goal(**fields) -> dict:
    """A running goal in its second tranche (20 turns charged in the first)."""
    return {"nonce": "n" * 32, "activation_id": "second", "activation_count": 2,
            "status": "active", "turn_count": 32, "turn_ceiling": 40, "token_count": 0,
            "tranche_started": HOUR_AGO, **fields}


def _start(**fields) -> dict:
    """The tranche's activation record: the goal as the person's /goal left it."""
    return {"seq": 45, "kind": "activate", "at": "2026-12-05T11:00:05Z",
            "goal": {**_goal(), "turn_count": 20, **fields}}


def test_the_pace_is_this_tranches_spend_per_charged_turn_and_its_seconds():
    goal = _goal(token_count=2_600_000, picousd=6 * 10**12)
    pace = forecast.pace_of(_start(token_count=1_400_000, picousd=10**12), goal,
                            "2026-12-05T11:48:00Z")
    assert pace.turns == 12
    assert pace.per_turn("seconds") == 48 * 60 / 12  # from the clock start to the last charge
    assert pace.per_turn("tokens") == 100_000
    assert pace.per_turn("picousd") == 5 * 10**12 / 12
    assert forecast.pace_words(pace) == "4.0 minutes, 100k tokens and $0.42 a turn " \
                                        "(over 12 charged turns)"


def test_each_ceiling_runs_out_in_turns_at_the_pace_soonest_first():
    goal = _goal(token_count=2_600_000, token_ceiling=3_000_000, picousd=6 * 10**12,
                 usd_ceiling=20 * 10**12, minute_ceiling=90)
    pace = forecast.pace_of(_start(token_count=1_400_000, picousd=10**12), goal,
                            "2026-12-05T11:48:00Z")
    ways = forecast.runways(goal, pace, NOW)
    assert [(way.ceiling, way.turns_left, way.at) for way in ways] == [
        ("tokens", 4, NOW + 4 * 240),       # 400k left at 100k a turn
        ("turns", 8, NOW + 8 * 240),        # of equal runways, the exact one first
        ("minutes", 8, epoch(HOUR_AGO) + 90 * 60),  # 30 minutes left at 4 a turn
        ("usd", 34, NOW + 34 * 240)]        # $14 left at $0.42 a turn: 33.6, so 34
    assert forecast.closing(ways) is None
    assert forecast.runway_words(ways[0], NOW) == "the token ceiling in ~4 turns, about 12:16 UTC"
    assert gauge.runway_text(ways, NOW) == "tok ceiling in ~4 turns ~12:16 UTC"
    data = forecast.as_data(pace, ways)
    assert data["ceilings"][0] == {"ceiling": "tokens", "turns_left": 4,
                                   "at": "2026-12-05T12:16:00Z"}
    assert data["pace"]["tokens_per_turn"] == 100_000 and data["last_turn"] is False


@pytest.mark.parametrize(("fields", "ceiling"), [
    ({"turn_count": 39}, "turns"),
    ({"token_ceiling": 3_000_000}, "tokens"),      # 40k left at 100k a turn
    ({"usd_ceiling": 6 * 10**12 + 10**11}, "usd"),  # 10c left at 42c a turn
    ({"minute_ceiling": 62}, "minutes")])          # 2 minutes left at 4 a turn
def test_the_next_turn_is_the_last_when_a_ceiling_is_reached_within_it(fields, ceiling):
    goal = _goal(token_count=2_960_000, picousd=6 * 10**12, **fields)
    pace = forecast.pace_of(_start(token_count=1_760_000, picousd=10**12), goal,
                            "2026-12-05T11:48:00Z")
    way = forecast.closing(forecast.runways(goal, pace, NOW))
    assert way is not None and way.ceiling == ceiling and way.turns_left == 1
    assert gauge.runway_text([way], NOW).startswith("last turn")


def test_a_time_ceiling_passed_before_any_stop_reads_reached():
    goal = _goal(minute_ceiling=45)  # started an hour ago
    pace = forecast.pace_of(_start(), goal, "2026-12-05T11:48:00Z")
    ways = forecast.runways(goal, pace, NOW)
    assert (ways[0].ceiling, ways[0].turns_left) == ("minutes", 0)
    assert forecast.closing(ways) is None  # no turn is left to be told of
    assert gauge.runway_text(ways, NOW) == "min ceiling reached"
    assert forecast.runway_words(ways[0], NOW) == "the time ceiling: reached"


def test_one_more_turn_of_room_is_not_the_last():
    goal = _goal(token_count=2_850_000, token_ceiling=3_000_000)  # 150k left, 100k a turn
    pace = forecast.pace_of(_start(token_count=1_650_000), goal, "2026-12-05T11:48:00Z")
    ways = forecast.runways(goal, pace, NOW)
    assert ways[0].ceiling == "tokens" and ways[0].turns_left == 2
    assert forecast.closing(ways) is None


def test_a_new_tranche_uses_the_goals_whole_average_and_claims_no_time():
    goal = _goal(turn_count=20, token_count=2_000_000, token_ceiling=2_500_000)
    pace = forecast.pace_of(_start(token_count=2_000_000), goal, "2026-12-05T11:00:05Z")
    assert (pace.turns, pace.seconds, pace.per_turn("tokens")) == (20, None, 100_000)
    ways = forecast.runways(goal, pace, NOW)
    assert [(way.ceiling, way.turns_left, way.at) for way in ways] == [
        ("tokens", 5, None), ("turns", 20, None)]
    assert gauge.runway_text(ways, NOW) == "tok ceiling in ~5 turns"


def test_what_forge_has_not_measured_gives_no_forecast():
    # turns charged within one second, no tokens spent: no time, no token runway
    goal = _goal(token_ceiling=3_000_000, minute_ceiling=90)
    pace = forecast.pace_of(_start(), goal, "2026-12-05T11:00:30Z")  # under a minute
    ways = forecast.runways(goal, pace, NOW)
    assert [(way.ceiling, way.turns_left, way.at) for way in ways] == [("turns", 8, None)]
    assert gauge.runway_text(ways, NOW) is None  # 32/40 says it all
    assert forecast.pace_words(forecast.pace_of(None, _goal(turn_count=0), None)) == \
        "not measured yet (no charged turn)"


def _planned(five_hour: dict, week: int, **fields) -> dict:
    return _goal(plan_ceilings={"five_hour": 8000, "seven_day_spend": 1000},
                 plan_host="claude", plan_week=week,
                 plan_seen={"claude": {"five_hour": five_hour,
                                       "seven_day": {"used": 3000, "resets_at": NOW + 86400}}},
                 **fields)


def test_plan_shares_run_out_at_the_rise_per_turn_within_one_window():
    resets = NOW + 4 * 3600
    start = _start()
    start["goal"] = {**_planned({"used": 5000, "resets_at": resets}, 200), "turn_count": 20}
    goal = _planned({"used": 7400, "resets_at": resets}, 800)  # +2400 and +600 over 12 turns
    pace = forecast.pace_of(start, goal, "2026-12-05T11:48:00Z")
    assert pace.plan == {"five_hour": 2400, "seven_day_spend": 600}
    ways = {way.ceiling: way for way in forecast.runways(goal, pace, NOW)}
    assert ways["five_hour"].turns_left == 3  # 600 left at 200 a turn
    assert ways["seven_day_spend"].turns_left == 4  # 200 left at 50 a turn
    assert forecast.as_data(pace, list(ways.values()))["pace"]["plan_per_turn"] == \
        {"five_hour": 2.0, "seven_day_spend": 0.5}


def test_a_window_that_reset_or_resets_first_gives_no_plan_forecast():
    start = _start()
    start["goal"] = {**_planned({"used": 5000, "resets_at": NOW - 60}, 200), "turn_count": 20}
    goal = _planned({"used": 400, "resets_at": NOW + 5 * 3600}, 800)  # a new window since
    pace = forecast.pace_of(start, goal, "2026-12-05T11:48:00Z")
    assert "five_hour" not in pace.plan
    soon = NOW + 600  # resets in 10 minutes; the share would be reached in 3 turns (12)
    start["goal"] = {**_planned({"used": 5000, "resets_at": soon}, 200), "turn_count": 20}
    goal = _planned({"used": 7400, "resets_at": soon}, 800)
    pace = forecast.pace_of(start, goal, "2026-12-05T11:48:00Z")
    assert "five_hour" not in {way.ceiling for way in forecast.runways(goal, pace, NOW)}


def test_the_forecast_never_reads_the_clock(monkeypatch):
    import time

    def no_clock():
        raise AssertionError("forecast.py read the clock")

    monkeypatch.setattr(time, "time", no_clock)
    goal = _goal(token_count=2_600_000, token_ceiling=3_000_000, minute_ceiling=90)
    pace = forecast.pace_of(_start(token_count=1_400_000), goal, "2026-12-05T11:48:00Z")
    ways = forecast.runways(goal, pace, NOW)
    assert forecast.runways(goal, pace, NOW) == ways
    forecast.as_data(pace, ways)
    [forecast.runway_words(way, NOW) for way in ways]


# -- the tranche's start, on a real ledger -----------------------------------------------

@pytest.fixture
def project(tmp_path, monkeypatch):
    return goal_project(tmp_path, monkeypatch, cli=True)


def _second_tranche(project, turns: int) -> Ledger:
    session = Session(project)
    session.person_goal(OBJECTIVE)
    for _ in range(20):
        session.turn()
    goal_again(session, OBJECTIVE)
    for _ in range(turns - 1):
        session.turn()
    return Ledger(project.ledger_root, goal_of(project)["nonce"])


def test_the_tranche_starts_at_its_activation_found_once_then_read_in_one(project,
                                                                         monkeypatch):
    ledger = _second_tranche(project, 4)
    head = ledger.current()
    found = tranche.start(ledger, head)
    assert (found["kind"], found["goal"]["activation_count"]) == ("activate", 2)
    assert head.goal["turn_count"] - found["goal"]["turn_count"] == 4
    reads = []
    real = ledger.record_at
    monkeypatch.setattr(ledger, "record_at", lambda seq: reads.append(seq) or real(seq))
    assert tranche.start(ledger, head, found["seq"]) == found and reads == [found["seq"]]
    # a note that names another record (the first tranche's start, a charge) is walked past
    assert tranche.start(ledger, head, 1) == found
    assert tranche.start(ledger, head, head.seq - 1) == found
    assert tranche.start(ledger, head, 10**6) == found


def test_status_gives_the_pace_and_forecast_in_lines_and_json(project, capsys):
    from forge_runtime.cli.main import main

    _second_tranche(project, 4)
    assert main(["goal", "status"]) == 0
    text = capsys.readouterr().out
    assert "pace        0 tokens and $0.00 a turn (over 4 charged turns)" in text
    assert "forecast    the turn ceiling in 16 turns" in text
    assert main(["goal", "status", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["forecast"]["ceilings"] == [{"ceiling": "turns", "turns_left": 16, "at": None}]
    assert data["forecast"]["pace"]["turns"] == 4 and data["forecast"]["last_turn"] is False


def test_status_of_a_goal_on_its_last_turn_says_so(project, capsys):
    from forge_runtime.cli.main import main

    _second_tranche(project, 19)
    assert main(["goal", "status", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["forecast"]["last_turn"] is True
    assert main(["goal", "status"]) == 0
    assert "forecast    the turn ceiling: the next turn is the tranche's last" in \
        capsys.readouterr().out


def test_status_of_a_spent_goal_has_no_forecast(project, capsys):
    from forge_runtime.cli.main import main

    session = Session(project)
    session.person_goal(OBJECTIVE)
    for _ in range(20):
        session.turn()
    assert main(["goal", "status", "--json"]) == 0
    assert json.loads(capsys.readouterr().out)["forecast"] is None
