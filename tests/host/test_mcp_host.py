"""A model in the real Claude Code walks forge's method through the plugin's MCP tools.

The plugin registers `forge mcp` in `.mcp.json`; the host starts it (offline) as
`plugin:forge:forge` and names its tools `mcp__plugin_forge_forge__<operation>`. The
scripted model creates a PRD, validates it, fills the sections the validation names,
records evidence, links it and activates the PRD, each time calling exactly the tool and
arguments of the `_next_action` it was just given. (Measured: the host shows the model a
tool's structured content, compact JSON, rather than its text content.)
"""

from __future__ import annotations

import json

import pytest

from forge_runtime.artifacts.store import Store
from forge_runtime.operations import parse_mcp_call
from forge_runtime.project import find_project

pytestmark = pytest.mark.host

TOOL = "mcp__plugin_forge_forge__"
PRD = ".forge/artifacts/PRD-001-verbose-flag.md"
TEMPLATE = ("## Goal\n\n<fill in: what must be true when this is done>\n\n"
            "## Acceptance criteria\n\n<fill in: checks that prove it, one per line>\n\n"
            "## Boundaries\n\n<fill in: what is out of scope, what must not change>\n\n"
            "## Unknowns and assumptions\n\n<fill in: what is not known yet, and what is "
            "assumed>")
FILLED = ("## Goal\n\nforge --verbose prints each step.\n\n## Acceptance criteria\n\n"
          "- a test runs forge --verbose and sees every step\n\n## Boundaries\n\n"
          "- no other flag changes\n\n## Unknowns and assumptions\n\n- none")


def _next(action: str) -> str:
    """What the model reads when a result's _next_action is `action`: the host hands it the
    tool's structured content re-serialised as compact JSON."""
    return f'"_next_action":{json.dumps(action)}'


SCRIPT = {"rules": [
    {"name": "done", "when": {"last_tool_result_contains": '"status":"active"'},
     "reply": {"text": "PRD-001 is active."}},
    {"name": "activate, as told",
     "when": {"last_tool_result_contains": _next('activate {"id": "PRD-001"}')},
     "reply": {"tool_calls": [{"name": f"{TOOL}activate", "input": {"id": "PRD-001"}}]}},
    {"name": "link the evidence, as told",
     "when": {"last_tool_result_contains": _next(
         'link {"source": "EVIDENCE-001", "target": "PRD-001", "relation": "informs"}')},
     "reply": {"tool_calls": [{"name": f"{TOOL}link", "input": {
         "source": "EVIDENCE-001", "target": "PRD-001", "relation": "informs"}}]}},
    {"name": "record evidence, as told",
     "when": {"last_tool_result_contains": _next(
         'new {"kind": "evidence", "title": "Evidence for PRD-001", "verdict": "supports", '
         '"congruence": "CL2", "type": "test"}')},
     "reply": {"tool_calls": [{"name": f"{TOOL}new", "input": {
         "kind": "evidence", "title": "Evidence for PRD-001", "verdict": "supports",
         "congruence": "CL2", "type": "test"}}]}},
    {"name": "validate again after the edit",
     "when": {"last_tool_result_contains": "has been updated"},
     "reply": {"tool_calls": [{"name": f"{TOOL}validate", "input": {"id": "PRD-001"}}]}},
    {"name": "fill in the sections the validation named",
     "when": {"last_tool_result_contains": "<fill in: what must be true"},
     "reply": {"tool_calls": [{"name": "Edit", "input": {
         "file_path": "{cwd}/" + PRD, "old_string": TEMPLATE, "new_string": FILLED}}]}},
    {"name": "read the file the validation names",
     "when": {"last_tool_result_contains": '"pass":false'},
     "reply": {"tool_calls": [{"name": "Read", "input": {"file_path": "{cwd}/" + PRD}}]}},
    {"name": "validate, as told",
     "when": {"last_tool_result_contains": _next('validate {"id": "PRD-001"}')},
     "reply": {"tool_calls": [{"name": f"{TOOL}validate", "input": {"id": "PRD-001"}}]}},
    {"name": "create the PRD", "when": {"last_is_tool_result": False},
     "reply": {"tool_calls": [{"name": f"{TOOL}new", "input": {
         "kind": "prd", "title": "Verbose flag", "affected_files": ["src/cli.py"]}}]}},
]}


def _exchanges(session) -> list[tuple[str, dict, str]]:
    """(tool, input, result text) of every tool call, in order, from the last request."""
    body = session.model_requests()[-1]
    calls, results = {}, {}
    order = []
    for message in body["messages"]:
        if not isinstance(message["content"], list):
            continue
        for block in message["content"]:
            if block.get("type") == "tool_use":
                calls[block["id"]] = (block["name"], block["input"])
                order.append(block["id"])
            elif block.get("type") == "tool_result":
                content = block["content"]
                results[block["tool_use_id"]] = content if isinstance(content, str) else "".join(
                    part.get("text", "") for part in content)
    return [(*calls[key], results.get(key, "")) for key in order]


def test_a_model_follows_each_next_action_to_an_active_prd(claude_host, project):
    host = claude_host(SCRIPT)
    session = host.run("Write up and activate a PRD for a --verbose flag.", cwd=project,
                       args=["--permission-mode", "acceptEdits", "--allowedTools",
                             f"Read,Edit,{TOOL}*"], timeout=120)

    assert session.terminal_reason == "completed", session.result
    assert session.plugin_errors() == []
    # The server is still "pending" when the session starts; its tools answer once it is up.
    assert [server["name"] for server in session.init["mcp_servers"]] == ["plugin:forge:forge"]
    exchanges = _exchanges(session)
    forge_calls = [(name[len(TOOL):], args, text) for name, args, text in exchanges
                   if name.startswith(TOOL)]
    assert [name for name, _, _ in forge_calls] == [
        "new", "validate", "validate", "new", "link", "activate"]
    for (_, _, before), (name, args, _) in zip(forge_calls, forge_calls[1:], strict=False):
        told = parse_mcp_call(json.loads(before)["_next_action"])
        assert (told.op, told.args) == (name, args), "the model did what the hint said"
    assert all("forge " not in json.loads(text)["_next_action"] for _, _, text in forge_calls
               if json.loads(text)["_next_action"]), "MCP hints name tools, not CLI commands"
    final = json.loads(forge_calls[-1][2])
    assert final["status"] == "active" and final["r_eff"] > 0

    artifacts = Store(find_project(project)).by_id()
    assert artifacts["PRD-001"].status == "active"
    assert artifacts["PRD-001"].path.parent == project / ".forge" / "artifacts"
    assert session.result["result"] == "PRD-001 is active."
