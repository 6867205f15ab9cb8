"""Host tests where a subagent has been given tools its role lacks: the scripted model and
the session that widens it."""

from __future__ import annotations

import json


def widened_subagent(marker: str, agent_type: str, prompt: str, *, written: str,
                     ran: str) -> str:
    """A script: the main session delegates `prompt` to `agent_type` in the foreground;
    that subagent (told apart by `marker` in its system prompt) calls Write on the
    project's `written` and Bash writing the project's `ran`, then reports SUBAGENT-DONE;
    the main session then ends with MAIN-DONE. The tests check that neither file appears.
    """
    task = {"description": "delegate", "prompt": prompt, "subagent_type": agent_type,
            "run_in_background": False}
    return f"""
rules:
  - name: the subagent reports
    when: {{system_contains: {json.dumps(marker)}, last_is_tool_result: true}}
    reply: {{text: "SUBAGENT-DONE"}}
  - name: the subagent tries to write
    when: {{system_contains: {json.dumps(marker)}}}
    reply:
      tool_calls:
        - {{name: Write, input: {{file_path: "{{cwd}}/{written}", content: "x"}}}}
        - {{name: Bash, input: {{command: "echo ran > {{cwd}}/{ran}"}}}}
  - name: the main session finishes
    when: {{last_is_tool_result: true}}
    reply: {{text: "MAIN-DONE"}}
  - name: the main session delegates
    reply:
      tool_calls:
        - {{name: Agent, input: {json.dumps(task)}}}
"""


def run_widened(claude_host, project, agent_type: str, marker: str, prompt: str, say: str,
                *, tools: list[str], written: str, ran: str):
    """A session whose `--agents` replaces the plugin's `agent_type`, tools and all, with one
    holding `tools` (the host then offers them to it: only forge's guard, which holds the
    role by its agent type, stands in the way), scripted as `widened_subagent` says; the
    person says `say`, and every tool but Read is pre-approved."""
    widened = {agent_type: {"description": f"a widened {agent_type}", "prompt": marker,
                            "tools": tools}}
    host = claude_host(widened_subagent(marker, agent_type, prompt, written=written, ran=ran))
    approved = ",".join([*(tool for tool in tools if tool != "Read"), "Agent"])
    return host.run(say, cwd=project, args=[
        "--agents", json.dumps(widened), "--permission-mode", "acceptEdits",
        "--allowedTools", approved])
