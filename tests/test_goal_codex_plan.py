"""The plan windows read from a Codex rollout's tail (goal/codex_plan.py), on lines Codex
CLI 0.171.0 wrote against the host kit's `plan_usage` headers.

The captured session: three tool calls and a closing answer; the first response reported
the 5-hour window at 90% with a reset 3 s later, the second 5% of the window after it,
then 100% of both windows."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_runtime.goal import codex_plan, codex_transcript

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


def token_count(primary: dict | None, secondary: dict | None = None) -> str:
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


def test_the_newest_windows_of_a_real_rollout_are_read_as_codex_wrote_them():
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
    # a reset time already past, then a fresh window on top of it
    token_count(window(0.0, 300, AFTER - 1)) + token_count(window(0.0, 300, AFTER + 60)),
    # the windows swapped between the fields, or of lengths forge does not read
    token_count(window(0.0, 10080, WEEK_RESET), window(0.0, 300, NEW_RESET)),
    token_count(window(0.0, 60, NEW_RESET), window(0.0, 43200, WEEK_RESET)),
    # no windows at all, or not in Codex's shape
    token_count(None, None),
    token_count({"used_percent": "0", "window_minutes": 300, "resets_at": NEW_RESET},
                {"used_percent": True, "window_minutes": 10080, "resets_at": WEEK_RESET}),
])
def test_a_line_the_agent_appends_lowers_no_window(tmp_path, forged):
    """Under danger-full-access the rollout is the agent's to append to: a window's share
    only rises until its reset, so a lower figure grants nothing."""
    reading = codex_plan.plan_reading(rollout(tmp_path, "".join(lines()) + forged), now=AFTER)
    assert reading["primary"]["used_percent"] == 100.0
    assert reading["secondary"]["used_percent"] == 100.0
    assert reading["primary"]["resets_at"] >= NEW_RESET


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
