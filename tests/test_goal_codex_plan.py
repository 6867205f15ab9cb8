"""The plan windows read from a Codex rollout's tail (goal/hosts/codex_plan.py), on lines Codex
CLI 0.171.0 wrote against the host kit's `plan_usage` headers.

The captured session: three tool calls and a closing answer; the first response reported
the 5-hour window at 90% with a reset 3 s later, the second 5% of the window after it,
then 100% of both windows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_runtime.goal.budget import plan
from forge_runtime.goal.hosts import codex_plan, codex_transcript

DATA = Path(__file__).parent / "data"
PLAN_ROLLOUT = DATA / "codex-0.171.0-plan-rollout.jsonl"
API_KEY_ROLLOUT = DATA / "codex-0.171.0-goal-rollout.jsonl"  # no rate-limit headers
FIRST_RESET = 1796404273  # the 5-hour window of the first response
NEW_RESET, WEEK_RESET = 1796422274, 1797009070
AFTER = FIRST_RESET + 5  # the first window has reset


def lines() -> list[str]:
    return PLAN_ROLLOUT.read_text().splitlines(keepends=True)


def rollout(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "rollout-2026-12-04T17-11-10-x.jsonl"
    path.write_text(text)
    return path


def token_count(primary: dict | None = None, secondary: dict | None = None) -> str:
    """A `token_count` line as Codex writes it (the agent can write the same)."""
    limits = {"limit_id": "codex", "limit_name": None, "primary": primary,
              "secondary": secondary, "credits": None, "plan_type": None,
              "rate_limit_reached_type": None}
    return json.dumps({"timestamp": "2026-12-04T17:11:15.000Z", "ordinal": 40,
                       "type": "event_msg",
                       "payload": {"type": "token_count", "info": None,
                                   "rate_limits": limits}}) + "\n"


def window(used: float, minutes: int, resets_at: int) -> dict:
    return {"used_percent": used, "window_minutes": minutes, "resets_at": resets_at}


def _as_if_captured(monkeypatch) -> None:
    """The clock of the captured rollout's session (its windows since long reset): time
    runs on from AFTER, so a test reads the figures as the hooks did then, on any day."""
    import time

    real, started = time.time, time.time()
    monkeypatch.setattr(time, "time", lambda: AFTER + (real() - started))


def test_the_newest_windows_of_a_real_rollout_are_read_as_codex_wrote_them(monkeypatch):
    _as_if_captured(monkeypatch)
    reading = codex_plan.plan_reading(PLAN_ROLLOUT, now=AFTER)
    assert reading["primary"] == window(100.0, 300, NEW_RESET)
    assert reading["secondary"] == window(100.0, 10080, WEEK_RESET)
    assert reading["limit_id"] == "codex"
    assert codex_transcript.plan_reading(PLAN_ROLLOUT)["primary"]["used_percent"] == 100.0


def test_each_response_so_far_is_the_reading_a_tool_call_then_sees(tmp_path):
    """Codex writes a response's token_count after its tool calls ran: cut after each."""
    entries = lines()
    counts = [i for i, line in enumerate(entries) if '"token_count"' in line]
    seen = [codex_plan.plan_reading(rollout(tmp_path, "".join(entries[:i + 1])),
                                    now=FIRST_RESET - 1)
            for i in counts]
    assert [r["primary"]["used_percent"] for r in seen] == [90.0, 90.0, 100.0, 100.0]
    assert codex_plan.plan_reading(rollout(tmp_path, "".join(entries[:counts[0]])),
                                   now=FIRST_RESET - 1) is None  # no response yet


def test_a_window_that_reset_gives_way_to_the_new_one_and_a_stale_one_is_left_out(tmp_path):
    entries = lines()
    counts = [i for i, line in enumerate(entries) if '"token_count"' in line]
    after_reset = codex_plan.plan_reading(
        rollout(tmp_path, "".join(entries[:counts[1] + 1])), now=AFTER)
    assert after_reset["primary"] == window(5.0, 300, NEW_RESET)
    stale = codex_plan.plan_reading(rollout(tmp_path, "".join(entries[:counts[0] + 1])),
                                    now=AFTER)
    assert stale["primary"] is None  # 90% of a window that has ended says nothing now
    assert stale["secondary"] == window(50.0, 10080, WEEK_RESET)


def test_an_api_key_session_without_the_headers_reports_no_windows():
    reading = codex_plan.plan_reading(API_KEY_ROLLOUT, now=AFTER)
    assert reading is not None and (reading["primary"], reading["secondary"]) == (None, None)


@pytest.mark.parametrize("forged", [
    token_count(window(0.0, 300, NEW_RESET), window(0.0, 10080, WEEK_RESET)),
    # a new window before the clock reached the old one's reset
    token_count(window(0.0, 300, NEW_RESET + 3600), window(1.0, 10080, WEEK_RESET + 86400)),
    # ... and one so far off that a reading refuses it (the window would go unread)
    token_count(window(0.0, 300, NEW_RESET + 10 * 366 * 86400)),
    # a reset time already past, then a fresh window on top of it
    token_count(window(0.0, 300, AFTER - 1)) + token_count(window(0.0, 300, AFTER + 60)),
    # the windows swapped between the fields, or of lengths forge does not read
    token_count(window(0.0, 10080, WEEK_RESET), window(0.0, 300, NEW_RESET)),
    token_count(window(0.0, 60, NEW_RESET), window(0.0, 43200, WEEK_RESET)),
    # no windows at all, or not in Codex's shape
    token_count(None, None),
    token_count({"used_percent": "0", "window_minutes": 300, "resets_at": NEW_RESET},
                {"used_percent": True, "window_minutes": 10080, "resets_at": WEEK_RESET}),
    token_count(window(float("nan"), 300, NEW_RESET), window(-5.0, 10080, WEEK_RESET)),
    token_count(window(0.0, 300, float("inf")), window(0.0, 10080, float("nan"))),
])
def test_a_line_the_agent_appends_lowers_no_window(tmp_path, forged):
    """Under danger-full-access the rollout is the agent's to append to: a window's share
    only rises until its reset, so a lower figure grants nothing."""
    reading = codex_plan.plan_reading(rollout(tmp_path, "".join(lines()) + forged), now=AFTER)
    assert reading["primary"]["used_percent"] == 100.0
    assert reading["secondary"]["used_percent"] == 100.0
    assert reading["primary"]["resets_at"] == NEW_RESET  # the reset it was first seen with
    assert plan.from_codex(reading, AFTER)["windows"] == {
        "five_hour": {"used": 10000, "resets_at": NEW_RESET},
        "seven_day": {"used": 10000, "resets_at": WEEK_RESET}}


def test_a_figure_the_agent_raises_holds(tmp_path):
    """A higher share only stops the goal sooner (fails closed)."""
    path = rollout(tmp_path, "".join(lines()[:5]) + token_count(window(99.0, 300, NEW_RESET)))
    assert codex_plan.plan_reading(path, now=FIRST_RESET - 1)["primary"]["used_percent"] == 99


def test_only_the_tail_is_read_and_a_half_written_line_waits(tmp_path):
    padding = json.dumps({"type": "response_item", "payload": {"type": "function_call_output",
                                                               "output": "x" * 4000}}) + "\n"
    entries = lines()
    text = "".join(entries) + padding * 40 + token_count(window(7.0, 300, NEW_RESET))[:-30]
    path = rollout(tmp_path, text)
    assert len(text) > codex_plan.FIRST_TAIL_BYTES
    assert codex_plan.plan_reading(path, now=AFTER)["primary"]["used_percent"] == 100.0
    far = rollout(tmp_path, "".join(entries) + padding * 300)
    assert far.stat().st_size > codex_plan.MAX_TAIL_BYTES
    assert codex_plan.plan_reading(far, now=AFTER) is None


def test_a_missing_rollout_or_junk_reads_as_nothing(tmp_path):
    assert codex_plan.plan_reading(tmp_path / "rollout-gone.jsonl") is None
    junk = rollout(tmp_path, '{"token_count"\n[1, 2]\n"token_count"\n')
    assert codex_plan.plan_reading(junk) is None


def test_the_reading_is_dated_when_codex_wrote_it():
    """2026-12-04T17:11:14.638Z, the closing answer's token_count."""
    assert codex_plan.plan_reading(PLAN_ROLLOUT, now=AFTER)["reported_at"] == 1796404274


# -- what forge keeps of what it read (plan_readings) ------------------------------------

@pytest.fixture
def codex_event(tmp_path, monkeypatch):
    """A Codex hook's event on a copy of the captured rollout, its ledger root and witness
    of its own."""
    from forge_runtime.goal.hosts.host_adapter import KEY
    from forge_runtime.hosts import codex

    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    _as_if_captured(monkeypatch)
    path = rollout(tmp_path, "".join(lines()))
    root = tmp_path / "ledger"
    (root / "sessions").mkdir(parents=True)
    return {"session_id": "s1", "transcript_path": str(path), KEY: codex}, str(root)


def test_hooks_of_parallel_tool_calls_keep_the_same_bytes(codex_event, monkeypatch):
    """Codex runs the PreToolUse hooks of one response's parallel tool calls at once
    (measured: the second starts before the first ends); each keeps what it read, dated
    when Codex wrote it, so a second boundary between them makes no copy and mirror that
    disagree."""
    import time

    from forge_runtime.goal.hosts import plan_readings

    event, root = codex_event
    clock = [AFTER]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    copies = [Path(path) for path in plan_readings._paths(root, "s1")]
    first = plan_readings.current(event, root)
    written = [path.read_bytes() for path in copies]
    for path in copies:  # as if the other hook had read before this one wrote
        path.unlink()
    clock[0] = AFTER + 1
    second = plan_readings.current(event, root)
    assert (first["at"], second["at"]) == (AFTER, AFTER + 1)
    assert [path.read_bytes() for path in copies] == written
    assert json.loads(written[0])["at"] == 1796404274


def test_a_copy_caught_between_its_two_writes_is_no_tampering(codex_event):
    """A hook that reads the copy while another writes it (mirror first, then the copy)
    waits a moment for the two to agree; a copy that still disagrees is tampering."""
    import threading
    import time

    from forge_runtime.errors import ForgeError
    from forge_runtime.goal.hosts import plan_readings

    event, root = codex_event
    reading = plan_readings.current(event, root)
    stored, mirror = (Path(path) for path in plan_readings._paths(root, "s1"))
    newer = {**reading, "at": reading["at"] + 5}
    mirror.write_text(json.dumps(newer))
    writer = threading.Timer(0.01, lambda: stored.write_text(json.dumps(newer)))
    writer.start()
    assert plan_readings.latest(root, "s1")["at"] == newer["at"]
    writer.join()
    mirror.write_text(json.dumps({**newer, "at": 1}))
    started = time.monotonic()
    with pytest.raises(ForgeError) as raised:
        plan_readings.latest(root, "s1")
    assert "FORGE_GOAL_LEDGER_TAMPERED" in raised.value.hint().render()
    assert time.monotonic() - started < plan_readings.TORN_WRITE_SECONDS + 0.5


def test_a_window_not_in_codexs_shape_before_the_real_ones_hides_nothing(tmp_path):
    text = token_count(window(float("nan"), 300, NEW_RESET)) + "".join(lines())
    reading = codex_plan.plan_reading(rollout(tmp_path, text), now=AFTER)
    assert reading["primary"]["used_percent"] == 100.0


def test_figures_pushed_out_of_the_tail_still_hold(codex_event, tmp_path):
    """The agent appends more than the reader's tail of lines without figures: the
    figures forge read before still hold (kept), and a session that never showed any
    reads as nothing, writing nothing."""
    from forge_runtime.goal.hosts import plan_readings

    event, root = codex_event
    assert plan_readings.current(event, root)["windows"]["five_hour"]["used"] == 10000
    padding = json.dumps({"type": "response_item", "payload": {"output": "x" * 4000}}) + "\n"
    with open(event["transcript_path"], "a") as handle:
        handle.write(padding * 300)
    assert codex_plan.plan_reading(event["transcript_path"]) is None
    assert plan_readings.current(event, root)["windows"]["five_hour"]["used"] == 10000

    (tmp_path / "fresh").mkdir()
    fresh = {**event, "session_id": "s2",
             "transcript_path": str(rollout(tmp_path / "fresh", padding))}
    assert plan_readings.current(fresh, root) is None
    assert plan_readings.latest(root, "s2") is None


@pytest.mark.parametrize("field, minutes, name", [
    ("primary", 300, "five_hour"), ("secondary", 10080, "seven_day")])
def test_a_window_renewed_a_moment_before_its_reset_holds_nothing_into_the_next(
        codex_event, monkeypatch, field, minutes, name):
    """Codex's reset times come from its server, whose clock may run ahead of this one: a
    reply can report the next window just before forge's clock reaches the old reset. The
    old window's figure holds until its own reset time and not past it (it was carried into
    the next window, 5 hours or a week of a goal stopped by a figure of a window over)."""
    import time

    from forge_runtime.goal.budget import plan
    from forge_runtime.goal.hosts import plan_readings

    event, root = codex_event
    resets_at, following = NEW_RESET, NEW_RESET + minutes * 60
    Path(event["transcript_path"]).write_text(
        token_count(**{field: window(90.0, minutes, resets_at)})
        + token_count(**{field: window(5.0, minutes, following)}))
    clock = [resets_at - 2]
    monkeypatch.setattr(time, "time", lambda: clock[0])
    goal = {"plan_ceilings": {name: 8000}}
    reading = plan_readings.current(event, root)
    assert reading["windows"] == {name: {"used": 9000, "resets_at": resets_at}}
    goal = plan.advanced(goal, reading)
    assert plan.over(goal, clock[0]) == [name]  # the old window still stops the goal
    clock[0] = resets_at + 1
    reading = plan_readings.current(event, root)
    assert reading["windows"] == {name: {"used": 500, "resets_at": following}}
    assert plan.over(plan.advanced(goal, reading), clock[0]) == []
