"""A person's Esc during a goal's turn, in the real Claude Code TUI: the turn is charged.

The goal is never met (the evaluator says not yet), so the host's goal loop continues after
the first turn; in the second the model runs a long Bash call and the person presses Esc.
The host fires no Stop for that turn and writes no reply that closes it, only its note
`[Request interrupted by user for tool use]`. Where the host has the Interrupt event
(Claude Code 2.1.337), forge's Interrupt hook charges the turn before the person's next
prompt, as its own (not late); where it has none (2.1.332), the next prompt charges it
late. Either way it is a turn of its own, never folded into the person's.
"""

from __future__ import annotations

import json
import shutil
import time

import pytest
from goal_support import goal_in_state
from session_support import host_knows_event

from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.project import find_project

pytestmark = [pytest.mark.host,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

OBJECTIVE = "the nap is over"
NAPS_ON_THE_SECOND_TURN = """rules:
  - name: evaluator says met
    when: {goal_evaluator: true, conversation_contains: "the person goes on"}
    reply: {verdict: {ok: true, reason: "the person took over"}}
  - name: evaluator says not yet
    when: {goal_evaluator: true}
    reply: {verdict: {ok: false, reason: "GOAL-NOT-MET: keep working"}}
  - name: host names the session
    when: {system_contains: "You are naming a coding session"}
    reply: {text: '{"title": "Nap"}'}
  - name: model rested
    when: {last_is_tool_result: true}
    reply: {text: "Rested."}
  - name: model works
    when: {conversation_lacks: "GOAL-NOT-MET"}
    reply: {text: "Working on it."}
  - name: model naps
    reply:
      tool_calls: [{name: Bash, input: {command: "python3 -c 'import time; time.sleep(30)'"}}]
"""


def _charges(project) -> list[dict]:
    ledger = Ledger(find_project(project).ledger_root, goal_in_state(project)["nonce"])
    return [record for record in ledger.history() if record["kind"] == "charge"]


def _transcript(tui) -> list[dict]:
    path = json.loads(tui.hooks("SessionStart")[0]["stdin"])["transcript_path"]
    with open(path, encoding="utf-8") as stream:
        return [json.loads(line) for line in stream if line.strip()]


def test_an_interrupted_turn_of_a_goal_is_charged_as_a_turn_of_its_own(claude_host, project,
                                                                        tui_factory):
    host = claude_host(NAPS_ON_THE_SECOND_TURN)
    fires_interrupt = host_knows_event(host, "Interrupt")
    tui = tui_factory(host, project, ["--allowedTools", "Bash"])
    tui.wait_for(lambda: "❯" in tui.screen(), "the TUI prompt")
    tui.type(f"/goal {OBJECTIVE}")
    tui.wait_for(lambda: tui.hooks("PreToolUse"), "the second turn's nap")
    time.sleep(0.5)  # the nap's Bash is running
    tui.keys("Escape")
    tui.wait_for(lambda: "Interrupted" in tui.screen(), "the interrupt")
    assert len(tui.hooks("Stop")) == 1  # the first turn's; the interrupted one fires none

    if fires_interrupt:
        (fired,) = tui.wait_for(lambda: tui.hooks("Interrupt"), "forge's Interrupt hook")
        assert {key: json.loads(fired["stdin"])[key] for key in ("source", "reason")} == {
            "source": "user", "reason": "stop"}
        assert fired["exit_code"] == 0 and fired["stdout"] == ""
        # charged before the person's next prompt, as the interrupted turn's own
        goal = goal_in_state(project)
        assert (goal["status"], goal["turn_count"]) == ("active", 2)
        assert not _charges(project)[-1].get("late")
    else:
        assert goal_in_state(project)["turn_count"] == 1

    tui.type("the person goes on")
    tui.wait_for(lambda: len(tui.hooks("Stop")) == 2, "the person's turn's Stop")
    entries = {entry.get("uuid"): entry for entry in _transcript(tui)}
    charges = _charges(project)
    assert len(charges) == 3 and goal_in_state(project)["turn_count"] == 3
    note = entries[charges[1]["turn"]]
    assert note["type"] == "user" and note["message"]["content"] == [
        {"type": "text", "text": "[Request interrupted by user for tool use]"}]
    assert bool(charges[1].get("late")) is not fires_interrupt
    assert charges[1]["usage"]["counted"] > 0  # the nap's request, in its own turn
    last = entries[charges[2]["turn"]]
    assert last["type"] == "assistant" and last["message"]["content"][0]["text"] == "Rested."
    assert all(call["exit_code"] == 0 for event in ("Stop", "UserPromptSubmit", "Interrupt")
               for call in tui.hooks(event))
