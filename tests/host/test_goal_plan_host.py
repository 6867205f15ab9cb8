"""The plan's windows in the real Claude Code: a goal held to a share of
its subscription's 5-hour window, or to points of the week of its own, is stopped at the
first tool call after the answer that crosses; figures forge did not write, or none at all,
end autonomy; a window the plan does not have is named at the person's `/goal`.

The host hands the windows (`rate_limits`) to its status line only on a subscription login,
only in the interactive TUI, and 300 ms after its messages last changed (docs/goal-ledger.md,
"Plan windows: what forge can see"); a main-thread tool call waits for the status line's
reading of the answer that asked for it (goal/hosts/plan_freshness.py), so the answer that crosses
stops its own call, with the model's answers a third of a second apart too.
"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys

import pytest
from goal_support import goal_in_state, opt_out_of_sandbox
from session_support import plugin_with_hooks, stop_reasons

from forge_runtime.hostkit.projects import init_git_project
from forge_runtime.project import find_project

pytestmark = pytest.mark.host
needs_tmux = pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")

OBJECTIVE = "the CSV importer handles quoted commas"
TOOLS = ["--allowedTools", "Bash"]
EXHAUSTED = "FORGE_GOAL_BUDGET_EXHAUSTED"


def _guard(project, plan: str) -> None:
    """The person's ceilings, read at each `/goal` (the project opts out of the kernel layer
    as tests/host/conftest.py's does)."""
    (project / ".forge" / "guard.yaml").write_text(
        f"goal: {{require_sandbox: false, plan: {plan}}}\n")


def _install_statusline(project, host, log, refresh: bool = True) -> None:
    """forge's status line as a person installs it (`forge init --statusline`), over a
    status line of their own that keeps each input the host sends it (`log`); `refresh`:
    redrawn every second too (the last draw of a goal's stop can find the ledger busy with
    it), else only when the host's messages change."""
    own = (f"{sys.executable} -c \"import sys; open('{log}', 'a').write("
           "sys.stdin.read().replace(chr(10), ' ') + chr(10))\"")
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir(exist_ok=True)
    line = {"type": "command", "command": own, **({"refreshInterval": 1} if refresh else {})}
    settings.write_text(json.dumps({"statusLine": line}))
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project), "HOME": str(host.home)}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, "-m", "forge_runtime", "init", "--statusline"],
                          cwd=project, env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def _step(name: str, five_hour: float, seven_day: float, times: int = 1) -> dict:
    """A scripted answer: one slow Bash call, and the plan's windows as the API reports them."""
    return {"name": name, "times": times, "reply": {
        "tool_calls": [{"name": "Bash", "input": {"command": f"sleep 1; echo {name}",
                                                  "description": "work"}}],
        "plan_usage": {"five_hour": five_hour, "seven_day": seven_day}}}


def _text(name: str, five_hour: float, seven_day: float, when: dict | None = None) -> dict:
    return {"name": name, "times": 1, **({"when": when} if when else {}), "reply": {
        "text": f"{name}.", "plan_usage": {"five_hour": five_hour, "seven_day": seven_day}}}


DENIED = {"last_tool_result_contains": EXHAUSTED}
# Two goals in one TUI session. First a goal held to 10 points of the week of its own: its
# first turn looks around (the week at 30 %), its second works, and the week rises to 41
# in the answer of the third call: that call is denied. Then the person types /goal again
# with a 5-hour ceiling of 80: in that first turn the window rises 70, 76, 82: the call of
# the answer at 82 is denied.
TWO_GOALS = {"rules": [
    {"name": "evaluator says not yet", "when": {"goal_evaluator": True},
     "reply": {"verdict": {"ok": False, "reason": "GOAL-NOT-MET: keep working"}}},
    _text("week: stopped", 40, 43, DENIED),
    _text("week: looks around", 40, 30),
    _step("week-1", 40, 32), _step("week-2", 40, 35), _step("week-3", 40, 41),
    _step("week-4", 40, 43), _step("week-5", 40, 45),
    _text("five hours: stopped", 88, 45, DENIED),
    _step("hours-1", 70, 45), _step("hours-2", 76, 45), _step("hours-3", 82, 45),
    _step("hours-4", 84, 45), _step("hours-5", 86, 45),
    _text("the rest", 90, 45),
]}


def _stopped(stops: list[dict]) -> list[str]:
    """The reasons of the Stops that ended the session (another may only have said
    something: the goal runs unsandboxed, say)."""
    replies = [json.loads(call["stdout"]) for call in stops if call["stdout"].strip()]
    return [reply["stopReason"] for reply in replies if reply.get("continue") is False]


def _ledger_goal(project) -> dict:
    """The goal as its ledger holds it (the plan's figures are not in state.md)."""
    from forge_runtime.goal.store.ledger import Ledger

    found = find_project(project)
    return Ledger(found.ledger_root, goal_in_state(project)["nonce"]).current().goal


def _asked(tui) -> tuple[list[str], list[tuple[str, str]]]:
    """The steps whose Bash call forge let run, and (the step, forge's reason) of each call
    it denied, in the order the host asked."""
    ran, denied = [], []
    for call in tui.hooks("PreToolUse"):
        step = json.loads(call["stdin"])["tool_input"]["command"].rpartition(" ")[2]
        if call["stdout"].strip():
            reply = json.loads(call["stdout"])["hookSpecificOutput"]
            denied.append((step, reply["permissionDecisionReason"]))
        else:
            ran.append(step)
    return ran, denied


@needs_tmux
def test_plan_ceilings_stop_a_goal_within_one_tool_call_of_crossing(claude_host, project,
                                                                   tui_factory, tmp_path):
    host = claude_host(TWO_GOALS, login="subscription",
                       env={"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"})
    inputs = tmp_path / "statusline-inputs.jsonl"
    _install_statusline(project, host, inputs)
    _guard(project, "{seven_day_spend: 10}")
    tui = tui_factory(host, project, TOOLS)
    tui.wait_for(lambda: "❯" in tui.screen() and tui.hooks("SessionStart"),
                 "the TUI prompt of a session that started")

    # -- a later turn crosses the goal's own week --------------------------------------------
    tui.type(f"/goal {OBJECTIVE}")
    tui.wait_for(lambda: _stopped(tui.hooks("Stop")), "forge to stop the first goal",
                 timeout=90)
    ran, denied = _asked(tui)
    assert ran == ["week-1", "week-2"], \
        (ran, denied, [call["stdout"] for call in tui.hooks("Stop")], inputs.read_text())
    assert len(denied) == 1 and denied[0][0] == "week-3", denied
    reason = denied[0][1]
    assert reason.startswith(f"{EXHAUSTED}: "), reason
    assert "the week that the goal itself used" in reason, reason
    goal = _ledger_goal(project)
    assert goal["status"] == "exhausted" and goal["plan_ceilings"] == {"seven_day_spend": 1000}
    assert goal["plan_week"] >= 1000 and goal["plan_seen"]["claude"]["seven_day"]["used"] >= 4100

    # -- the first turn of the next /goal crosses the 5-hour window ---------------------------
    stops = len(tui.hooks("Stop"))
    _guard(project, "{five_hour: 80}")
    tui.type(f"/goal {OBJECTIVE}")
    tui.wait_for(lambda: _stopped(tui.hooks("Stop")[stops:]), "forge to stop the second goal",
                 timeout=90)
    ran, denied = _asked(tui)
    ran = [step for step in ran if step.startswith("hours")]
    assert ran == ["hours-1", "hours-2"], (ran, denied)
    assert len(denied) == 2 and denied[1][0] == "hours-3", \
        (denied, [call["stdout"] for call in tui.hooks("Stop")[stops:]])
    reason = denied[1][1]
    assert reason.startswith(f"{EXHAUSTED}: the first turn of /goal {OBJECTIVE} "), reason
    assert "the plan's 5-hour window" in reason, reason
    reasons = _stopped(tui.hooks("Stop")[stops:])
    assert len(reasons) == 1 and "the plan's 5-hour window" in reasons[0], reasons
    assert goal_in_state(project)["status"] == "exhausted"
    # the person sees the window on forge's gauge
    tui.wait_for(lambda: "5h 8" in tui.screen() and "%/80%" in tui.screen(),
                 "the 5-hour window on the gauge")
    # what the host handed the status line: the windows, on this subscription login
    seen = [json.loads(line) for line in inputs.read_text().splitlines()]
    assert any((entry.get("rate_limits") or {}).get("five_hour", {}).get("used_percentage")
               == 82 for entry in seen)


# -- answers a third of a second apart ------------------------------------------------------

def _fast(step: int, five_hour: float) -> dict:
    """Answer `step`, 0.3 s after its request: one quick Bash call; its prompt grows with
    every answer, as a conversation's does."""
    return {"name": f"fast-{step}", "times": 1, "reply": {
        "delay_s": 0.3, "usage": {"input_tokens": 1000 + 50 * step},
        "tool_calls": [{"name": "Bash", "input": {"command": f"echo fast-{step}",
                                                  "description": "work"}}],
        "plan_usage": {"five_hour": five_hour, "seven_day": 45}}}


CROSSING = 7
FAST = {"rules": [
    {"name": "evaluator says not yet", "when": {"goal_evaluator": True},
     "reply": {"verdict": {"ok": False, "reason": "GOAL-NOT-MET: keep working"}}},
    {"name": "model stops", "when": DENIED, "reply": {"text": "Stopped."}},
    *[_fast(step, five_hour) for step, five_hour in
      enumerate((62, 65, 68, 71, 74, 77, 81, 84, 87), 1)],
    {"name": "the rest", "reply": {"text": "the rest"}},
]}


def _step(name: str) -> int:
    return int(name.rpartition("-")[2])


@needs_tmux
def test_answers_a_third_of_a_second_apart_stop_at_the_first_call_after_the_crossing(
        claude_host, project, tui_factory, tmp_path):
    """At this pace the host runs its status line only after each answer's PreToolUse
    has started: without the wait for its answer's figures, the call of the answer at
    81 % runs."""
    host = claude_host(FAST, login="subscription",
                       env={"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"})
    inputs = tmp_path / "statusline-inputs.jsonl"
    _install_statusline(project, host, inputs, refresh=False)
    _guard(project, "{five_hour: 80}")
    tui = tui_factory(host, project, TOOLS)
    tui.wait_for(lambda: "❯" in tui.screen() and tui.hooks("SessionStart"),
                 "the TUI prompt of a session that started")
    tui.type(f"/goal {OBJECTIVE}")
    tui.wait_for(lambda: _stopped(tui.hooks("Stop")), "forge to stop the goal", timeout=90)
    ran, denied = _asked(tui)
    late = [step for step in ran if _step(step) >= CROSSING]
    assert not late, (ran, denied, inputs.read_text())
    # a loaded machine may deny an earlier call for want of its answer's figures in time
    # (FORGE_GOAL_PLAN_STALE: nothing runs); the answer at 81 % never gets its call
    assert all(reason.startswith("Error: FORGE_GOAL_PLAN_STALE: ")
               for step, reason in denied if _step(step) < CROSSING), denied
    crossing = [reason for step, reason in denied if _step(step) == CROSSING]
    assert len(crossing) == 1 and crossing[0].startswith(f"{EXHAUSTED}: "), denied
    assert "81% of the plan's 5-hour window" in crossing[0], crossing
    assert len(ran) >= CROSSING - 2, (ran, denied)  # the figures came in time, mostly
    answers = [request for request in host.server.requests
               if (request["rule"] or "").startswith("fast-")]
    assert len(answers) == len(ran) + len(denied)  # one call each, every one asked about


# -- a plan without a 5-hour window ----------------------------------------------------------

WEEK_ONLY = {"rules": [
    {"name": "evaluator says not yet", "when": {"goal_evaluator": True},
     "reply": {"verdict": {"ok": False, "reason": "GOAL-NOT-MET: keep working"}}},
    {"name": "model stops", "when": {"last_tool_result_contains": "FORGE_GOAL_PLAN"},
     "reply": {"text": "Stopped."}},
    {"name": "model works", "reply": {
        "tool_calls": [{"name": "Bash", "input": {"command": "echo work",
                                                  "description": "work"}}],
        "plan_usage": {"seven_day": 30}}},
]}


@needs_tmux
def test_a_five_hour_ceiling_on_a_plan_without_that_window_is_refused_at_the_goal(
        claude_host, project, tui_factory, tmp_path):
    """The host reports the weekly window only. The session's first /goal: forge has no
    figures yet, so the first tool call is denied and the Stop ends the goal; the person's
    next /goal is refused before the model sees it, the window named."""
    host = claude_host(WEEK_ONLY, login="subscription")
    inputs = tmp_path / "statusline-inputs.jsonl"
    _install_statusline(project, host, inputs)
    _guard(project, "{five_hour: 80}")
    tui = tui_factory(host, project, TOOLS)
    tui.wait_for(lambda: "❯" in tui.screen() and tui.hooks("SessionStart"),
                 "the TUI prompt of a session that started")
    tui.type(f"/goal {OBJECTIVE}")
    tui.wait_for(lambda: _stopped(tui.hooks("Stop")), "forge to stop the goal", timeout=90)
    ran, denied = _asked(tui)
    assert ran == [] and len(denied) == 1, (ran, denied, inputs.read_text())
    assert denied[0][1].startswith("Error: FORGE_GOAL_PLAN_UNREPORTED: "), denied
    assert "it reports the weekly window only" in denied[0][1]

    asked = len(host.server.requests)
    prompts = len(tui.hooks("UserPromptSubmit"))
    tui.type(f"/goal {OBJECTIVE}")
    tui.wait_for(lambda: len(tui.hooks("UserPromptSubmit")) > prompts, "the second /goal")
    reply = json.loads(tui.hooks("UserPromptSubmit")[-1]["stdout"])
    assert reply["decision"] == "block", reply
    assert reply["reason"].startswith("Error: FORGE_GOAL_PLAN_UNREPORTED: .forge/guard.yaml's "
                                      "goal.plan watches the plan's 5-hour window"), reply
    assert f"\nFix: /goal {OBJECTIVE}\n" in reply["reason"]
    tui.wait_for(lambda: "FORGE_GOAL_PLAN_UNREPORTED" in tui.screen(), "the refusal shown")
    assert len(host.server.requests) == asked  # the model never saw the second /goal


# -- figures the agent wrote, and none at all (claude -p draws no status line) ---------------

def _agent_bash(command: str) -> dict:
    """The agent's Bash call, hiding its path under `.git/` from the host (which refuses a
    command that names one), as a hostile agent would."""
    encoded = base64.b64encode(command.encode()).decode()
    return {"name": "Bash", "input": {"command": f"echo {encoded} | base64 -d | sh"}}


# The agent writes a reading of its own for every session the ledger knows: a 5-hour
# window at 1 %, under its ceiling of 80.
PLANT = ('for f in .git/forge-goals/sessions/*.json; do case "$f" in *.plan.json) continue;;'
         ' esac; id=$(basename "$f" | cut -d. -f1); printf \'{"host":"claude","at":%s,'
         '"windows":{"five_hour":{"used":100,"resets_at":%s}}}\' $(date +%s) '
         '$(( $(date +%s) + 3600 )) > .git/forge-goals/sessions/$id.plan.json; done')
PLANTED = {"rules": [
    {"name": "evaluator says not yet", "when": {"goal_evaluator": True},
     "reply": {"verdict": {"ok": False, "reason": "GOAL-NOT-MET: keep working"}}},
    {"name": "model reports", "when": {"last_is_tool_result": True},
     "reply": {"text": "Done that."}},
    {"name": "model plants", "when": {"last_user_text_contains": "plant"}, "times": 1,
     "reply": {"tool_calls": [_agent_bash(PLANT)]}},
    {"name": "model works", "reply": {"text": "Working on it."}},
]}


def _guard_off(config: dict) -> None:
    del config["hooks"]["PreToolUse"]


def test_without_figures_forge_wrote_a_goal_with_plan_ceilings_ends_at_its_stop(
        claude_host, project, tmp_path):
    """An API key login under `claude -p`: no status line, no figures: the Stop ends the
    goal with FORGE_GOAL_PLAN_UNAVAILABLE. A figure the agent planted (forge's guard off)
    where forge keeps them is none of forge's: the Stop fails closed on it."""
    host = claude_host(PLANTED, plugin_dirs=[plugin_with_hooks(tmp_path, _guard_off)])
    _guard(project, "{five_hour: 80}")
    plain = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=90)
    assert plain.terminal_reason == "stop_hook_prevented", plain.result
    reasons = stop_reasons(plain)
    assert len(reasons) == 1 and "\nError: FORGE_GOAL_PLAN_UNAVAILABLE: " in reasons[0], reasons
    assert "Fix: forge init --statusline" in reasons[0]

    planted_in = init_git_project(tmp_path / "planted")
    opt_out_of_sandbox(planted_in)
    _guard(planted_in, "{five_hour: 80}")
    planted = host.run(f"/goal {OBJECTIVE} (plant)", cwd=planted_in, timeout=90,
                       args=TOOLS)
    store = find_project(planted_in).ledger_root / "sessions"
    assert list(store.glob("*.plan.json")), "the agent planted no reading"
    assert planted.terminal_reason == "stop_hook_prevented", planted.result
    reasons = stop_reasons(planted)
    assert len(reasons) == 1 and "FORGE_GOAL_LEDGER_TAMPERED" in reasons[0], reasons
