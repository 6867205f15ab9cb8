"""Plan windows against the real Codex CLI: the host kit's model server sends Codex's
`x-codex-primary/secondary-*` headers (a script reply's `plan_usage`), Codex writes them to
its rollout's `token_count` entries, and forge reads them there (goal/hosts/codex_plan.py).

Codex writes a response's `token_count` after the response's tool calls have run, so the
tool call of the response that crosses a ceiling still runs, and the next one is denied:
"within one tool call of crossing". A person's `/goal` in the TUI fires no hook; its first
turn is held by the first tool call's pending activation (hosts/codex.py).
"""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path

import pytest
from codex_support import denial_reasons, exhausted_stops, start_goal
from goal_support import goal_in_state
from session_support import guard_goal

from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.project import find_project

pytestmark = [pytest.mark.host,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

# What an agent with full access runs in the background to lower the figures forge reads.
# First it waits for Codex to write a response's windows at 80% or more and at once appends
# the same windows at 0% (the rollout's newest `token_count` then says nothing is used);
# once forge has denied a call for it, it rewrites every figure of 80% or more in place to
# 0% (the same length: Codex goes on appending) for the Stop to find. It notes when it
# last changed the rollout.
LOWER = """
import glob, json, os, re, time
home = os.environ.get("CODEX_HOME") or os.path.expanduser("~/.codex")
path = max(glob.glob(home + "/sessions/*/*/*/rollout-*.jsonl"), key=os.path.getmtime)
HIGH = re.compile(rb'"used_percent":(8[0-9]|9[0-9])\\.0')
offset, appended, deadline = 0, False, time.time() + 60
while time.time() < deadline:
    with open(path, "rb") as rollout:
        rollout.seek(offset)
        new = rollout.read()
    new = new[:new.rfind(b"\\n") + 1]
    offset += len(new)
    for line in new.splitlines():
        limits = (json.loads(line).get("payload") or {}).get("rate_limits") or {}
        if not appended and (limits.get("primary") or {}).get("used_percent", 0) >= 80:
            for window in ("primary", "secondary"):
                limits[window]["used_percent"] = 0.0
            entry = {"timestamp": "2026-01-01T00:00:00.000Z", "type": "event_msg",
                     "payload": {"type": "token_count", "info": None, "rate_limits": limits}}
            with open(path, "a") as rollout:
                rollout.write(json.dumps(entry) + "\\n")
            appended = True
            open("lowered.at", "w").write(repr(time.time()))
        if b"FORGE_GOAL_BUDGET_EXHAUSTED" in line or os.path.exists("rewritten.at"):
            with open(path, "r+b") as rollout:
                text, changed = HIGH.subn(b'"used_percent": 0.0', rollout.read())
                rollout.seek(0)
                rollout.write(text)
            if changed:
                open("rewritten.at", "w").write(repr(time.time()))
    time.sleep(0.001)
"""
CROSSES_FIVE_HOURS = """
rules:
  - name: the model gives up when forge denies  # a second late: the rewrite lands first
    when: {last_tool_result_contains: "FORGE_GOAL_BUDGET_EXHAUSTED"}
    reply: {text: "forge stopped me.", delay_s: 1}
  - name: the agent starts its figure-lowerer
    times: 1
    reply:
      tool_calls:
        - {name: Bash, input: {command: "setsid nohup python3 lower.py >lower.log 2>&1 & echo ok"}}
      plan_usage: {five_hour: 60, seven_day: 20}
  - name: below the ceiling
    times: 1
    reply:
      tool_calls: [{name: Bash, input: {command: "echo step"}}]
      plan_usage: {five_hour: 70, seven_day: 20}
  - name: crossing
    times: 1
    reply:
      tool_calls: [{name: Bash, input: {command: "echo crossed"}}]
      plan_usage: {five_hour: 85, seven_day: 21}
  - name: model works  # a second late: the agent's line lands before this call's check
    times: 6
    reply:
      tool_calls: [{name: Bash, input: {command: "echo more"}}]
      plan_usage: {five_hour: 86, seven_day: 21}
      delay_s: 1
  - name: the model ends its turn
    reply: {text: "All done."}
"""


def _configure(project: Path, plan: str) -> None:
    guard_goal(project, f"plan: {plan}")


def _rollout(tui) -> list[dict]:
    path = json.loads(tui.hooks("PreToolUse")[0]["stdin"])["transcript_path"]
    return [json.loads(line) for line in Path(path).read_text().splitlines()]


def test_a_five_hour_ceiling_stops_the_first_turn_one_call_after_crossing_whatever_the_agent_adds(
        codex_host, project, tui_factory):
    """The first turn of a person's `/goal` (no Stop has confirmed it yet): the response
    that reaches 85% runs its own tool call (Codex has not written its figures yet), and
    the next is denied, though the agent appended 0% behind the crossing figure (a reader
    of the newest entry alone let a fifth call run); the agent then rewrites every high
    figure of the rollout, and the Stop still ends the goal at 85% (forge keeps what it
    read; without that, the goal went on)."""
    _configure(project, "{five_hour: 80}")
    (project / "lower.py").write_text(LOWER)
    # in full access (start_goal), as the agent must reach the rollout
    host, tui = start_goal(codex_host, project, tui_factory, CROSSES_FIVE_HOURS)
    tui.wait_for(lambda: exhausted_stops(tui), "forge to stop the goal", timeout=90)

    calls = tui.hooks("PreToolUse")
    denials = denial_reasons(tui)
    # the calls saw nothing yet, 60%, 70% (the crossing response's own call), then 85%
    assert len(calls) == 4 and len(denials) == 1, (len(calls), denials)
    assert denials[0].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: "), denials[0]
    assert "five_hour" in denials[0] or "5-hour" in denials[0], denials[0]
    # the agent's lower figure was on disk before the denied call's hook started
    lowered = float((project / "lowered.at").read_text())
    assert lowered < calls[3]["started"], (lowered, calls[3]["started"])
    counts = [i for i, e in enumerate(_rollout(tui))
              if (e.get("payload") or {}).get("type") == "token_count"]
    forged = [i for i in counts if _rollout(tui)[i]["timestamp"].startswith("2026-01-01")]
    genuine = [i for i in counts if i not in forged]
    assert len(forged) == 1 and genuine[2] < forged[0] < genuine[3], (genuine, forged)
    # then it rewrote every high figure before the Stop read the rollout: the Stop ends the
    # goal on the figure forge kept from the denied call
    assert float((project / "rewritten.at").read_text()) < tui.hooks("Stop")[0]["started"]
    assert not re.search(r'"used_percent":(8|9)[0-9]', Path(
        json.loads(calls[0]["stdin"])["transcript_path"]).read_text())
    stop = exhausted_stops(tui)[0]
    assert stop["continue"] is False
    assert "reached 85% of the plan's 5-hour window" in stop["stopReason"], stop
    goal = goal_in_state(project)
    assert (goal["turn_count"], goal["status"]) == (1, "exhausted")
    assert not any(r["rule"] == "the model ends its turn" for r in host.server.requests)


LATER_TURN = """
rules:
  - name: the model gives up when forge denies
    when: {last_tool_result_contains: "FORGE_GOAL_BUDGET_EXHAUSTED"}
    reply: {text: "forge stopped me.", plan_usage: {five_hour: 86, seven_day: 45}}
  - name: the goal's first turn
    times: 1
    reply: {text: "Working on it.", plan_usage: {five_hour: 60, seven_day: 40}}
  - name: the second turn's responses rise
    times: 1
    reply:
      tool_calls: [{name: Bash, input: {command: "echo a"}}]
      plan_usage: {five_hour: 70, seven_day: 41}
  - times: 1
    reply:
      tool_calls: [{name: Bash, input: {command: "echo b"}}]
      plan_usage: {five_hour: 75, seven_day: 42}
  - times: 1
    reply:
      tool_calls: [{name: Bash, input: {command: "echo c"}}]
      plan_usage: {five_hour: 85, seven_day: 43}
  - name: model works
    reply:
      tool_calls: [{name: Bash, input: {command: "echo d"}}]
      plan_usage: {five_hour: 86, seven_day: 44}
"""


@pytest.mark.parametrize(("plan", "words", "spent"), [
    ("{five_hour: 80}", "reached 85% of the plan's 5-hour window", "86% of the plan's 5-hour"),
    ("{seven_day_spend: 3}", "reached 3% of the week that the goal itself used",
     "5% of the week that the goal itself used"),
])
def test_a_later_turn_is_stopped_one_call_after_crossing(codex_host, project, tui_factory,
                                                         plan, words, spent):
    """A bound goal's second turn: its first turn left the windows at 60% and 40% (where
    the goal's own week starts); the second turn's responses reach 85% of the 5-hour window,
    and 3 points of the week of its own, at the third response, whose tool call runs (Codex
    has not written its figures yet); the next is denied, and the Stop ends the goal."""
    _configure(project, plan)
    host, tui = start_goal(codex_host, project, tui_factory, LATER_TURN)
    tui.wait_for(lambda: exhausted_stops(tui), "forge to stop the goal", timeout=90)

    calls, denials = tui.hooks("PreToolUse"), denial_reasons(tui)
    # the second turn's calls saw the first turn's figures, then the 1st and 2nd response's,
    # then the crossing 3rd's
    assert len(calls) == 4 and len(denials) == 1, (len(calls), denials)
    assert denials[0].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: goal "), denials[0]
    assert words in denials[0], denials[0]
    stop = exhausted_stops(tui)[0]
    assert spent in stop["stopReason"].splitlines()[0] and "in 2 turns" in stop["stopReason"]
    goal = Ledger(find_project(project).ledger_root, goal_in_state(project)["nonce"]
                  ).current().goal
    assert (goal["turn_count"], goal["status"]) == (2, "exhausted")
    assert goal["plan_week"] == 500  # 40% -> 45% at its last response, charged at its Stop
    assert goal["plan_seen"]["codex"]["five_hour"]["used"] == 8600


def test_a_codex_session_with_no_plan_windows_ends_a_goal_with_plan_ceilings(
        codex_host, project, tui_factory):
    """An API key login: Codex's responses carry no `x-codex-*` headers, its rollout's
    token_count `rate_limits` hold no windows, and a goal with plan ceilings ends at its
    first Stop (fail closed), pausing Codex's loop."""
    from codex_support import WORKS, model_turns, native_goal_status

    _configure(project, "{five_hour: 80}")
    host, tui = start_goal(codex_host, project, tui_factory, WORKS)
    tui.wait_for(lambda: any("FORGE_GOAL_PLAN_UNAVAILABLE" in call["stdout"]
                             for call in tui.hooks("Stop")), "forge to end the goal")
    reply = next(json.loads(call["stdout"]) for call in tui.hooks("Stop") if call["stdout"])
    assert reply["continue"] is False
    text = reply["stopReason"]
    assert "FORGE_GOAL_PLAN_UNAVAILABLE: " in text and \
        "the rollout's token_count events carry no rate limits" in text, text
    assert "Fix: codex login" in text.splitlines()
    session_id = json.loads(tui.hooks("Stop")[0]["stdin"])["session_id"]
    assert native_goal_status(host, session_id) == "paused"
    assert model_turns(host) == 1
