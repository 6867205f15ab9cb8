"""The scripted model of host tests where a subagent has been given tools its role lacks."""

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
