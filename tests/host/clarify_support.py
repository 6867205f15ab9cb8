"""Rules of the scripted model that the `forge clarify` host tests share (YAML list items)."""

from __future__ import annotations

# Opens every dialogue: a question with options, while no answer has come back yet.
FIRST_QUESTION = """\
  - name: first question
    when: {conversation_lacks: '"outcome"', tools_present: mcp__human__ask}
    reply:
      tool_calls:
        - {name: mcp__human__ask, input: {question: "Which format?", options: [CSV, JSON]}}
"""


def ask_after(answer: str, question: str, name: str = "second question") -> str:
    """A rule: once the person's `answer` has come back, ask `question`."""
    return f"""\
  - name: {name}
    when: {{last_tool_result_contains: '"answer": "{answer}"'}}
    reply:
      tool_calls: [{{name: mcp__human__ask, input: {{question: "{question}"}}}}]
"""
