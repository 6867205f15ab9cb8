"""The plan's allowance (goal/budget/plan.py): readings from both hosts, the goal's own use of the
week, the ceilings at a Stop and before a tool call, and figures changed outside forge."""

from __future__ import annotations

import json
import math
import time

import pytest
from goal_support import Session, goal_project_fixture

from forge_runtime.errors import ForgeError
from forge_runtime.goal.budget import ceilings, plan
from forge_runtime.goal.events import tool_call
from forge_runtime.goal.hosts import plan_readings
from forge_runtime.goal.store import state_file
from forge_runtime.goal.store.ledger import Ledger, check_transition

OBJECTIVE = "the invoice totals add up"
NOW = int(time.time())
IN_AN_HOUR, IN_A_WEEK = NOW + 3600, NOW + 6 * 86400

project = goal_project_fixture()


@pytest.fixture(autouse=True)
def _own_witness(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def _guard(project, text: str) -> None:
    (project.root / ".forge").mkdir(exist_ok=True)
    (project.root / ".forge" / "guard.yaml").write_text(
        "goal:\n  require_sandbox: false\n" + text)


def _statusline(five_hour=None, seven_day=None) -> dict:
    limits = {}
    if five_hour is not None:
        limits["five_hour"] = {"used_percentage": five_hour, "resets_at": IN_AN_HOUR}
    if seven_day is not None:
        limits["seven_day"] = {"used_percentage": seven_day, "resets_at": IN_A_WEEK}
    return {"session_id": "s", "rate_limits": limits} if limits else {"session_id": "s"}


def _show(project, session: Session, **figures) -> None:
    """forge's status line stores what the host reports now."""
    plan_readings.record(str(project.ledger_root), session.id,
                plan.from_statusline(_statusline(**figures), int(time.time())))


def _ledger(project) -> Ledger:
    return Ledger(project.ledger_root, state_file.read(project.state_path).goal["nonce"])


def _tool_call(session: Session) -> str | None:
    return tool_call.spent(session.event("PreToolUse", tool_name="Bash",
                                       tool_input={"command": "true"}))


# -- readings -------------------------------------------------------------------------------

def test_claude_codes_status_line_input_becomes_a_reading_in_basis_points():
    reading = plan.from_statusline(_statusline(five_hour=62.5, seven_day=30), NOW)
    assert reading == {"host": "claude", "at": NOW, "windows": {
        "five_hour": {"used": 6250, "resets_at": IN_AN_HOUR},
        "seven_day": {"used": 3000, "resets_at": IN_A_WEEK}}}
    assert plan.from_statusline({"rate_limits": None}, NOW)["windows"] == {}  # an API key


def test_codex_names_its_windows_by_their_length():
    reading = plan.from_codex({
        "primary": {"used_percent": 85.0, "window_minutes": 300, "resets_at": IN_AN_HOUR},
        "secondary": {"used_percent": 42.0, "window_minutes": 10080, "resets_at": IN_A_WEEK},
    }, NOW)
    assert reading["windows"] == {"five_hour": {"used": 8500, "resets_at": IN_AN_HOUR},
                                  "seven_day": {"used": 4200, "resets_at": IN_A_WEEK}}
    swapped = plan.from_codex({"primary": {"used_percent": 1, "window_minutes": 10080,
                                           "resets_at": IN_A_WEEK}}, NOW)
    assert list(swapped["windows"]) == ["seven_day"]


@pytest.mark.parametrize("figure", [
    {"used_percentage": "50", "resets_at": IN_AN_HOUR},
    {"used_percentage": True, "resets_at": IN_AN_HOUR},
    {"used_percentage": -1, "resets_at": IN_AN_HOUR},
    {"used_percentage": math.nan, "resets_at": IN_AN_HOUR},
    {"used_percentage": math.inf, "resets_at": IN_AN_HOUR},
    {"used_percentage": 10, "resets_at": "soon"},
    {"used_percentage": 10, "resets_at": NOW + 10 * 366 * 86400},
    {"used_percentage": 10},
    "85",
])
def test_a_figure_that_is_not_a_window_is_left_out(figure):
    assert plan.from_statusline({"rate_limits": {"five_hour": figure}}, NOW)["windows"] == {}


def test_a_lower_figure_in_the_same_window_counts_as_the_higher_one():
    goal = {"plan_ceilings": {"five_hour": 8000}}
    high = plan.advanced(goal, plan.from_statusline(_statusline(five_hour=79), NOW))
    low = plan.advanced(high, plan.from_statusline(_statusline(five_hour=3), NOW))
    assert low["plan_seen"]["claude"]["five_hour"]["used"] == 7900
    reset = plan.from_statusline({"rate_limits": {"five_hour": {
        "used_percentage": 3, "resets_at": IN_AN_HOUR + 5 * 3600}}}, IN_AN_HOUR)
    assert plan.advanced(high, reset)["plan_seen"]["claude"]["five_hour"]["used"] == 300
    early = {**reset, "at": NOW}  # a window resets at its reset time, never sooner
    assert plan.advanced(high, early)["plan_seen"]["claude"]["five_hour"] == {
        "used": 7900, "resets_at": IN_AN_HOUR}


def test_one_rule_holds_a_window_until_its_reset_time():
    """plan.risen, the rule the ledger, forge's store of a Codex rollout and the rollout's
    reader share: a figure only rises within its window, a window left out keeps its last
    figure, a reset claimed before its time is the same window and keeps its reset time."""
    before = {"used": 7900, "resets_at": IN_AN_HOUR}
    lower = {"used": 300, "resets_at": IN_AN_HOUR}
    claimed = {"used": 0, "resets_at": IN_AN_HOUR + 5 * 3600}
    for slack in (plan.SAME_WINDOW_SLACK_S, 0):
        assert plan.risen(before, lower, NOW, slack) == before
        assert plan.risen(before, None, NOW, slack) == before
        assert plan.risen(None, lower, NOW, slack) == lower
        assert plan.risen(before, claimed, NOW, slack) == before
        assert plan.risen(before, {"used": 9000, "resets_at": NOW}, NOW, slack) == {
            "used": 9000, "resets_at": IN_AN_HOUR}  # ends sooner: no, but the rise counts
        assert plan.risen(before, claimed, IN_AN_HOUR, slack) == claimed  # the next window
    # the ledger takes a reset up to SAME_WINDOW_SLACK_S early (hosts round reset times);
    # forge's own clock, for what it reads of a rollout, takes none early
    near = IN_AN_HOUR - 60
    assert plan.risen(before, claimed, near) == claimed
    assert plan.risen(before, claimed, near, slack=0) == before


def test_the_goals_own_week_is_the_rise_since_its_first_figure_and_restarts_with_the_week():
    goal = {"plan_ceilings": {"seven_day_spend": 1000}}
    goal = plan.advanced(goal, plan.from_statusline(_statusline(seven_day=30), NOW))
    assert goal["plan_week"] == 0  # the first figure is where the goal's use starts
    goal = plan.advanced(goal, plan.from_statusline(_statusline(seven_day=34.5), NOW))
    goal = plan.advanced(goal, plan.from_statusline(_statusline(seven_day=33), NOW))
    assert goal["plan_week"] == 450
    goal = plan.advanced(goal, plan.from_statusline(_statusline(seven_day=41), NOW))
    assert goal["plan_week"] == 1100 and plan.over(goal, NOW) == ["seven_day_spend"]
    next_week = plan.from_statusline({"rate_limits": {"seven_day": {
        "used_percentage": 2, "resets_at": IN_A_WEEK + 7 * 86400}}}, IN_A_WEEK)
    assert plan.advanced(goal, next_week)["plan_week"] == 200
    assert plan.advanced(goal, {**next_week, "at": NOW})["plan_week"] == 1100
    assert plan.over(goal, IN_A_WEEK + 1) == []  # that week is over


def test_a_window_past_its_share_is_reached_until_it_resets():
    goal = plan.advanced({"plan_ceilings": {"five_hour": 8000, "seven_day": 4000}},
                         plan.from_statusline(_statusline(five_hour=80, seven_day=39), NOW))
    assert plan.over(goal, NOW) == ["five_hour"]
    assert plan.over(goal, IN_AN_HOUR) == []
    assert ceilings.reached({**goal, "turn_count": 1, "turn_ceiling": 20},
                            ceilings.now()) == "five_hour"


def test_only_the_host_the_goal_last_ran_on_counts_for_a_window():
    goal = plan.advanced({"plan_ceilings": {"five_hour": 8000}},
                         plan.from_statusline(_statusline(five_hour=95), NOW))
    goal = plan.advanced(goal, plan.from_codex({"primary": {
        "used_percent": 10, "window_minutes": 300, "resets_at": IN_AN_HOUR}}, NOW))
    assert goal["plan_host"] == "codex" and plan.over(goal, NOW) == []


def test_ceilings_come_from_guard_yaml_in_basis_points():
    assert plan.ceilings_from({"five_hour": 80, "seven_day_spend": 2.5}) == {
        "five_hour": 8000, "seven_day_spend": 250}
    assert plan.ceilings_from(None) is None and plan.ceilings_from({}) is None


# -- the store the status line keeps ----------------------------------------------------------

def test_the_store_and_its_mirror_must_agree(project, tmp_path):
    root = str(project.ledger_root)
    reading = plan.from_statusline(_statusline(five_hour=50), NOW)
    plan_readings.record(root, "abc", reading)
    assert plan_readings.latest(root, "abc") == reading
    stored = project.ledger_root / "sessions" / "abc.plan.json"
    mirror = tmp_path / "state" / "forge" / "witness" / "plan" / "abc.json"
    assert plan_readings.bare(json.loads(mirror.read_text())) == reading
    lowered = {**reading, "windows": {"five_hour": {"used": 0, "resets_at": IN_AN_HOUR}}}
    for damage in (lambda: stored.write_text(json.dumps(lowered)),
                   lambda: stored.write_text("not json"),
                   lambda: stored.write_text(json.dumps({**reading, "host": "person"}))):
        damage()
        with pytest.raises(ForgeError) as raised:
            plan_readings.latest(root, "abc")
        assert "FORGE_GOAL_LEDGER_TAMPERED" in raised.value.hint().render()
    stored.unlink()  # one copy left: a crash between the two writes; it still counts
    assert plan_readings.latest(root, "abc") == reading
    assert plan_readings.latest(root, "../abc") is None


# -- through the hooks ------------------------------------------------------------------------

def test_a_five_hour_ceiling_stops_the_goal_at_its_next_tool_call_and_at_its_stop(project):
    _guard(project, "  plan: {five_hour: 80}\n")
    session = Session(project)
    _show(project, session, five_hour=70)
    session.person_goal(OBJECTIVE)
    assert _tool_call(session) is None
    assert session.turn() is None
    goal = _ledger(project).current().goal
    assert goal["plan_ceilings"] == {"five_hour": 8000}
    assert goal["plan_seen"]["claude"]["five_hour"]["used"] == 7000
    _show(project, session, five_hour=81)
    denied = _tool_call(session)
    assert denied.startswith("FORGE_GOAL_BUDGET_EXHAUSTED") and "5-hour window" in denied
    reply = session.turn()
    assert reply["continue"] is False and "81% of the plan's 5-hour window" in \
        reply["stopReason"]
    history = _ledger(project).history()
    assert history[-1]["kind"] == "exhaust" and history[-1]["ceiling"] == "five_hour"
    assert history[-3]["plan"]["windows"]["five_hour"]["used"] == 8100


def test_the_first_turn_is_held_to_the_plan_before_any_stop(project):
    _guard(project, "  plan: {five_hour: 80}\n")
    session = Session(project)
    _show(project, session, five_hour=85)
    session.person_goal(OBJECTIVE)
    denied = _tool_call(session)
    assert "FORGE_GOAL_BUDGET_EXHAUSTED" in denied and "first turn" in denied


def test_the_goals_own_week_counts_from_the_prompt(project):
    _guard(project, "  plan: {seven_day_spend: 5}\n")
    session = Session(project)
    _show(project, session, seven_day=40)
    session.person_goal(OBJECTIVE)
    _show(project, session, seven_day=43)
    assert session.turn() is None
    assert _ledger(project).current().goal["plan_week"] == 300
    _show(project, session, seven_day=45.5)
    reply = session.turn()
    assert reply["continue"] is False and "the week that the goal itself used" in \
        reply["stopReason"]


def test_a_goal_whose_host_reports_no_windows_stops_with_the_fix(project, monkeypatch):
    from forge_runtime.goal.events import catch_up

    monkeypatch.setattr(catch_up, "PLAN_WAIT_SECONDS", 0.2)
    _guard(project, "  plan: {five_hour: 80}\n")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    _show(project, session)  # an API key login: the status line's input has no rate_limits
    reply = session.turn()
    assert reply["continue"] is False
    assert "\nError: FORGE_GOAL_PLAN_UNAVAILABLE" in reply["stopReason"]
    assert "Fix: forge init --statusline" in reply["stopReason"]
    goal = _ledger(project).current().goal  # recorded as ended, and how
    assert (goal["status"], goal["ended"], goal["turn_count"]) == \
        ("cancelled", "plan figures missing", 1)


def test_a_reading_changed_outside_forge_denies_and_ends_the_session(project):
    _guard(project, "  plan: {five_hour: 80}\n")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    _show(project, session, five_hour=10)
    session.turn()
    _show(project, session, five_hour=90)
    stored = project.ledger_root / "sessions" / f"{session.id}.plan.json"
    forged = json.loads(stored.read_text())
    forged["windows"]["five_hour"]["used"] = 0
    stored.write_text(json.dumps(forged))
    assert "FORGE_GOAL_LEDGER_TAMPERED" in _tool_call(session)
    reply = session.turn()
    assert reply["continue"] is False and "FORGE_GOAL_LEDGER_TAMPERED" in reply["stopReason"]


# -- the ledger's rules -----------------------------------------------------------------------

def _charged_pair(project):
    _guard(project, "  plan: {seven_day_spend: 50}\n")
    session = Session(project)
    _show(project, session, seven_day=10)
    session.person_goal(OBJECTIVE)
    session.turn()
    _show(project, session, seven_day=12)
    session.turn()
    history = _ledger(project).history()
    charge = next(record for record in reversed(history) if record["kind"] == "charge")
    return history[charge["seq"] - 2], charge


@pytest.mark.parametrize("change", [
    lambda charge: charge["goal"].update(plan_week=0),
    lambda charge: charge["goal"]["plan_seen"]["claude"]["seven_day"].update(used=1),
    lambda charge: charge["plan"]["windows"]["seven_day"].update(used=11),
    lambda charge: charge.update(plan={"host": "claude", "at": "now", "windows": {}}),
    lambda charge: charge["goal"].update(usage_limited=True),
    lambda charge: charge["goal"].update(plan_ceilings={"seven_day_spend": 99_00}),
    lambda charge: charge.update(usage_limit=False),
])
def test_plan_figures_that_do_not_follow_the_charge_are_tampering(project, change):
    before, charge = _charged_pair(project)
    assert charge["goal"]["plan_week"] == 200
    check_transition(before, charge, charge["goal"]["nonce"])
    change(charge)
    with pytest.raises(ForgeError) as raised:
        check_transition(before, charge, charge["goal"]["nonce"])
    assert "FORGE_GOAL_LEDGER_TAMPERED" in raised.value.hint().render()


def _limited_turn(project) -> tuple[Session, object]:
    """A goal's second turn, charged with the host's usage-limit mark."""
    from forge_runtime.goal.rules import charging

    session = Session(project)
    session.person_goal(OBJECTIVE)
    session.turn()
    turn = session.work()
    return session, charging.charge(_ledger(project), project.state_path, [turn], session.id,
                                    turn, seen=charging.Seen(usage_limit=True))


def test_a_usage_limit_ends_the_tranche_unless_the_project_goes_on(project):
    session, result = _limited_turn(project)
    assert result.exhausted_now and result.goal["usage_limited"] is True
    history = _ledger(project).history()
    assert history[-1]["ceiling"] == "usage_limit"
    text = session.stop()["stopReason"]
    assert text.startswith("FORGE_GOAL_USAGE_LIMIT") and "Next: /goal " + OBJECTIVE in text
    session.person_goal(OBJECTIVE)
    session.turn()  # a person's /goal: a new tranche without the mark
    assert "usage_limited" not in _ledger(project).current().goal


def test_after_usage_limit_continue_keeps_the_goal_going(project):
    _guard(project, "  after_usage_limit: continue\n")
    session, result = _limited_turn(project)
    assert result.goal["status"] == "active" and result.goal["usage_limited"] is True
    assert session.turn() is None


cli_project = goal_project_fixture(cli=True)


def test_status_shows_the_windows_the_goal_watches(cli_project, capsys):
    from goal_support import run_cli

    _guard(cli_project, "  plan: {five_hour: 80, seven_day_spend: 5}\n")
    session = Session(cli_project)
    _show(cli_project, session, five_hour=40, seven_day=20)
    session.person_goal(OBJECTIVE)
    _show(cli_project, session, five_hour=62.5, seven_day=22)
    session.turn()
    code, text = run_cli(capsys, "goal", "status")
    assert "plan        5-hour window 62.5% of 80% (as claude last reported it)" in text
    assert "plan        the goal's own week 2% of 5%" in text
    code, text = run_cli(capsys, "goal", "status", "--json")
    budget = json.loads(text)["budget"]["plan"]
    assert budget == {"host": "claude", "usage_limited": False,
                      "five_hour": {"used": 62.5, "ceiling": 80.0},
                      "seven_day_spend": {"used": 2.0, "ceiling": 5.0}}
    from forge_runtime.goal.views import gauge

    line = gauge.line(_ledger(cli_project).current().goal, unicode=False)
    assert "5h 62.5%/80%" in line and "week 2%/5%" in line


def test_the_report_says_which_window_ended_the_tranche(cli_project, capsys):
    from goal_support import run_cli

    _guard(cli_project, "  plan: {seven_day: 40}\n")
    session = Session(cli_project)
    session.person_goal(OBJECTIVE)
    _show(cli_project, session, seven_day=41)
    assert session.turn()["continue"] is False
    code, text = run_cli(capsys, "goal", "report")
    assert "exhausted on its weekly window ceiling" in text


def test_a_usage_limit_mark_left_without_its_exhaustion_still_denies_the_next_call(project):
    """`claude -p` ends the StopFailure hook's process as it exits: the charge with the
    host's usage-limit mark may land without the exhaustion after it."""
    from forge_runtime.goal.rules import charging

    session = Session(project)
    session.person_goal(OBJECTIVE)
    session.turn()
    ledger = _ledger(project)
    turn = session.work()
    with ledger.lock():
        head = ledger.settle()
        marked = charging._with_seen({**head.goal, "turn_count": head.goal["turn_count"] + 1},
                                     fields := {"turn": turn, "session": session.id},
                                     charging.Seen(usage_limit=True))
        ledger.append(head, "charge", marked, **fields)
    assert _ledger(project).current().goal["status"] == "active"
    denied = _tool_call(session)
    assert denied.startswith("FORGE_GOAL_USAGE_LIMIT") and "Next: /goal " + OBJECTIVE in denied
