"""`forge mcp` over stdio: one tool per operation, errors carrying their fix, the project
taken from the server's working directory (a worktree writes to itself)."""

from __future__ import annotations

import json
import subprocess
import sys

import anyio

from forge_runtime.hostkit.projects import add_worktree, init_git_project
from forge_runtime.operations import OPERATIONS
from tests.mcp_support import forge_mcp


def test_the_server_lists_one_tool_per_operation_with_its_schema(cli_project):
    async def listed():
        async with forge_mcp(cli_project) as session:
            return (await session.list_tools()).tools

    tools = {tool.name: tool for tool in anyio.run(listed)}
    assert list(tools) == [operation.name for operation in OPERATIONS]
    for operation in OPERATIONS:
        assert tools[operation.name].input_schema == operation.input_schema()
        assert tools[operation.name].description == operation.help


def test_a_refusal_is_a_tool_error_whose_data_carries_the_next_action(cli_project):
    async def calls():
        async with forge_mcp(cli_project) as session:
            return [await session.call_tool("activate", {"id": "PRD-404"}),
                    await session.call_tool("claim", {"id": "PRD-404"}),
                    await session.call_tool("nonsense", {})]

    missing, bad_input, unknown = anyio.run(calls)
    assert missing.is_error
    assert missing.structured_content["code"] == "FORGE_ARTIFACT_NOT_FOUND"
    assert missing.structured_content["_next_action"] == "list {}"
    assert missing.structured_content["_hint"]["marker"] == "Fix"
    assert json.loads(missing.content[0].text) == missing.structured_content
    assert bad_input.is_error
    assert bad_input.structured_content["_next_action"] == (
        'claim {"id": "PRD-404", "agent": "worker-1"}')
    assert unknown.is_error and unknown.structured_content["_next_action"] == "list {}"


def test_a_server_started_in_a_worktree_writes_there(tmp_path, monkeypatch):
    main = init_git_project(tmp_path / "main")
    tree = add_worktree(main, tmp_path / "feature")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(main))

    async def create():
        async with forge_mcp(tree) as session:
            return await session.call_tool("new", {"kind": "note", "title": "Here"})

    result = anyio.run(create)
    assert not result.is_error
    assert (tree / result.structured_content["path"]).is_file()
    assert not (main / ".forge" / "artifacts").exists()


def test_check_reports_the_tools_and_ends_with_a_hint(cli_project):
    shown = subprocess.run([sys.executable, "-m", "forge_runtime", "mcp", "--check", "--json"],
                           cwd=cli_project, capture_output=True, text=True, timeout=60)
    payload = json.loads(shown.stdout)
    assert payload["tools"] == [operation.name for operation in OPERATIONS]
    assert payload["_hint"]["marker"] == "Done"


def test_a_claim_the_model_sends_to_its_own_bare_repository_runs_not_its_hook(cli_project,
                                                                              tmp_path):
    """The model names the remote: a bare repository it made in its temp dir, with a
    `pre-receive` hook, must not take the claim or run the hook in the server's process."""
    marker = tmp_path / "hook-ran"
    agent = tmp_path / "agent-tmp" / "claims.git"
    subprocess.run(["git", "init", "-q", "--bare", str(agent)], check=True)
    hook = agent / "hooks" / "pre-receive"
    hook.write_text(f"#!/bin/sh\ntouch {marker}\n")
    hook.chmod(0o755)

    async def claim():
        async with forge_mcp(cli_project) as session:
            made = await session.call_tool("new", {"kind": "prd", "title": "Claims"})
            found = made.structured_content["id"]
            return [await session.call_tool("claim", {"id": found, "agent": "worker-1",
                                                      "remote": remote})
                    for remote in (str(agent), f"file://{agent}", "mine")]

    def refs() -> str:
        return subprocess.run(["git", "-C", str(agent), "for-each-ref"], capture_output=True,
                              text=True, check=True).stdout

    by_path, by_url, by_name = anyio.run(claim)
    for refused in (by_path, by_url):
        assert refused.is_error
        assert "not a remote configured" in refused.structured_content["_hint"]["error"]
    assert refs() == "" and not marker.exists()
    # named as a remote (the opted-out posture lets the agent write .git/config): the
    # claim lands there, and the hook still does not run
    subprocess.run(["git", "-C", str(cli_project), "remote", "add", "mine", str(agent)],
                   check=True)
    by_name = anyio.run(claim)[2]
    assert not by_name.is_error, by_name.structured_content
    assert "refs/forge/claims/" in refs() and not marker.exists()
