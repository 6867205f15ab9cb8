"""A ledger deleted, relocated (`.git/commondir`) or rolled back by the agent itself, with
forge's guard switched off, is caught at the next Stop and at the next /goal: the goal
witness outside the work tree sees it from its effects, not from the commands that ran."""

from __future__ import annotations

import pytest
from goal_support import goal_in_state
from session_support import plugin_with_hooks

pytestmark = pytest.mark.host

OBJECTIVE = "the file never.txt exists"

# Each tampering is the agent's Bash on its second turn; `backup` runs on its first.
TAMPER = {
    "deleted": "rm -rf .git/forge-goals",
    "relocated": 'mkdir -p ../elsewhere && echo "$(cd .. && pwd)/elsewhere" > .git/commondir',
    "rolled back": "rm -rf .git/forge-goals && cp -a ../backup .git/forge-goals",
}


def _bash(command: str) -> dict:
    """A Bash call running `command` from base64: the host refuses a command that names a
    path in `.git/` ("a sensitive file"), so the agent hides it, as a hostile one would."""
    import base64

    encoded = base64.b64encode(command.encode()).decode()
    return {"tool_calls": [{"name": "Bash", "input": {
        "command": f"echo {encoded} | base64 -d | sh"}}]}


def _script(tamper: str) -> dict:
    return {"rules": [
        {"name": "evaluator says not yet", "when": {"goal_evaluator": True},
         "reply": {"verdict": {"ok": False, "reason": "GOAL-NOT-MET: keep working"}}},
        {"name": "model reports", "when": {"last_is_tool_result": True},
         "reply": {"text": "Done that."}},
        {"name": "model tampers", "when": {"conversation_contains": "GOAL-NOT-MET"},
         "times": 1, "reply": _bash(tamper)},
        {"name": "model backs up", "times": 1,
         "reply": _bash("cp -a .git/forge-goals ../backup")},
        {"name": "model works", "reply": {"text": "Working on it."}},
    ]}


def _guard_off(config: dict) -> None:
    del config["hooks"]["PreToolUse"]


def _refusals(session) -> list[str]:
    """The Stop refusals' hints, without the checkpoint line that precedes a tamper hint."""
    return ["\n".join(line for line in hook.reply["stopReason"].splitlines()
                      if not line.startswith("Checkpoint: "))
            for hook in session.hooks_for("Stop") if hook.reply and "stopReason" in hook.reply]


@pytest.mark.parametrize("damage", list(TAMPER))
def test_a_lost_ledger_is_caught_at_the_next_stop_and_the_next_goal(claude_host, project,
                                                                    tmp_path, damage):
    host = claude_host(_script(TAMPER[damage]),
                       plugin_dirs=[plugin_with_hooks(tmp_path, _guard_off)])
    tools = ["--allowedTools", "Bash"]
    first = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=60, args=tools)

    assert first.hooks_for("PreToolUse") == []  # the guard is off: nothing stopped the agent
    rules = [request["rule"] for request in first.requests
             if request["rule"] != "evaluator says not yet"]
    assert rules[:4] == ["model backs up", "model reports", "model tampers", "model reports"]
    assert first.terminal_reason == "stop_hook_prevented", first.result
    stops = first.hooks_for("Stop")
    assert len(stops) == 2 and stops[0].reply is None  # caught at the very next Stop
    reason = _refusals(first)[0].splitlines()
    assert reason[0].startswith("Error: FORGE_GOAL_LEDGER_TAMPERED: "), reason
    assert reason[1] == "Fix: forge goal verify"

    again = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=60)
    assert again.terminal_reason == "stop_hook_prevented", again.result
    reason = _refusals(again)[0].splitlines()
    assert reason[0].startswith("Error: FORGE_GOAL_LEDGER_TAMPERED: "), reason
    assert "witness" in reason[0]
    assert goal_in_state(project)["turn_count"] == 1  # no goal started again from zero
