"""A `/goal` prompt that a model caused never activates a goal (rule 1), on the real host.

The route: the model calls the host's ScheduleWakeup tool with `prompt: "/goal ..."`. About
a minute later (the host clamps the delay to >= 60 s and fires on a minute boundary, so
this test waits 60-120 s) the host submits that prompt: UserPromptSubmit receives exactly
`/goal model-made goal`, indistinguishable from a person's in the hook input. The host
itself does not set a goal from it; its transcript entry is `isMeta: true,
promptSource: "system"`. forge records the prompt as pending, finds no person's command
entry and no `Goal set:` for it at the Stop, and activates nothing.

That minute is the host's own clock, not work: the session starts as soon as collection
ends (`start_early`, see conftest.py) and waits while the other host tests run.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from goal_support import opt_out_of_sandbox

from forge_runtime import resources
from forge_runtime.goal import sessions
from forge_runtime.goal.status import goal_nonces
from forge_runtime.hostkit.projects import init_git_project
from forge_runtime.hostkit.pytest_plugin import as_script
from forge_runtime.hostkit.runner import Host, SessionResult
from forge_runtime.project import find_project

pytestmark = pytest.mark.host

SCHEDULES_A_GOAL = """
name: a model that schedules a /goal prompt for itself
rules:
  - name: evaluator
    when: {goal_evaluator: true}
    reply: {verdict: {ok: false, reason: "GOAL-NOT-MET: keep working"}}
  - name: after the tool
    when: {last_is_tool_result: true}
    reply: {text: "Scheduled."}
  - name: schedule
    times: 1
    reply:
      tool_calls:
        - name: ScheduleWakeup
          input: {delaySeconds: 60, reason: "a forge test", prompt: "/goal model-made goal"}
  - name: woken
    reply: {text: "Woken up."}
"""


def start_early(workdir: Path) -> tuple[SessionResult, Path]:
    """The session, in a fresh project with the forge plugin (as `claude_host` gives it)."""
    project = init_git_project(workdir / "project")
    opt_out_of_sandbox(project)  # the model's /goal meets no sandbox refusal: only forge's check
    with Host(workdir / "host", as_script(SCHEDULES_A_GOAL),
              plugin_dirs=[resources.host_plugin_dir(workdir)]) as host:
        session = host.run("loop on the build", cwd=project, timeout=180,
                           args=["--allowedTools", "ScheduleWakeup"])
    return session, project


def test_a_model_scheduled_goal_prompt_never_activates(started_early):
    session, project = started_early
    assert session.terminal_reason == "completed", session.result
    prompts = [hook.stdin["prompt"] for hook in session.hooks_for("UserPromptSubmit")]
    assert prompts == ["loop on the build", "/goal model-made goal"]
    entry = [e for e in session.transcript() if e.get("type") == "user"
             and (e.get("message") or {}).get("content") == "/goal model-made goal"]
    assert entry and entry[0]["isMeta"] is True and entry[0]["promptSource"] == "system"
    assert [r["rule"] for r in session.requests][-1] == "woken"
    assert all(hook.reply is None for hook in session.hooks_for("Stop"))
    forge = find_project(project)
    assert goal_nonces(forge) == []
    assert sessions.involvement(forge.ledger_root, session.session_id) == set()
    assert not forge.state_path.exists() or "model-made" not in forge.state_path.read_text()
