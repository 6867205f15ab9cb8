"""Turns the host starts for the agent, after its goal's budget ended, on the real host.

One session: in the goal's first turn the model schedules a
wake-up (ScheduleWakeup), a one-shot cron (CronCreate), a background subagent and a
background shell, all allowed while the budget can pay; the subagent's tokens end the goal
at that turn's Stop (the token ceiling). Then the host sends prompts on its own: the
background tasks finish and their notices come in, and the wake-up fires (on a minute
boundary, 60-120 s on; the cron never fires in `-p`, measured). Each of those prompts is
held at UserPromptSubmit, so the model never sees one: no turn starts, nothing is charged
or recorded. The subagent, still running, calls a tool: denied with the checkpoint, so the
file it would write does not exist. Then the person resumes the session with a prompt of
their own: it goes through, and its tool call runs.

The wait is the host's own clock, so the session starts early (tests/host/conftest.py).
"""

from __future__ import annotations

import time
from pathlib import Path

import pytest
from goal_support import goal_in_state, opt_out_of_sandbox

from forge_runtime import resources
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.hostkit.projects import init_git_project
from forge_runtime.hostkit.pytest_plugin import as_script
from forge_runtime.hostkit.runner import Host, SessionResult
from forge_runtime.hostkit.script import Request
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
  - name: person asks
    when: {{last_user_text_contains: "PERSON-ASKS", last_is_tool_result: false}}
    reply:
      tool_calls: [{{name: Bash, input: {{command: "touch {{cwd}}/person.txt"}}}}]
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


def start_early(workdir: Path) -> tuple[SessionResult, SessionResult, Path]:
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
        person = host.run("PERSON-ASKS for one more file", cwd=project, timeout=120,
                          resume=session.session_id, args=["--allowedTools", TOOLS])
    return session, person, project


def test_prompts_the_host_sends_after_the_budget_ended_never_reach_the_model(started_early):
    session, person, project = started_early
    rules = [request["rule"] for request in session.requests]
    first = session.hooks_for("PreToolUse")[:4]  # the first turn's: allowed, budget left
    assert all(hook.reply is None for hook in first), [h.reply for h in first]
    goal = goal_in_state(project)
    # the subagent's tokens count to the turn that started it: the first turn ends it
    assert (goal["status"], goal["turn_count"]) == ("exhausted", 1), (goal, rules)

    prompts = session.hooks_for("UserPromptSubmit")[1:]  # every one after the person's /goal
    sent = [hook.stdin["prompt"] for hook in prompts]
    assert any(prompt.startswith("WOKEN-WAKEUP") for prompt in sent), sent
    assert sum("<task-notification>" in prompt for prompt in sent) >= 2, sent
    for hook in prompts:  # each held before the model saw it
        assert hook.reply["decision"] == "block", (hook.stdin["prompt"], hook.reply)
        assert hook.reply["reason"].startswith("FORGE_GOAL_ENDED_TURN: "), hook.reply
    assert "woken" not in rules and "notified" not in rules, rules
    assert not any("WOKEN" in Request(request["body"]).last_user_text
                   for request in session.requests), rules

    assert not (project / "after-subagent.txt").exists()  # the subagent's call was denied
    denied = [hook for hook in session.hooks_for("PreToolUse") if hook.reply]
    reasons = [hook.reply["hookSpecificOutput"]["permissionDecisionReason"] for hook in denied]
    assert reasons and all(reason.startswith("FORGE_GOAL_ENDED_TURN: ") for reason in reasons)
    assert "subagent after its wait" in rules, rules
    ledger = Ledger(find_project(project).ledger_root, goal["nonce"])
    head = ledger.current().goal  # verified; no turn the host started was charged
    assert (head["turn_count"], head.get("overrun_count", 0)) == (1, 0)
    stops = [hook.reply for hook in session.hooks_for("Stop")]
    assert stops and all(reply and reply.get("continue") is False for reply in stops), stops

    # the person's own prompt afterwards is theirs: it reaches the model and its call runs
    assert [hook.reply for hook in person.hooks_for("UserPromptSubmit")] == [None]
    assert "person asks" in [request["rule"] for request in person.requests]
    assert (project / "person.txt").exists()
