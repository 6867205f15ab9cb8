"""On the real Codex CLI: a usage limit ends the goal's autonomy.

A person's `/goal` in Codex's TUI; its first turn works (forge binds and charges it), its
second meets the usage limit (a 429 `usage_limit_reached` body). Codex 0.171.0 ends the
turn, runs no hook, sets its goal to `usage_limited` and does not continue by itself. The
person's next prompt is the session's next event: forge charges the limited turn from the
rollout's `task_complete` error with the usage-limit mark, the goal is exhausted at the
`usage_limit` ceiling, and that prompt is blocked with FORGE_GOAL_USAGE_LIMIT and the way
on (`Next: /goal <objective>`).
"""

from __future__ import annotations

import json
import shutil

import pytest
from codex_support import OBJECTIVE, PROMPT, native_goal_status
from goal_support import goal_in_state
from tui_support import Tui

from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.project import find_project

pytestmark = [pytest.mark.host,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

SCRIPT = """
rules:
  - name: model works
    times: 1
    reply: {text: "Working on it."}
  - name: usage limit
    times: 1
    reply: {error: {status: 429, usage_limit: {window: five_hour, resets_in: 3600}}}
  - name: model works again
    reply: {text: "Working on it."}
"""


def test_a_usage_limit_ends_the_codex_goal_at_the_next_prompt(codex_host, project, tmp_path):
    host = codex_host(SCRIPT)
    host.install_forge(project)
    tui = Tui(host, project, tmp_path / "tui")
    try:
        tui.wait_for(lambda: PROMPT in tui.screen(), "Codex's prompt")
        tui.type(f"/goal {OBJECTIVE}")
        tui.wait_for(lambda: [r["rule"] for r in host.server.requests].count("usage limit"),
                     "the usage limit", timeout=60)
        stops = tui.wait_for(lambda: tui.hooks("Stop"), "the first turn's Stop")
        assert len(stops) == 1 and stops[0]["stdout"].strip() in ("", "{}")
        session_id = json.loads(stops[0]["stdin"])["session_id"]
        tui.wait_for(lambda: native_goal_status(host, session_id) == "usage_limited",
                     "Codex to mark its goal usage_limited")
        tui.type("how far did you get?")
        blocked = tui.wait_for(lambda: [json.loads(call["stdout"]) for call in
                                        tui.hooks("UserPromptSubmit") if call["stdout"].strip()],
                               "the prompt's hook", timeout=60)
    finally:
        tui.close()
    assert blocked[0]["decision"] == "block"
    lines = blocked[0]["reason"].splitlines()
    assert lines[0].startswith("FORGE_GOAL_USAGE_LIMIT: goal ")
    assert f"Next: /goal {OBJECTIVE}" in lines
    goal = goal_in_state(project)
    history = Ledger(find_project(project).ledger_root, goal["nonce"]).history()
    charges = [record for record in history if record["kind"] == "charge"]
    # Codex writes the prompt's own turn (`turn_trigger: "user"`) before UserPromptSubmit
    # runs, so its catch-up charges that one too, and the mark goes with the event's last
    assert goal["status"] == "exhausted" and len(charges) == goal["turn_count"] == 3
    assert [record.get("usage_limit") for record in charges] == [None, None, True]
    assert history[-1]["kind"] == "exhaust" and history[-1]["ceiling"] == "usage_limit"
    assert [r["rule"] for r in host.server.requests].count("model works again") == 0
