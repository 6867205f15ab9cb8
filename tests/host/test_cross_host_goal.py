"""One count across hosts: the same objective in the same repository is the same goal on
Claude Code and on Codex CLI. A session on the other host continues the count and the
ceiling; it is a fresh native session of that host (nothing is transferred between them).
"""

from __future__ import annotations

import json
import shutil

import pytest
from codex_support import OBJECTIVE, PROMPT, WORKS, run_goal_to_exhaustion
from goal_support import goal_in_state
from session_support import NEVER_MET, model_turns
from tui_support import Tui

pytestmark = [pytest.mark.host,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

NO_BLOCK_CAP = {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"}


def ledger_goal(project) -> tuple[dict, list[dict]]:
    """The goal as its ledger's head says, and its charge records (state.md mirrors no
    dollars)."""
    from forge_runtime.goal.store.ledger import Ledger
    from forge_runtime.project import find_project

    forge = find_project(project)
    history = Ledger(forge.ledger_root, goal_in_state(project)["nonce"]).history()
    return history[-1]["goal"], [record for record in history if record["kind"] == "charge"]


def claude_tranche(host, project):
    session = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=60, env=NO_BLOCK_CAP)
    assert session.terminal_reason == "stop_hook_prevented", session.result
    assert model_turns(session) == 20
    return session


def codex_tranche(host, project, tmp_path, name):
    tui = Tui(host, project, tmp_path / name)
    try:
        tui.wait_for(lambda: PROMPT in tui.screen(), "Codex's prompt")
        reply = run_goal_to_exhaustion(host, tui)
        return reply, json.loads(tui.hooks("Stop")[0]["stdin"])["session_id"]
    finally:
        tui.close()


def test_twenty_turns_on_claude_code_then_codex_continues_at_20_with_a_ceiling_of_40(
        claude_host, codex_host, project, tmp_path):
    claude = claude_host(NEVER_MET)
    codex = codex_host(WORKS)
    codex.install_forge(project)

    first = claude_tranche(claude, project)
    goal = goal_in_state(project)
    assert (goal["turn_count"], goal["turn_ceiling"], goal["status"]) == (20, 20, "exhausted")

    claude_goal, _ = ledger_goal(project)
    assert claude_goal["picousd"] > 0  # Claude Code's turns, priced

    reply, codex_session = codex_tranche(codex, project, tmp_path, "codex")
    assert "used 40 of 40 turns" in reply["stopReason"]
    after = goal_in_state(project)
    assert (after["nonce"], after["turn_count"], after["activation_count"]) == \
        (goal["nonce"], 40, 2)
    assert codex_session != first.session_id  # a fresh native session, not a transfer
    # the dollars carry over too: Codex's turns are added to Claude Code's, one count
    both, charges = ledger_goal(project)
    assert both["picousd"] > claude_goal["picousd"]
    assert both["picousd"] == sum(charge["usage"]["picousd"] for charge in charges)
    models = {model for charge in charges for model in charge["usage"]["by_model"]}
    assert len(models) >= 2, models  # one host's model and the other's


def test_twenty_turns_on_codex_then_claude_code_continues_at_20_with_a_ceiling_of_40(
        claude_host, codex_host, project, tmp_path):
    claude = claude_host(NEVER_MET)
    codex = codex_host(WORKS)
    codex.install_forge(project)

    reply, codex_session = codex_tranche(codex, project, tmp_path, "codex")
    assert "used 20 of 20 turns" in reply["stopReason"]
    goal = goal_in_state(project)

    second = claude_tranche(claude, project)
    reasons = [hook.reply["stopReason"] for hook in second.hooks_for("Stop")
               if hook.reply and "stopReason" in hook.reply]
    assert len(reasons) == 1 and "used 40 of 40 turns" in reasons[0]
    after = goal_in_state(project)
    assert (after["nonce"], after["turn_count"], after["activation_count"]) == \
        (goal["nonce"], 40, 2)
    assert second.session_id != codex_session
