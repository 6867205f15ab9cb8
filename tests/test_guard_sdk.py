"""`whitelist_guard`: the same rules as an in-process claude-agent-sdk hook."""

from __future__ import annotations

import asyncio

from guard_support import event, make_project

from forge_runtime.guard.sdk import whitelist_guard


def call(matchers, payload):
    return asyncio.run(matchers[0].hooks[0](payload, payload.get("tool_use_id"), None))


def test_it_is_one_blocking_matcher_for_every_tool():
    (matcher,) = whitelist_guard(["Read"])
    assert matcher.matcher is None and matcher.on_failure == "block"
    assert matcher.timeout is not None


def test_tools_outside_the_list_and_protected_writes_are_denied(tmp_path):
    project = make_project(tmp_path / "proj")
    matchers = whitelist_guard(["Read", "Bash"], role="planner", env={"HOME": str(tmp_path)})
    assert call(matchers, event("Read", {"file_path": "src/app.py"}, project)) == {}
    assert call(matchers, event("Bash", {"command": "ls"}, project)) == {}
    write = call(matchers, event("Write", {"file_path": "a", "content": ""}, project))
    reason = write["hookSpecificOutput"]["permissionDecisionReason"]
    assert write["hookSpecificOutput"]["permissionDecision"] == "deny"
    assert reason.startswith("Error: forge guard: the planner role may not use Write")
    ledger = call(matchers, event("Bash", {"command": "rm -rf .git/forge-goals"}, project))
    assert ledger["hookSpecificOutput"]["permissionDecision"] == "deny"


def test_malformed_input_is_denied():
    reply = call(whitelist_guard(["Read"]), {"tool_name": "Read"})
    assert reply["hookSpecificOutput"]["permissionDecision"] == "deny"
