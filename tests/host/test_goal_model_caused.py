"""A `/goal` prompt that a model caused never activates a goal, on the real host.

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
from forge_runtime.goal.store import layout, sessions
from forge_runtime.goal.store.ledger import goal_nonces
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
  - name: resumed works
    when: {conversation_contains: "RESUMED-TURN"}
    times: 3
    reply:
      tool_calls: [{name: Bash, input: {command: "echo step"}}]
      usage: {input_tokens: 1000, output_tokens: 0}
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


def start_early(workdir: Path) -> tuple[SessionResult, SessionResult, Path]:
    """The session, in a fresh project with the forge plugin (as `claude_host` gives it),
    then the same session resumed for a turn of three tool calls."""
    project = init_git_project(workdir / "project")
    opt_out_of_sandbox(project)  # the model's /goal meets no sandbox refusal: only forge's check
    # a tranche of 1,000 tokens: the woken /goal's first turn is held to it while pending
    (project / ".forge" / "guard.yaml").write_text(
        "goal: {require_sandbox: false, tranche: {tokens: 1000}}\n")
    with Host(workdir / "host", as_script(SCHEDULES_A_GOAL),
              plugin_dirs=[resources.host_plugin_dir(workdir)]) as host:
        session = host.run("loop on the build", cwd=project, timeout=180,
                           args=["--allowedTools", "ScheduleWakeup"])
        resumed = host.run("RESUMED-TURN: go on", cwd=project, resume=session.session_id,
                           timeout=60, args=["--allowedTools", "Bash"])
    return session, resumed, project


def test_a_model_scheduled_goal_prompt_never_activates(started_early):
    session, resumed, project = started_early
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
    # the pending /goal holds nothing past its Stop: the next turn's three calls of
    # 1,000 tokens each (three times that tranche) all ran
    assert [r["rule"] for r in resumed.requests].count("resumed works") == 3
    assert all(hook.reply is None for hook in resumed.hooks_for("PreToolUse"))
    assert len(resumed.hooks_for("PreToolUse")) == 3
    assert sessions.involvement(forge.ledger_root, session.session_id) == set()


NESTED_OBJECTIVE = "nested objective"
STARTS_NESTED_SESSIONS = """
rules:
  - name: evaluator says met
    when: {goal_evaluator: true}
    reply: {verdict: {ok: true, reason: "met"}}
  - name: outer finishes
    when: {last_is_tool_result: true}
    reply: {text: "outer done"}
  - name: nested answers
    when: {last_user_text_contains: "nested objective"}
    reply: {text: "nested done"}
  - name: outer starts nested sessions
    times: 1
    reply:
      tool_calls: [{name: Bash, input: {command: "{nested}"}}]
"""


def test_a_host_session_the_agent_starts_never_counts_as_a_person(claude_host, project):
    """`claude -p "/goal ..."` from the agent's Bash (the opted-out posture: the kernel
    layer is off) reads like a person's `/goal`, and must not activate a goal. Three ways to
    start one: plainly, with the tool's environment marker removed, and exec'd from a
    subshell, from a script the guard does not read; each /goal is refused at its prompt and
    activates nothing."""
    host = claude_host(STARTS_NESTED_SESSIONS)
    claude, plugin = host.claude_bin, host.plugin_dirs[0]
    log = host.workdir / "nested.log"  # what the nested sessions print (their hooks' replies)
    run = f"{claude} -p '/goal {NESTED_OBJECTIVE} %s' --plugin-dir {plugin} </dev/null >>{log} 2>&1"
    # a script, as an agent writes one with its Write tool and runs it: the guard does not
    # read a Python script's text (the guard's own refusal of a readable one is its layer)
    script = host.tmpdir / "nested.py"
    script.write_text("import subprocess\n" + "".join(
        f"subprocess.run({command!r}, shell=True)\n" for command in (
            run % "one", "env -u CLAUDE_CODE_EXECPATH " + run % "two",
            f"(exec {run % 'three'})")))
    host.server.variables["nested"] = f"python3 {script}; echo NESTED-EXIT=$?"
    session = host.run("start the nested sessions", cwd=project, timeout=90,
                       args=["--allowedTools", "Bash"])
    assert session.terminal_reason == "completed", session.result
    assert "NESTED-EXIT=0" in str(session.transcript()), "the guard refused the script"
    printed = log.read_text()
    refusals = printed.split("UserPromptSubmit operation blocked by hook:\n")[1:]
    assert len(refusals) == 3, printed
    for which, refusal in zip(("one", "two", "three"), refusals, strict=True):
        assert refusal.startswith("Error: FORGE_GOAL_NOT_A_PERSON: this /goal comes from a "
                                  "host session an agent started"), refusal
        assert f"\nFix: /goal {NESTED_OBJECTIVE} {which}\n" in refusal, refusal
    # without the tool's environment marker, the process ancestry still tells
    assert "was started below another host session" in refusals[1], refusals[1]
    forge = find_project(project)
    assert goal_nonces(forge) == []
    assert not list((Path(forge.ledger_root) / layout.SESSIONS_DIR).glob("*.pending.json"))
