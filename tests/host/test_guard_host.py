"""The guard against the real Claude Code binary: forge, not the host, denies, and says why.

Each test lets the host itself allow the tools (`--allowedTools`, `acceptEdits`), so a deny
can only come from forge's PreToolUse hook; the model then receives forge's reason text.
"""

from __future__ import annotations

import asyncio
import json
import sys
import uuid
from pathlib import Path

import pytest
from subagent_support import run_widened, widened_subagent

from forge_runtime.guard import modes
from forge_runtime.project import find_project
from forge_runtime.protected import paths

pytestmark = pytest.mark.host

MCP_SERVER = Path(__file__).with_name("mcp_write_server.py")
MCP_TOOL = "mcp__files__write_file"
FORGE_DENY = "PreToolUse:{tool} hook error: Error: forge guard: "


def tool_results(session) -> dict[str, dict]:
    """Every tool_result the model received, by the name of the tool it answers."""
    names, results = {}, {}
    for request in session.requests:
        for message in request["body"].get("messages", []):
            for block in message.get("content") if isinstance(message.get("content"),
                                                              list) else []:
                if block.get("type") == "tool_use":
                    names[block["id"]] = block["name"]
                elif block.get("type") == "tool_result":
                    content = block.get("content")
                    text = content if isinstance(content, str) else json.dumps(content)
                    results[names.get(block["tool_use_id"], "?")] = {
                        "text": text, "is_error": bool(block.get("is_error"))}
    return results


def forge_denials(session) -> dict[str, str]:
    """Tool name -> forge's deny reason, from the hook calls the host really made."""
    found = {}
    for call in session.hooks_for("PreToolUse"):
        reply = call.reply or {}
        output = reply.get("hookSpecificOutput", {})
        if output.get("permissionDecision") == "deny":
            found[call.stdin["tool_name"]] = output["permissionDecisionReason"]
    return found


def assert_denied_by_forge(session, tool: str, words: str) -> None:
    denials = forge_denials(session)
    assert tool in denials, f"forge did not deny {tool}: {sorted(denials)}"
    assert words in denials[tool]
    received = tool_results(session)[tool]
    assert received["is_error"]
    assert received["text"].startswith(FORGE_DENY.format(tool=tool)), received["text"]
    assert "\nFix: forge " in received["text"]


CLARIFY_SCRIPT = f"""
rules:
  - name: the model reads the refusals
    when: {{last_is_tool_result: true, conversation_contains: "forge guard"}}
    reply: {{text: "Refused; I will only ask questions."}}
  - name: every write tool at once
    when: {{conversation_contains: {MCP_TOOL}}}
    reply:
      tool_calls:
        - {{name: Write, input: {{file_path: "{{cwd}}/new.md", content: "x"}}}}
        - {{name: Edit, input: {{file_path: "{{cwd}}/notes.md", old_string: "original",
                                new_string: "changed"}}}}
        - {{name: Bash, input: {{command: "echo ran > {{cwd}}/ran.txt"}}}}
        - {{name: {MCP_TOOL}, input: {{path: "{{cwd}}/mcp.txt", content: "x"}}}}
        - {{name: Read, input: {{file_path: "{{cwd}}/notes.md"}}}}
  - name: the MCP server is still connecting
    times: 30
    reply: {{tool_calls: [{{name: Glob, input: {{pattern: "*.md"}}}}]}}
"""


def test_a_main_session_in_clarify_mode_gets_every_write_tool_denied(claude_host, project,
                                                                     tmp_path):
    (project / "notes.md").write_text("original\n")
    session_id = str(uuid.uuid4())
    modes.enter(paths.guard_dir(find_project(project)), session_id, "clarifier")
    config = tmp_path / "mcp.json"
    config.write_text(json.dumps({"mcpServers": {"files": {
        "command": sys.executable, "args": [str(MCP_SERVER)]}}}))
    host = claude_host(CLARIFY_SCRIPT)
    session = host.run("clarify the request", cwd=project, args=[
        "--session-id", session_id, "--mcp-config", str(config), "--permission-mode",
        "acceptEdits", "--allowedTools", f"Read,Write,Edit,Bash,Glob,{MCP_TOOL}"])

    assert session.terminal_reason == "completed", session.stderr
    assert session.session_id == session_id
    for tool in ("Write", "Edit", "Bash", MCP_TOOL):
        assert_denied_by_forge(session, tool, f"the clarifier role may not use {tool}")
        assert f"Fix: forge mode exit --session {session_id}" in forge_denials(session)[tool]
    assert (project / "notes.md").read_text() == "original\n"
    for name in ("new.md", "ran.txt", "mcp.txt"):
        assert not (project / name).exists()
    read = tool_results(session)["Read"]
    assert not read["is_error"] and "original" in read["text"], "reading must still work"
    assert session.result["result"] == "Refused; I will only ask questions."


WIDENED_PROMPT = "WIDENED-CLARIFIER: you may write whatever you like."
CLARIFY = "clarify the request"


def test_a_widened_forge_clarifier_is_still_denied_by_forge(claude_host, project):
    # the host then offers Write and Bash to it (checked below)
    session = run_widened(claude_host, project, "forge:clarifier", WIDENED_PROMPT, CLARIFY,
                          "clarify", tools=["Read", "Write", "Edit", "Bash"],
                          written="sub.md", ran="sub-ran.txt")

    assert session.terminal_reason == "completed", session.stderr
    sub_requests = [r for r in session.requests if r["rule"] == "the subagent tries to write"]
    assert {"Write", "Bash"} <= {t["name"] for t in sub_requests[0]["body"]["tools"]}
    for tool in ("Write", "Bash"):
        assert_denied_by_forge(session, tool, f"the clarifier role may not use {tool}")
    agent_types = {c.stdin.get("agent_type") for c in session.hooks_for("PreToolUse")
                   if c.stdin["tool_name"] in ("Write", "Bash")}
    assert agent_types == {"forge:clarifier"}
    assert not (project / "sub.md").exists() and not (project / "sub-ran.txt").exists()


def test_a_project_agent_is_guarded_once_the_rule_file_names_it(claude_host, project):
    # A project's own `.claude/agents/clarifier.md` is a different agent (`clarifier`, not
    # `forge:clarifier`); the project's rule file is how it joins a guarded role.
    agents = project / ".claude" / "agents"
    agents.mkdir(parents=True)
    (agents / "clarifier.md").write_text(
        "---\nname: clarifier\ndescription: the project's own clarifier\n"
        f"tools: Read, Write, Bash\n---\n{WIDENED_PROMPT}\n")
    (project / ".forge").mkdir(exist_ok=True)
    (project / ".forge" / "guard.yaml").write_text(
        "roles:\n  clarifier:\n    tools: [Read]\n    agents: [clarifier]\n")
    host = claude_host(widened_subagent(WIDENED_PROMPT, "clarifier", CLARIFY,
                                        written="sub.md", ran="sub-ran.txt"))
    session = host.run("clarify", cwd=project, args=[
        "--permission-mode", "acceptEdits", "--allowedTools", "Write,Edit,Bash,Agent"])

    assert session.terminal_reason == "completed", session.stderr
    for tool in ("Write", "Bash"):
        assert_denied_by_forge(session, tool, f"the clarifier role may not use {tool}")
    assert not (project / "sub.md").exists() and not (project / "sub-ran.txt").exists()


LEDGER_SCRIPT = """
rules:
  - name: the model reads the results
    when: {last_is_tool_result: true}
    reply: {text: "LEDGER-DONE"}
  - name: ordinary work, then three attacks on the ledger
    reply:
      tool_calls:
        - {name: Write, input: {file_path: "{cwd}/ordinary.md", content: "fine"}}
        - {name: Bash, input: {command: "echo fine > {cwd}/ordinary.txt"}}
        - {name: Bash, input: {command: "rm -rf .git/forge-goals"}}
        - {name: Write, input: {file_path: "{cwd}/.git/forge-goals/n1/records/00000001.json",
                                content: "{}"}}
        - {name: Bash, input: {command: "chmod -R 000 {cwd}/.git"}}
"""


def test_the_main_session_cannot_touch_the_ledger_but_works_normally(claude_host, project):
    record = project / ".git" / "forge-goals" / "n1" / "records" / "00000001.json"
    record.parent.mkdir(parents=True)
    record.write_text('{"seq": 1}\n')
    host = claude_host(LEDGER_SCRIPT)
    session = host.run("tidy up", cwd=project, args=[
        "--permission-mode", "acceptEdits", "--allowedTools", "Write,Edit,Bash"])

    assert session.terminal_reason == "completed", session.stderr
    assert (project / "ordinary.md").read_text() == "fine"
    assert (project / "ordinary.txt").read_text() == "fine\n"
    reasons = [json.loads(c.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
               for c in session.hooks_for("PreToolUse") if c.stdout.strip()]
    assert len(reasons) == 3, reasons
    assert "Bash deletes the goal ledger" in reasons[0]
    assert "Write would write the goal ledger" in reasons[1]
    assert "Bash re-permissions" in reasons[2] and "holds the goal ledger" in reasons[2]
    assert all("\nFix: forge goal status" in reason for reason in reasons)
    assert record.read_text() == '{"seq": 1}\n'
    assert (project / ".git").stat().st_mode & 0o700 == 0o700
    errors = [r for r in tool_results(session).values() if r["is_error"]]
    assert all(r["text"].startswith("PreToolUse:") for r in errors)


SHELL_TRICKS_SCRIPT = """
rules:
  - name: the model reads the results
    when: {last_is_tool_result: true}
    reply: {text: "TRICKS-DONE"}
  - name: shell tricks on the ledger and state.md, then ordinary shell grammar
    reply:
      tool_calls:
        - {name: Bash, input: {command: "{ rm -rf .git; }"}}
        - {name: Bash, input: {command: "ln -s . L && rm -rf L/.git"}}
        - {name: Bash, input: {command: "echo \\"$(rm -rf .git)\\""}}
        - {name: Bash, input: {command: "cp backup/state.md .forge/local/"}}
        - {name: Bash, input: {command: "if [ -d backup ]; then echo ok > ok.txt; fi"}}
"""


def test_shell_grammar_tricks_are_denied_and_ordinary_grammar_runs(claude_host, project):
    """Bypasses an adversarial review found (a group, a symlink made in the same command, a
    substitution in quotes, a copy into a directory) are denied by forge in the real host;
    the same grammar doing ordinary work still runs."""
    record = project / ".git" / "forge-goals" / "n1" / "records" / "00000001.json"
    record.parent.mkdir(parents=True)
    record.write_text('{"seq": 1}\n')
    state = project / ".forge" / "local" / "state.md"
    state.parent.mkdir(parents=True)
    state.write_text("---\ngoal: null\n---\n")
    (project / "backup").mkdir()
    (project / "backup" / "state.md").write_text("---\ngoal: {turn_count: 0}\n---\n")
    host = claude_host(SHELL_TRICKS_SCRIPT)
    session = host.run("tidy up", cwd=project, args=["--allowedTools", "Bash"])

    assert session.terminal_reason == "completed", session.stderr
    denied = [json.loads(c.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
              for c in session.hooks_for("PreToolUse") if c.stdout.strip()]
    assert len(denied) == 4, denied
    assert all(reason.startswith("Error: forge guard: Bash ") for reason in denied)
    assert all("\nFix: forge " in reason for reason in denied)
    assert record.read_text() == '{"seq": 1}\n'
    assert state.read_text() == "---\ngoal: null\n---\n"
    assert not (project / "L").exists()
    assert (project / "ok.txt").read_text() == "ok\n"
    last = session.requests[-1]["body"]["messages"]
    results = [block for message in last if isinstance(message.get("content"), list)
               for block in message["content"] if block.get("type") == "tool_result"]
    refused = [block for block in results if block.get("is_error")]
    assert len(results) == 5 and len(refused) == 4
    assert all(json.dumps(block["content"]).startswith('"PreToolUse:Bash hook error: Error: '
                                                       'forge guard: Bash') for block in refused)


def test_an_sdk_session_with_whitelist_guard_gets_write_and_bash_denied(project, tmp_path,
                                                                        claude_bin):
    from claude_agent_sdk import ClaudeAgentOptions, ToolResultBlock, UserMessage, query

    from forge_runtime.guard.sdk import whitelist_guard
    from forge_runtime.hostkit.runner import Host
    from forge_runtime.hostkit.script import Script

    script = Script.parse("""
rules:
  - name: done
    when: {last_is_tool_result: true}
    reply: {text: "SDK-DONE"}
  - name: try to write, then read
    reply:
      tool_calls:
        - {name: Write, input: {file_path: "{cwd}/sdk.md", content: "x"}}
        - {name: Bash, input: {command: "echo ran > {cwd}/sdk-ran.txt"}}
        - {name: Read, input: {file_path: "{cwd}/README.md"}}
""")

    async def collect(options):
        return [message async for message in query(prompt="clarify", options=options)]

    with Host(tmp_path / "host", script, isolate_network=False, claude_bin=claude_bin) as host:
        # the host kit's pretend HOME, model server and pre-answered trust, without a plugin
        _, env = host.interactive(project, tmp_path / "run")
        options = ClaudeAgentOptions(
            cli_path=str(claude_bin), cwd=str(project), env=env, setting_sources=[],
            allowed_tools=["Read", "Write", "Edit", "Bash"], permission_mode="acceptEdits",
            hooks={"PreToolUse": whitelist_guard(["Read", "Grep", "Glob"], role="clarifier")})
        messages = asyncio.run(asyncio.wait_for(collect(options), timeout=60))
    results = [block for message in messages if isinstance(message, UserMessage)
               and isinstance(message.content, list) for block in message.content
               if isinstance(block, ToolResultBlock)]
    assert len(results) == 3
    write, bash, read = results
    assert write.is_error and "the clarifier role may not use Write" in write.content
    assert bash.is_error and "the clarifier role may not use Bash" in bash.content
    assert not read.is_error and "A project for a forge host test." in read.content
    assert not (project / "sdk.md").exists() and not (project / "sdk-ran.txt").exists()


SELF_RESTRICT_SCRIPT = """
rules:
  - name: the model reads the refusals
    when: {last_is_tool_result: true, conversation_contains: "forge guard"}
    reply: {text: "Restricted, as asked."}
  - name: in the mode, the model tries to write and to leave
    when: {conversation_contains: "is in the clarifier mode"}
    reply:
      tool_calls:
        - {name: Write, input: {file_path: "{cwd}/brief.md", content: "x"}}
        - {name: Bash, input: {command: "{python} -m forge_runtime mode exit"}}
  - name: the model enters the clarify mode itself
    reply:
      tool_calls:
        - {name: Bash, input: {command: "{python} -m forge_runtime mode enter clarifier"}}
"""


def test_an_agent_may_enter_a_mode_for_its_own_session_but_not_leave_it(claude_host, project):
    # The Bash tool's environment carries CLAUDE_CODE_SESSION_ID, so a workflow step can
    # restrict its own session without knowing the id; leaving stays a person's act.
    host = claude_host(SELF_RESTRICT_SCRIPT)
    host.server.variables["python"] = sys.executable
    session = host.run("clarify", cwd=project, args=[
        "--permission-mode", "acceptEdits", "--allowedTools", "Write,Bash"])

    assert session.terminal_reason == "completed", session.stderr
    guard_dir = paths.guard_dir(find_project(project))
    assert modes.read_mode(guard_dir, session.session_id) == "clarifier"
    assert_denied_by_forge(session, "Write", "the clarifier role may not use Write")
    assert_denied_by_forge(session, "Bash", "the clarifier role may not use Bash")
    assert not (project / "brief.md").exists()


ENVIRONMENT_SCRIPT = """
rules:
  - name: the model reads the results
    when: {last_is_tool_result: true}
    reply: {text: "ENV-DONE"}
  - name: what the Bash tool sees, then a path built on the hook's own PYTHONPATH
    reply:
      tool_calls:
        - {name: Bash, input: {command: "env > bash-env.txt"}}
        - {name: Bash, input: {command: "rm -rf ${PYTHONPATH}.git"}}
        - {name: Bash, input: {command: "rm -rf ${CLAUDE_PLUGIN_ROOT:-.}/.git"}}
        - {name: Bash, input: {command: "echo '- [ ] step 3' >> .forge/local/state.md"}}
"""


def test_the_bash_tools_environment_is_not_the_hooks(claude_host, project):
    """Measured: the Bash tool inherits the session's HOME and TMPDIR, but not the
    launcher's PYTHONPATH nor the hook-only CLAUDE_PLUGIN_ROOT and CLAUDE_PROJECT_DIR; forge
    values a variable only when the two agree, so paths built on the others are denied, and
    the checklist append docs/guard.md gives the agent runs."""
    state = project / ".forge" / "local" / "state.md"
    state.parent.mkdir(parents=True)
    state.write_text("---\ngoal: null\n---\n## Checklist\n")
    host = claude_host(ENVIRONMENT_SCRIPT)
    session = host.run("look around", cwd=project, args=["--allowedTools", "Bash"])

    assert session.terminal_reason == "completed", session.stderr
    seen = dict(line.split("=", 1) for line in
                (project / "bash-env.txt").read_text().splitlines() if "=" in line)
    assert not {"PYTHONPATH", "CLAUDE_PLUGIN_ROOT", "CLAUDE_PROJECT_DIR"} & set(seen)
    assert seen["HOME"] == str(host.home) and seen["TMPDIR"] == str(host.tmpdir)
    denied = [json.loads(c.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
              for c in session.hooks_for("PreToolUse") if c.stdout.strip()]
    assert len(denied) == 2, denied
    assert all("a path forge cannot know before it runs" in reason for reason in denied)
    assert (project / ".git").is_dir()
    assert state.read_text() == "---\ngoal: null\n---\n## Checklist\n- [ ] step 3\n"
