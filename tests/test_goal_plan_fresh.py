"""A Claude Code tool call of a goal with plan ceilings is held to the plan's figures of the
answer that asked for it (goal/hosts/plan_freshness.py), and a window the host does not report is
named where forge first sees it (goal/hosts/unreported_windows.py).

The host runs its status line 300 ms after its messages last changed, so answers that come
faster share one run, and a tool call's PreToolUse can start before that run (measured:
tests/host/test_goal_plan_host.py). Here forge's own status line code keeps each reading,
as the host's run of it would, at the moment a test says.
"""

from __future__ import annotations

import threading
import time

import pytest
from goal_support import Session, goal_project_fixture

from forge_runtime.goal.events import tool_call
from forge_runtime.goal.hosts import plan_freshness, plan_readings

OBJECTIVE = "the invoice totals add up"
IN_AN_HOUR, IN_A_WEEK = int(time.time()) + 3600, int(time.time()) + 6 * 86400

project = goal_project_fixture()


@pytest.fixture(autouse=True)
def _own_witness(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def _guard(project, plan: str) -> None:
    (project.root / ".forge").mkdir(exist_ok=True)
    (project.root / ".forge" / "guard.yaml").write_text(
        f"goal:\n  require_sandbox: false\n  plan: {plan}\n")


def _usage(n: int, output: int = 20) -> dict:
    """Answer `n`'s usage: its prompt holds every answer before it, as a conversation's does."""
    return {"input_tokens": 1000 + 37 * n, "output_tokens": output,
            "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def _now() -> str:
    """The host's `timestamp` of an entry made now."""
    now = time.time()
    return time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(now)) + f".{int(now % 1 * 1000):03d}Z"


def _answer(session: Session, n: int, *tool_ids: str, final: bool = True,
            usage: dict | None = None) -> dict:
    """The transcript entry of answer `n` asking for `tool_ids` (`final`: written after its
    stream ended, with its stop reason, as the host writes it)."""
    time.sleep(0.002)  # the host's timestamps are to the millisecond
    return session._append({"type": "assistant", "timestamp": _now(), "message": {
        "id": f"msg_{n}", "model": "claude-test", "role": "assistant",
        "stop_reason": "tool_use" if final else None,
        "content": [{"type": "tool_use", "id": ident, "name": "Bash",
                     "input": {"command": "true"}} for ident in tool_ids],
        "usage": usage or _usage(n)}})


def _status_line(project, session: Session, usage: dict, five_hour=None, seven_day=30
                 ) -> None:
    """The host runs forge's status line with its figures of the moment and, as the newest
    answer's usage, `usage`."""
    from forge_runtime.statusline import keep_plan_reading

    limits = {name: {"used_percentage": used, "resets_at": resets}
              for name, used, resets in (("five_hour", five_hour, IN_AN_HOUR),
                                         ("seven_day", seven_day, IN_A_WEEK))
              if used is not None}
    assert keep_plan_reading(str(project.ledger_root), {
        "session_id": session.id, "cost": {"total_api_duration_ms": 900},
        "rate_limits": limits, "context_window": {"current_usage": usage}}) is not None


def _later(seconds: float, run, *args) -> threading.Timer:
    timer = threading.Timer(seconds, run, args=args)
    timer.start()
    return timer


def _call(session: Session, tool_id: str, **fields) -> str | None:
    return tool_call.spent(session.event("PreToolUse", tool_name="Bash",
                                       tool_input={"command": "true"}, tool_use_id=tool_id,
                                       **fields))


def _running(project, five_hour: float) -> Session:
    """A goal held to 80% of the 5-hour window, its first turn charged at `five_hour`."""
    _guard(project, "{five_hour: 80}")
    session = Session(project)
    _status_line(project, session, _usage(0), five_hour)
    session.person_goal(OBJECTIVE)
    assert session.turn() is None
    return session


# -- the call waits for the figures of its own answer ---------------------------------------

def test_the_answer_that_crosses_stops_its_own_call_though_the_status_line_draws_late(project):
    session = _running(project, 70)
    _answer(session, 1, "toolu_1")
    _status_line(project, session, _usage(1), five_hour=76)
    assert _call(session, "toolu_1") is None
    _answer(session, 2, "toolu_2")  # reports 81%; the host draws it 0.3 s after
    drawn = _later(0.3, _status_line, project, session, _usage(2), 81)
    try:
        denied = _call(session, "toolu_2")
    finally:
        drawn.join()
    assert denied is not None, "the call ran on the figures of the answer before"
    assert denied.startswith("FORGE_GOAL_BUDGET_EXHAUSTED: ") and "81%" in denied, denied


def test_a_status_line_drawn_before_the_answers_stream_ended_is_not_its_figures(project):
    """The host applies an answer's rate-limit headers when its stream ends, and gives its
    entries their final usage then: a run between its tool block and that end shows the
    answer with its opening usage and the figures before it."""
    session = _running(project, 70)
    _answer(session, 1, "toolu_1")
    _status_line(project, session, _usage(1, output=1), five_hour=76)  # mid-stream
    drawn = _later(0.3, _status_line, project, session, _usage(1), 83)
    try:
        denied = _call(session, "toolu_1")
    finally:
        drawn.join()
    assert denied is not None and "83%" in denied, denied


def test_where_a_models_usage_repeats_a_reading_kept_before_its_answer_is_not_of_it(project):
    """A model whose answers all report one usage (a scripted one does): the reading the
    status line kept for the answer before is older than this answer."""
    session = _running(project, 70)
    same = _usage(1)
    _answer(session, 1, "toolu_1", usage=same)
    _status_line(project, session, same, five_hour=76)
    assert _call(session, "toolu_1") is None
    _answer(session, 2, "toolu_2", usage=same)
    drawn = _later(0.3, _status_line, project, session, same, 82)
    try:
        denied = _call(session, "toolu_2")
    finally:
        drawn.join()
    assert denied is not None and "82%" in denied, denied


def test_parallel_calls_of_one_answer_share_its_figures(project):
    session = _running(project, 70)
    _answer(session, 1, "toolu_a", "toolu_b")
    _status_line(project, session, _usage(1), five_hour=75)
    started = time.monotonic()
    assert _call(session, "toolu_a") is None and _call(session, "toolu_b") is None
    assert time.monotonic() - started < 0.5


def test_without_the_figures_of_its_answer_in_time_the_call_is_denied(project, monkeypatch):
    monkeypatch.setattr(plan_freshness, "FRESH_WAIT_SECONDS", 0.3)
    session = _running(project, 70)
    _answer(session, 1, "toolu_1")  # the host never draws it
    started = time.monotonic()
    denied = _call(session, "toolu_1")
    assert time.monotonic() - started < 1.0
    assert denied is not None and denied.startswith("Error: FORGE_GOAL_PLAN_STALE: "), denied
    assert "\nFix: forge goal status\n" in denied and "same tool call made again" in denied


def test_a_session_whose_status_line_never_draws_is_told_how_to_install_it(project,
                                                                             monkeypatch):
    """`claude -p` draws no status line: the first turn's calls are denied, and its Stop
    ends the goal (FORGE_GOAL_PLAN_UNAVAILABLE, goal/events/stop.py)."""
    monkeypatch.setattr(plan_freshness, "FRESH_WAIT_SECONDS", 0.2)
    _guard(project, "{five_hour: 80}")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    _answer(session, 1, "toolu_1")
    denied = _call(session, "toolu_1")
    assert denied.startswith("Error: FORGE_GOAL_PLAN_STALE: ") and "no plan figures" in denied
    assert "\nFix: forge init --statusline\n" in denied


def test_a_subagents_call_is_held_to_the_newest_figures_without_waiting(project):
    """A subagent's answers are in its own transcript, never in the status line's input."""
    session = _running(project, 70)
    _status_line(project, session, _usage(1), five_hour=85)
    started = time.monotonic()
    denied = _call(session, "toolu_in_a_subagent", agent_id="a1", agent_type="helper")
    assert time.monotonic() - started < 0.5
    assert denied is not None and "85%" in denied


# -- a window the host does not report ---------------------------------------------------------

def test_the_first_call_of_a_goal_on_a_plan_without_its_window_is_denied(project):
    """The session's first /goal: no figures when it was typed; the answer's figures show
    the weekly window alone, so the 5-hour ceiling cannot hold."""
    _guard(project, "{five_hour: 80}")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    _answer(session, 1, "toolu_1")
    _status_line(project, session, _usage(1), five_hour=None, seven_day=30)
    denied = _call(session, "toolu_1")
    assert denied is not None and denied.startswith("Error: FORGE_GOAL_PLAN_UNREPORTED: ")
    assert "watches the plan's 5-hour window" in denied
    assert "it reports the weekly window only" in denied
    assert f"\nFix: /goal {OBJECTIVE}\n" in denied


def test_a_goal_typed_where_the_host_reports_no_windows_is_refused(project):
    """An API key login: the host's input has no `rate_limits` after its first answer."""
    _guard(project, "{seven_day_spend: 5}")
    session = Session(project)
    _status_line(project, session, _usage(0), five_hour=None, seven_day=None)
    reply = session.person_goal(OBJECTIVE)
    assert reply["decision"] == "block"
    assert "the host reports no plan windows at all" in reply["reason"]


def test_a_window_that_ended_with_no_answer_since_still_counts_as_reported(project):
    """The host leaves a window out of its status line once its reset time passes with no
    answer since: a /goal typed then is not refused for it."""
    _guard(project, "{five_hour: 80}")
    session = Session(project)
    _status_line(project, session, _usage(0), five_hour=40)
    _status_line(project, session, _usage(0), five_hour=None)  # its window ended
    assert "decision" not in (session.person_goal(OBJECTIVE) or {})


# -- reading the answer from the transcript ----------------------------------------------------

def test_the_answer_counts_once_its_stream_ended_and_only_the_newest_is_read(project):
    session = Session(project)
    _answer(session, 1, "toolu_1")
    watch = plan_freshness.AnswerWatch(str(session.transcript), "toolu_2")
    assert watch.usage() is None  # the newest answer asks for another call
    _answer(session, 2, "toolu_2", final=False)
    assert watch.usage() is None  # written before its stream ended: no final usage yet
    entry = _answer(session, 2, "toolu_2")
    session._append({"type": "assistant", "timestamp": _now(), "message": {
        "id": "msg_synthetic", "model": "<synthetic>", "role": "assistant",
        "stop_reason": "stop_sequence", "content": [{"type": "text", "text": "later"}]}})
    usage, began = watch.usage()  # what came after it since the last look hides nothing
    assert usage == [1074, 20, 0, 0]
    assert time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime(began)) == entry["timestamp"][:19]


def test_an_answer_with_a_long_tool_input_is_found_past_the_first_look(project):
    """A Write of a large file is one transcript line longer than the first look reads."""
    session = Session(project)
    entry = _answer(session, 1, "toolu_big")
    entry["message"]["content"][0]["input"] = {"content": "x" * (3 * plan_freshness.TAIL_BYTES)}
    session.transcript.write_text("")
    session._append(entry)
    assert session.transcript.stat().st_size > 3 * plan_freshness.TAIL_BYTES
    assert plan_freshness.AnswerWatch(str(session.transcript), "toolu_big").usage()[0] == \
        [1037, 20, 0, 0]


def test_an_answers_usage_is_read_as_the_host_shows_it_its_status_line():
    plain = {"input_tokens": 5, "output_tokens": 7, "cache_creation_input_tokens": 11,
             "cache_read_input_tokens": 13, "iterations": []}
    assert plan_freshness.usage_key(plain) == [5, 7, 11, 13]
    iterated = {**plain, "iterations": [
        {"type": "message", "input_tokens": 1, "output_tokens": 2,
         "cache_creation_input_tokens": 3, "cache_read_input_tokens": 4},
        {"type": "compaction", "input_tokens": 99, "output_tokens": 99,
         "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}]}
    assert plan_freshness.usage_key(iterated) == [1, 2, 3, 4]
    assert plan_freshness.usage_key({"input_tokens": "5"}) is None
    assert plan_freshness.usage_key(None) is None


def test_a_copy_behind_its_mirror_by_the_notes_alone_reads_as_the_mirror(project):
    """The status line writes the mirror, then the copy; one the host stopped in between
    leaves a copy that differs in the answer's usage alone."""
    import json

    session = Session(project)
    _status_line(project, session, _usage(1), five_hour=40)
    stored = project.ledger_root / "sessions" / f"{session.id}.plan.json"
    before = stored.read_text()
    _status_line(project, session, _usage(2), five_hour=40)
    stored.write_text(before)
    kept = plan_readings.with_notes(str(project.ledger_root), session.id)
    assert kept[plan_readings.ANSWER] == plan_freshness.usage_key(_usage(2))
    lowered = json.loads(before)
    lowered["windows"]["five_hour"]["used"] = 0
    stored.write_text(json.dumps(lowered))
    from forge_runtime.errors import ForgeError

    with pytest.raises(ForgeError):
        plan_readings.with_notes(str(project.ledger_root), session.id)
