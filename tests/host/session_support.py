"""The host-session helpers of the host tests: the scripted models and tool calls they share,
forge's plugin with edited hooks, and what a finished session's hooks and requests say.

Project and goal fixtures are tests/goal_support.py's.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

# The scripted model of host tests whose goal is never met: the host's /goal evaluator always
# says not yet, so only forge's budget (or a person) ends the run. Each working turn is
# answered by the rule named "model works" (see `model_turns`).
NEVER_MET = """
rules:
  - name: evaluator says not yet
    when: {goal_evaluator: true}
    reply: {verdict: {ok: false, reason: "GOAL-NOT-MET: keep working"}}
  - name: model works
    reply: {text: "Working on it."}
"""


def plugin_with_hooks(scratch: Path, edit) -> Path:
    """forge's plugin with its hooks.json changed by `edit(config)` (for a host test that
    shortens a timeout or switches a hook off); the rest is linked, not copied."""
    import shutil

    from forge_runtime import resources

    source, plugin = resources.host_plugin_dir(scratch), scratch / "forge-plugin-edited"
    plugin.mkdir()
    for entry in source.iterdir():
        if entry.name != "hooks":
            (plugin / entry.name).symlink_to(entry)
    shutil.copytree(source / "hooks", plugin / "hooks")
    config = json.loads((plugin / "hooks" / "hooks.json").read_text())
    edit(config)
    (plugin / "hooks" / "hooks.json").write_text(json.dumps(config, indent=2))
    return plugin


def host_knows_event(host, event: str) -> bool:
    """Whether this host build has the hook event: its own validator lists forge's entry for
    it among what the plugin provides (a build without the event drops the entry, with a
    warning: Claude Code 2.1.332 for Interrupt)."""
    done = host.cli(["plugin", "validate", str(host.plugin_dirs[0]), "--json"])
    return any(hook["event"] == event for hook in json.loads(done.stdout)["provides"]["hooks"])


def model_turns(session) -> int:
    """How many working turns a host session's scripted model answered."""
    return sum(1 for request in session.requests if request["rule"] == "model works")


def stop_reasons(session) -> list[str]:
    """The reasons of the Stop replies that ended or refused a turn, in order."""
    return [hook.reply["stopReason"] for hook in session.hooks_for("Stop")
            if hook.reply and "stopReason" in hook.reply]


def bash(command: str) -> dict:
    """A scripted model's Bash tool call."""
    return {"name": "Bash", "input": {"command": command}}


def working_until_denied(usage: dict | None = None, *, call: dict | None = None,
                         calls: int | None = 12, evaluator: bool = True,
                         evaluator_usage: dict | None = None, first_turn: bool = False,
                         before: tuple[dict, ...] = ()) -> dict:
    """The scripted model of a budget test: each response asks for `call` (Bash's
    `echo step` unless named) until forge denies one for the goal's budget, and then it gives
    up; every response reports `usage` (no usage when None).

    `calls`: after so many calls the model ends its long turn in text; None: it never does.
    `evaluator`: the host's /goal evaluator says not yet (Claude Code has one, Codex not),
    its response reporting `evaluator_usage`. `first_turn`: the goal's first turn is one
    response of text, so the calls come in its second. `before`: rules that answer before
    `model works` does.
    """
    def reply(**fields) -> dict:
        return fields if usage is None else {**fields, "usage": usage}

    rules = []
    if evaluator:
        verdict = {"verdict": {"ok": False, "reason": "GOAL-NOT-MET: keep working"}}
        if evaluator_usage is not None:
            verdict["usage"] = evaluator_usage
        rules.append({"name": "evaluator says not yet", "when": {"goal_evaluator": True},
                      "reply": verdict})
    if first_turn:
        rules.append({"name": "the first turn", "times": 1,
                      "reply": reply(text="Looking around.")})
    rules.append({"name": "the model gives up when forge denies",
                  "when": {"last_tool_result_contains": "FORGE_GOAL_BUDGET_EXHAUSTED"},
                  "reply": reply(text="forge stopped me.")})
    rules.extend(before)
    works = {"name": "model works", "reply": reply(tool_calls=[call or bash("echo step")])}
    if calls is None:
        return {"rules": [*rules, works]}
    return {"rules": [*rules, {**works, "times": calls},
                      {"name": "the model ends its long turn", "reply": reply(text="All done.")}]}


def guard_goal(project: Path, goal: str) -> None:
    """The project's .forge/guard.yaml: `goal: {require_sandbox: false, <goal>}` (the host
    tests' projects opt out of the kernel layer)."""
    (project / ".forge").mkdir(exist_ok=True)
    (project / ".forge" / "guard.yaml").write_text(
        f"goal: {{require_sandbox: false, {goal}}}\n")


def tool_denials(session, output: str = "step") -> tuple[list[str], int]:
    """(the reasons of the PreToolUse denials, how many Bash calls ran) of a Claude Code
    session: a call ran when its output, `output`, is in the transcript, and every
    PreToolUse either denied a call or let one run."""
    denials = [hook.reply["hookSpecificOutput"]["permissionDecisionReason"]
               for hook in session.hooks_for("PreToolUse") if hook.reply]
    ran = sum(1 for entry in session.transcript() if entry.get("type") == "user"
              and f"'content': '{output}'" in str((entry.get("message") or {}).get("content")))
    assert len(session.hooks_for("PreToolUse")) == ran + len(denials), (denials, ran)
    return denials, ran


def forge_cli(project, home, *words: str) -> subprocess.CompletedProcess:
    """`forge <words>` in the project, with `home` as HOME and the rest of this environment."""
    env = {**os.environ, "HOME": str(home), "CLAUDE_PROJECT_DIR": str(project)}
    return subprocess.run([sys.executable, "-m", "forge_runtime", *words], cwd=project,
                          env=env, capture_output=True, text=True, timeout=120)
