"""Helpers shared by the Codex host tests: the never-finishing model and a goal run in the TUI."""

from __future__ import annotations

import json
import sqlite3

OBJECTIVE = "the file never.txt exists"
WORKS = """
rules:
  - name: model works
    reply: {text: "Working on it."}
"""
PROMPT = "Ask Codex"


def model_turns(host) -> int:
    return sum(1 for request in host.server.requests if request["rule"] == "model works")


def exhausted_stops(tui) -> list[dict]:
    return [json.loads(call["stdout"]) for call in tui.hooks("Stop")
            if "FORGE_GOAL_BUDGET_EXHAUSTED" in call["stdout"]]


def start_goal(codex_host, project, tui_factory, script, objective: str = OBJECTIVE):
    """A Codex host answering with `script`, forge installed in `project`, its TUI in full
    access (commands Codex runs in its own sandbox hang in the host kit's PID namespace)
    with the person's `/goal <objective>` typed: (host, tui)."""
    host = codex_host(script)
    host.install_forge(project)
    tui = tui_factory(host, project, ("--sandbox", "danger-full-access"))
    tui.wait_for(lambda: PROMPT in tui.screen(), "Codex's prompt")
    tui.type(f"/goal {objective}")
    return host, tui


def denial_reasons(tui) -> list[str]:
    """The reasons of the PreToolUse denials of a Codex TUI, in order."""
    return [json.loads(call["stdout"])["hookSpecificOutput"]["permissionDecisionReason"]
            for call in tui.hooks("PreToolUse") if call["stdout"].strip()]


def native_goal_status(host, session_id: str) -> str:
    store = sorted(host.codex_home.glob("goals_*.sqlite"))[-1]
    with sqlite3.connect(store) as db:
        return db.execute("SELECT status FROM thread_goals WHERE thread_id = ?",
                          (session_id,)).fetchone()[0]


def run_goal_to_exhaustion(host, tui, turns_before: int = 0) -> dict:
    """Type the person's `/goal` and wait until forge has stopped it at the ceiling."""
    stopped_before = len(exhausted_stops(tui))
    tui.type(f"/goal {OBJECTIVE}")
    if turns_before:  # Codex asks before replacing the goal it paused
        tui.wait_for(lambda: "Replace goal?" in tui.screen(), "Codex's replace question")
        tui._tmux("send-keys", "-t", "tui", "Enter")
    tui.wait_for(lambda: len(exhausted_stops(tui)) > stopped_before,
                 "forge to stop the goal at its ceiling", timeout=60)
    return exhausted_stops(tui)[-1]
