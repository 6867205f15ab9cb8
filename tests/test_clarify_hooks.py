"""The SubagentStop and PostToolUse hooks around forge's clarifier, offline: they act only for
`forge:clarifier`, freeze through the same code as the CLI, and hand the verdict on once."""

from __future__ import annotations

import io
import json
import subprocess
import sys

from forge_runtime.clarify.brief import Brief
from forge_runtime.hooks import dispatch

FULL = ("## Goal\nExport CSV.\n## Acceptance criteria\n- report.csv exists\n## Boundaries\n"
        "- no PDF\n## Unknowns and assumptions\n- readers: finance\n")


def hook(event: str, payload: dict) -> dict | None:
    out, err = io.StringIO(), io.StringIO()
    assert dispatch.run([event], io.BytesIO(json.dumps(payload).encode()), out, err) == 0
    assert err.getvalue() == ""
    return json.loads(out.getvalue()) if out.getvalue() else None


def stop(project, agent_type="forge:clarifier", **fields) -> dict | None:
    return hook("SubagentStop", {"session_id": "s1", "hook_event_name": "SubagentStop",
                                 "cwd": str(project), "agent_type": agent_type, **fields})


def post(project, subagent_type="forge:clarifier") -> dict | None:
    return hook("PostToolUse", {"session_id": "s1", "hook_event_name": "PostToolUse",
                                "cwd": str(project), "tool_name": "Agent",
                                "tool_input": {"subagent_type": subagent_type, "prompt": "x"},
                                "tool_response": {}})


def test_other_subagents_and_agent_calls_get_nothing_and_load_nothing(tmp_path):
    assert stop(tmp_path, "general-purpose", last_assistant_message=FULL) is None
    assert stop(tmp_path, None) is None
    assert post(tmp_path, "Explore") is None
    assert not (tmp_path / ".forge").exists()
    code = ("import io, json, sys; from forge_runtime.hooks import dispatch; "
            "e = {'session_id': 's', 'hook_event_name': 'SubagentStop', 'agent_type': 'Explore'};"
            " dispatch.run(['SubagentStop'], io.BytesIO(json.dumps(e).encode()), sys.stdout, "
            "sys.stderr); print(sorted(m for m in sys.modules if m.startswith('forge_runtime.')))")
    loaded = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                            timeout=60, cwd=tmp_path).stdout
    assert "clarify" not in loaded and "forge_runtime.hooks.subagent_stop" in loaded


def test_a_complete_answer_is_frozen_and_the_verdict_reaches_the_agent_call_once(tmp_path):
    reply = stop(tmp_path, last_assistant_message="Done. Here it is:\n" + FULL)
    assert reply["systemMessage"].startswith("Next: /goal every acceptance criterion")
    assert Brief.load(tmp_path / ".forge" / "notes" / "brief.md") == Brief.parse(FULL)
    context = post(tmp_path)["hookSpecificOutput"]
    assert context == {"hookEventName": "PostToolUse", "additionalContext": reply["systemMessage"]}
    assert post(tmp_path) is None


def test_the_answer_is_read_from_the_agents_transcript_when_the_field_is_missing(tmp_path):
    transcript = tmp_path / "agent.jsonl"
    transcript.write_text("\n".join(json.dumps(entry) for entry in [
        {"type": "assistant", "message": {"content": [{"type": "text", "text": FULL}]}},
        {"type": "user", "message": {"content": "thanks"}}]) + "\n")
    stop(tmp_path, agent_transcript_path=str(transcript))
    assert Brief.load(tmp_path / ".forge" / "notes" / "brief.md").complete


def test_a_second_clarify_keeps_the_earlier_brief(tmp_path):
    stop(tmp_path, last_assistant_message=FULL)
    reply = stop(tmp_path, last_assistant_message=FULL.replace("CSV", "TSV"))
    assert "the earlier one is kept as brief.1.md" in reply["systemMessage"]
    assert "CSV" in (tmp_path / ".forge" / "notes" / "brief.1.md").read_text()


def test_an_incomplete_answer_is_kept_as_a_draft_and_never_frozen(tmp_path):
    reply = stop(tmp_path, last_assistant_message=FULL.replace("## Boundaries\n- no PDF\n", ""))
    assert reply["systemMessage"].startswith("Next: /forge:clarify complete the draft brief\n")
    assert "it lacks Boundaries" in reply["systemMessage"]
    assert not (tmp_path / ".forge" / "notes").exists()
    assert Brief.load(tmp_path / ".forge" / "local" / "brief-draft.md").lacking == ("Boundaries",)
    stop(tmp_path, last_assistant_message=FULL)
    assert not (tmp_path / ".forge" / "local" / "brief-draft.md").exists()
