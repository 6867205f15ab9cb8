"""The plan's windows in the real Claude Code (issue 35): a goal held to a share of its
subscription's 5-hour window, or to points of the week of its own, is stopped within one
tool call of crossing; figures forge did not write, or none at all, end autonomy.

Measured on 2.1.332 (docs/goal-ledger.md, "Plan windows: what forge can see"): the host hands
the windows (`rate_limits`) to its status line only on a subscription login, only in the
interactive TUI, and only a moment after each answer, after that answer's own PreToolUse:
a tool call is checked against the figures of the answer before it. So every tool call
here first sleeps a second (a person's model takes longer than that to answer), and the
status line has recorded the answer's figures before the next call is asked about.
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


def _install_statusline(project, host, log) -> None:
    """forge's status line as a person installs it (`forge init --statusline`), over a
    status line of their own that keeps each input the host sends it (`log`)."""
    own = (f"{sys.executable} -c \"import sys; open('{log}', 'a').write("
           "sys.stdin.read().replace(chr(10), ' ') + chr(10))\"")
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir(exist_ok=True)
    # redrawn every second: the last draw of a goal's stop can find the ledger busy with it
    settings.write_text(json.dumps({"statusLine": {"type": "command", "command": own,
                                                   "refreshInterval": 1}}))
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
# at the third call: that call has been asked about already (on 35), the next is denied.
# Then the person types /goal again with a 5-hour ceiling of 80: in that first turn the
# window rises 70, 76, 82: the call of the answer at 82 was asked about at 76, the next
# is denied.
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
    from forge_runtime.goal.ledger import Ledger

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
    assert ran in (["week-1", "week-2"], ["week-1", "week-2", "week-3"]), \
        (ran, denied, [call["stdout"] for call in tui.hooks("Stop")], inputs.read_text())
    assert len(denied) == 1 and denied[0][0] == f"week-{len(ran) + 1}", denied
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
    assert ran in (["hours-1", "hours-2"], ["hours-1", "hours-2", "hours-3"]), (ran, denied)
    assert len(denied) == 2 and denied[1][0] == f"hours-{len(ran) + 1}", \
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
