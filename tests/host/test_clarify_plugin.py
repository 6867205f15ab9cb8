"""`/forge:clarify` in `claude -p`: the skill hands the wish to `forge:clarifier`, which may
not write; forge's SubagentStop hook freezes its brief and the Agent call's PostToolUse
tells the main session what happened.

Measured here: SubagentStop carries the subagent's final answer as `last_assistant_message`
(and `agent_transcript_path`); nothing it replies reaches the main session's model.
"""

from __future__ import annotations

import json

import pytest

from forge_runtime import hints
from forge_runtime.clarify.brief import Brief
from forge_runtime.hostkit.script import text_of

pytestmark = pytest.mark.host

FULL = ("## Goal\\nExport reports as CSV.\\n## Acceptance criteria\\n- report.csv exists\\n"
        "## Boundaries\\n- no PDF\\n## Unknowns and assumptions\\n- readers: assumed finance\\n")
NO_BOUNDARIES = FULL.replace("## Boundaries\\n- no PDF\\n", "")
CLARIFIER_MARK = "You are forge's clarifier"


def script(brief: str) -> str:
    return f"""
rules:
  - name: clarifier answers with the brief
    when: {{system_contains: "{CLARIFIER_MARK}", last_is_tool_result: true}}
    reply: {{text: "{brief}"}}
  - name: clarifier tries to write the brief
    when: {{system_contains: "{CLARIFIER_MARK}"}}
    reply:
      tool_calls: [{{name: Write, input: {{file_path: "{{cwd}}/brief.md", content: "x"}}}}]
  - name: main session relays forge's word
    when: {{last_is_tool_result: true}}
    reply: {{text: "Relayed."}}
  - name: main session follows the skill
    when: {{conversation_contains: "subagent_type", tools_present: Agent}}
    reply:
      tool_calls:
        - name: Agent
          input: {{description: "clarify the request", prompt: "Clarify: export reports",
                  subagent_type: "forge:clarifier", run_in_background: false}}
"""


def _tool_results(session) -> list[dict]:
    return [block for request in session.requests for message in request["body"]["messages"]
            if isinstance(message.get("content"), list) for block in message["content"]
            if block.get("type") == "tool_result"]


def _main_context(session) -> str:
    """What forge's PostToolUse added, once it reached the main session's last request.

    The host may append text of its own to that block (the deferred-tools list, the MCP
    servers' instructions, depending on whether forge's MCP server had connected yet), so
    the model's copy must contain forge's words rather than equal them.
    """
    (post,) = session.hooks_for("PostToolUse")
    said = post.reply["hookSpecificOutput"]["additionalContext"]
    last = session.requests[-1]["body"]["messages"]
    texts = [text_of(message["content"]) for message in last if message.get("role") == "system"
             and "PostToolUse:Agent" in text_of(message["content"])]
    assert len(texts) == 1, json.dumps(last)[-2000:]
    assert f"additional context: {said}" in texts[0]
    return said


def test_the_clarifiers_brief_is_frozen_by_forge_and_the_main_session_is_told(
        claude_host, project):
    host = claude_host(script(FULL))
    session = host.run("/forge:clarify export reports as CSV", cwd=project,
                       args=["--permission-mode", "acceptEdits"])

    assert session.terminal_reason == "completed", session.result
    assert [r["rule"] for r in session.requests] == [
        "main session follows the skill", "clarifier tries to write the brief",
        "clarifier answers with the brief", "main session relays forge's word"]
    assert session.plugin_errors() == []
    (write,) = [r for r in _tool_results(session) if "Write" in json.dumps(r)]
    assert write["is_error"] is True  # the host offers the clarifier no Write at all
    assert not (project / "brief.md").exists()

    (stop,) = session.hooks_for("SubagentStop")
    assert stop.stdin["agent_type"] == "forge:clarifier"
    assert stop.stdin["last_assistant_message"].startswith("## Goal\nExport reports as CSV.")
    assert stop.stdin["agent_transcript_path"].endswith(".jsonl")
    brief = Brief.load(project / ".forge" / "notes" / "brief.md")
    assert brief.complete and brief["Boundaries"] == "- no PDF"

    said = _main_context(session)
    assert hints.split_rendered(said)[1].next_action == (
        "/goal every acceptance criterion of the brief holds: report.csv exists")
    assert "forge froze the clarifier's brief at .forge/notes/brief.md" in said
    assert not list((project / ".forge" / "local").glob("clarify-outcome-*"))


def test_an_incomplete_brief_is_not_frozen_and_the_hint_says_what_it_lacks(
        claude_host, project):
    # The agent redefined with Write: the host would offer it, forge's guard still denies it.
    widened = json.dumps({"forge:clarifier": {
        "description": "clarifier with too many tools", "tools": ["Read", "Write"],
        "prompt": f"{CLARIFIER_MARK}. Answer with the brief."}})
    host = claude_host(script(NO_BOUNDARIES))
    session = host.run("/forge:clarify export reports as CSV", cwd=project,
                       args=["--permission-mode", "acceptEdits", "--agents", widened])

    assert session.terminal_reason == "completed", session.result
    (write,) = [call for call in session.hooks_for("PreToolUse")
                if call.stdin["tool_name"] == "Write"]
    assert write.stdin["agent_type"] == "forge:clarifier"
    assert "the clarifier role may not use Write" in \
        write.reply["hookSpecificOutput"]["permissionDecisionReason"]
    assert not (project / "brief.md").exists()

    assert not (project / ".forge" / "notes" / "brief.md").exists()
    draft = Brief.load(project / ".forge" / "local" / "brief-draft.md")
    assert draft.lacking == ("Boundaries",) and draft["Goal"] == "Export reports as CSV."
    said = _main_context(session)
    _, hint = hints.split_rendered(said)
    assert hint.next_action == "/forge:clarify complete the draft brief"
    assert "forge did not freeze the clarifier's brief: it lacks Boundaries" in hint.rationale
