"""Turns the host starts for the agent, after its goal's budget ended, on the real host.

One session (issue 32 items 2-3): in the goal's first turn the model schedules a wake-up
(ScheduleWakeup), a one-shot cron (CronCreate), a background subagent and a background
shell, all allowed while the budget can pay; the subagent's tokens end the goal at that
turn's Stop (the token ceiling). Then the host starts turns on its own: the background
tasks finish and their notices come in, the subagent, still running, calls a tool, and the
wake-up fires (on a minute boundary, 60-120 s on; the cron never fires in `-p`, measured).
Each of those tool calls is denied with the checkpoint, so none of the files they would
write exists, and the woken turn's ScheduleWakeup and CronCreate are refused (no chain);
each such turn's Stop ends it and puts it on the ledger as an over-budget record with its
tokens, and the goal's count stays where the budget ended it.

The wait is the host's own clock, so the session starts early (tests/host/conftest.py).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from goal_support import goal_in_state, opt_out_of_sandbox

from forge_runtime import resources
from forge_runtime.goal.ledger import Ledger
from forge_runtime.hostkit.projects import init_git_project
from forge_runtime.hostkit.pytest_plugin import as_script
from forge_runtime.hostkit.runner import Host, SessionResult
from forge_runtime.project import find_project

pytestmark = pytest.mark.host

OBJECTIVE = "the file never.txt exists"
USAGE = "usage: {input_tokens: 1000, output_tokens: 0}"
SCRIPT = f"""
name: a model that starts turns for itself, then runs out of budget
rules:
  - name: evaluator says not yet
    when: {{goal_evaluator: true}}
    reply: {{verdict: {{ok: false, reason: "GOAL-NOT-MET: keep working"}}}}
  - name: denied
    when: {{last_tool_result_contains: "FORGE_GOAL_ENDED_TURN"}}
    reply: {{text: "Denied, so I stop.", {USAGE}}}
  - name: subagent after its wait
    when: {{last_tool_result_contains: "SUB-WAITED"}}
    reply:
      tool_calls: [{{name: Bash, input: {{command: "touch {{cwd}}/after-subagent.txt"}}}}]
      {USAGE}
  - name: subagent starts
    when: {{last_user_text_contains: "SUBAGENT-TASK", last_is_tool_result: false}}
    reply:
      tool_calls:
        - name: Bash
          input: {{command: "python3 -c 'import time; time.sleep(20)'; echo SUB-WAITED"}}
      {USAGE}
  - name: woken
    when: {{last_user_text_contains: "WOKEN", last_is_tool_result: false}}
    reply:
      tool_calls:
        - {{name: Bash, input: {{command: "touch {{cwd}}/after-woken.txt"}}}}
        - name: ScheduleWakeup
          input: {{delaySeconds: 60, reason: "again", prompt: "WOKEN-AGAIN go on"}}
        - name: CronCreate
          input: {{cron: "*/5 * * * *", prompt: "WOKEN-AGAIN go on", recurring: true}}
      {USAGE}
  - name: notified
    when: {{last_user_text_contains: "task-notification", last_is_tool_result: false}}
    reply:
      tool_calls: [{{name: Bash, input: {{command: "touch {{cwd}}/after-notice.txt"}}}}]
      {USAGE}
  - name: schedules
    times: 1
    when: {{last_is_tool_result: false}}
    reply:
      tool_calls:
        - name: ScheduleWakeup
          input: {{delaySeconds: 60, reason: "a forge test", prompt: "WOKEN-WAKEUP go on"}}
        - name: CronCreate
          input: {{cron: "{{cron}}", prompt: "WOKEN-CRON go on", recurring: false}}
        - name: Agent
          input: {{description: "waits", prompt: "SUBAGENT-TASK wait, then write",
                   subagent_type: general-purpose, run_in_background: true}}
        - name: Bash
          input: {{command: "python3 -c 'import time; time.sleep(15)'; echo BG-SHELL-DONE",
                   run_in_background: true}}
      {USAGE}
  - name: after its tools
    when: {{last_is_tool_result: true}}
    reply: {{text: "Scheduled.", {USAGE}}}
  - name: model works
    reply: {{text: "Working on it.", {USAGE}}}
"""
TOOLS = "Bash,Agent,ScheduleWakeup,CronCreate"


def start_early(workdir: Path) -> tuple[SessionResult, Path]:
    project = init_git_project(workdir / "project")
    opt_out_of_sandbox(project)
    # the first turn's two responses spend 2,000; the second turn's reaches the ceiling
    (project / ".forge" / "guard.yaml").write_text(
        "goal: {require_sandbox: false, tranche: {tokens: 2500}}\n")
    # a one-shot cron at the next minute, before the wake-up
    at = time.localtime(time.time() + 75)
    script = SCRIPT.replace("{cron}", f"{at.tm_min} {at.tm_hour} * * *")
    with Host(workdir / "host", as_script(script),
              plugin_dirs=[resources.host_plugin_dir(workdir)]) as host:
        session = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=360,
                           args=["--allowedTools", TOOLS])
    return session, project


def test_turns_the_host_starts_after_the_budget_ended_do_no_work_and_are_on_the_ledger(
        started_early):
    session, project = started_early
    rules = [request["rule"] for request in session.requests]
    first = session.hooks_for("PreToolUse")[:4]  # the first turn's: allowed, budget left
    assert all(hook.reply is None for hook in first), [h.reply for h in first]
    goal = goal_in_state(project)
    # the subagent's tokens count to the turn that started it: the first turn ends it
    assert (goal["status"], goal["turn_count"]) == ("exhausted", 1), (goal, rules)

    for name in ("after-woken.txt", "after-notice.txt", "after-subagent.txt"):
        assert not (project / name).exists(), name
    denied = [hook for hook in session.hooks_for("PreToolUse") if hook.reply]
    reasons = [hook.reply["hookSpecificOutput"]["permissionDecisionReason"] for hook in denied]
    assert all(reason.startswith("FORGE_GOAL_ENDED_TURN: ") for reason in reasons), reasons
    assert "woken" in rules and "notified" in rules and "subagent after its wait" in rules, \
        rules
    assert any("ScheduleWakeup starts" in reason for reason in reasons)  # no chain

    prompts = [hook.stdin["prompt"] for hook in session.hooks_for("UserPromptSubmit")]
    started = prompts[1:]  # every prompt after the person's /goal: the host's
    ledger = Ledger(find_project(project).ledger_root, goal["nonce"])
    history = ledger.history()  # verified, the new records included
    overruns = [record for record in history if record["kind"] == "overrun"]
    assert len(overruns) == len(started) >= 3, (prompts, [r["kind"] for r in history])
    assert all(record["usage"]["counted"] > 0 for record in overruns)
    head = ledger.current().goal
    assert (head["turn_count"], head["overrun_count"]) == (1, len(overruns))
    assert any(prompt.startswith("WOKEN-WAKEUP") for prompt in started), prompts
    # measured: in `-p` the host never fires a CronCreate one-shot (`* * * * *`, or a named
    # minute before a pending wake-up); refusing it after the end is what forge can do here
    assert any("CronCreate starts" in reason for reason in reasons), reasons
    assert sum("<task-notification>" in prompt for prompt in started) >= 2, prompts
    stops = [hook.reply for hook in session.hooks_for("Stop")]
    assert stops and all(reply and reply.get("continue") is False for reply in stops), stops
