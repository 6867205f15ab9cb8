"""The guard's decision: roles from agent_type and modes, protection for all, fail closed."""

from __future__ import annotations

import pytest
from guard_support import event, guard_project_fixture

from forge_runtime import hints
from forge_runtime.cli.main import parses
from forge_runtime.guard import READ_ONLY, modes
from forge_runtime.guard.decide import decide
from forge_runtime.guard.roles import Role
from forge_runtime.project import find_project
from forge_runtime.protected import paths

project = guard_project_fixture()


def ask(project, tool, tool_input, **extra):
    env = {"HOME": str(project.parent), "CLAUDE_PROJECT_DIR": str(project)}
    return decide(event(tool, tool_input, project, **extra), env=env)


def enter_mode(project, role, session="sess-1"):
    modes.enter(paths.guard_dir(find_project(project)), session, role)


WRITES = [
    ("Write", {"file_path": "notes.md", "content": "x"}),
    ("Edit", {"file_path": "src/app.py", "old_string": "hi", "new_string": "ho"}),
    ("MultiEdit", {"file_path": "src/app.py", "edits": []}),
    ("NotebookEdit", {"notebook_path": "n.ipynb", "new_source": ""}),
    ("Bash", {"command": "ls"}),
    ("mcp__files__write_file", {"path": "notes.md", "content": "x"}),
    ("Agent", {"description": "d", "prompt": "p", "subagent_type": "general-purpose"}),
]


def assert_contract(hint):
    """A deny reason is Error + Fix, and the Fix is a real forge command."""
    assert hint is not None, "expected a deny"
    lines = hints.parse_lines(hint.render())
    assert [marker for marker, _ in lines][:2] == ["Error", "Fix"]
    assert parses(hint.text), hint.text
    assert not hints.has_placeholder(hint.text)


@pytest.mark.parametrize("tool, tool_input", WRITES)
def test_the_clarifier_subagent_is_denied_every_writing_tool(project, tool, tool_input):
    hint = ask(project, tool, tool_input, agent_type="forge:clarifier", agent_id="a1")
    assert_contract(hint)
    assert f"the clarifier role may not use {tool}" in hint.error
    assert hint.text == "forge guard roles"


@pytest.mark.parametrize("tool, tool_input", WRITES)
def test_a_session_in_clarify_mode_is_denied_every_writing_tool(project, tool, tool_input):
    enter_mode(project, "clarifier")
    hint = ask(project, tool, tool_input)
    assert_contract(hint)
    assert hint.text == "forge mode exit --session sess-1"


def test_a_mode_binds_only_its_own_session(project):
    enter_mode(project, "clarifier", session="other")
    assert ask(project, "Write", {"file_path": "notes.md", "content": "x"}) is None


def test_reading_is_allowed_in_every_role(project):
    enter_mode(project, "clarifier")
    for tool, tool_input in [("Read", {"file_path": "src/app.py"}), ("Grep", {"pattern": "x"}),
                             ("Glob", {"pattern": "*"})]:
        assert ask(project, tool, tool_input) is None
        assert ask(project, tool, tool_input, agent_type="forge:reviewer") is None


def test_a_subagent_in_a_guarded_session_gets_both_restrictions(project):
    enter_mode(project, "reviewer")
    hint = ask(project, "WebFetch", {"url": "http://127.0.0.1/"}, agent_type="forge:clarifier")
    assert "the reviewer role may not use WebFetch" in hint.error


def test_an_unknown_forge_agent_is_denied_everything_but_reading(project):
    hint = ask(project, "Write", {"file_path": "x", "content": "y"}, agent_type="forge:made-up")
    assert_contract(hint)
    assert "may use Read, Grep, Glob)" in hint.error
    assert ask(project, "Read", {"file_path": "x"}, agent_type="forge:made-up") is None


def test_other_agents_and_the_main_session_are_not_role_guarded(project):
    write = {"file_path": "notes.md", "content": "x"}
    assert ask(project, "Write", write) is None
    assert ask(project, "Write", write, agent_type="general-purpose") is None
    assert ask(project, "mcp__files__write_file", {"path": "notes.md"}) is None


def test_an_unreadable_mode_file_denies_everything_but_reading(project):
    path = modes.mode_path(paths.guard_dir(find_project(project)), "sess-1")
    import os

    os.makedirs(os.path.dirname(path))
    with open(path, "w") as handle:
        handle.write("{not json")
    assert ask(project, "Write", {"file_path": "x", "content": "y"}) is not None
    assert ask(project, "Bash", {"command": "true"}) is not None


@pytest.mark.parametrize("tool, tool_input", [
    ("Bash", {"command": "rm -rf .git/forge-goals"}),
    ("Bash", {"command": "chmod -R 000 .git"}),
    ("Bash", {"command": "echo '---' > .forge/local/state.md"}),
    ("Write", {"file_path": ".git/forge-goals/n1/records/00000001.json", "content": "{}"}),
    ("Edit", {"file_path": ".forge/local/state.md", "old_string": "turn_count: 3",
              "new_string": "turn_count: 0"}),
    ("mcp__files__delete", {"path": ".git/forge-goals/n1"}),
    ("mcp__files__write_file", {"path": ".forge/./local/state.md", "content": "x"}),
    ("mcp__files__move", {"moves": [{"from": "a", "to": "src/../.forge/./local/state.md"}]}),
    ("PowerShell", {"command": "Remove-Item -Recurse .git\\forge-goals"}),
])
def test_protected_paths_are_denied_to_an_unguarded_main_session(project, tool, tool_input):
    hint = ask(project, tool, tool_input)
    assert_contract(hint)
    assert hint.error.startswith(f"forge guard: {tool} ")
    assert f"{tool} {tool}" not in hint.error  # the tool is named once


def test_an_mcp_tool_naming_ordinary_files_passes(project):
    assert ask(project, "mcp__files__write_file", {"path": "src/app.py", "content": "x"}) is None
    assert ask(project, "mcp__files__list", {"path": ".", "depth": 2}) is None


def test_a_project_role_guards_its_agents(project):
    (project / ".forge" / "guard.yaml").write_text(
        "roles:\n  auditor:\n    tools: [Read]\n    agents: [auditor]\n")
    assert ask(project, "Bash", {"command": "ls"}, agent_type="auditor") is not None
    assert ask(project, "Read", {"file_path": "x"}, agent_type="auditor") is None


@pytest.mark.parametrize("tool, tool_input", [
    ("Bash", {"command": "rm -rf secrets"}),
    ("Write", {"file_path": "secrets/key", "content": "x"}),
])
def test_a_rule_file_protects_its_paths_in_an_unguarded_session(project, tool, tool_input):
    (project / "secrets").mkdir()
    assert ask(project, tool, tool_input) is None
    (project / ".forge" / "guard.yaml").write_text("protected: [secrets]\n")
    hint = ask(project, tool, tool_input)
    assert_contract(hint)
    assert "secrets" in hint.error


def test_a_broken_rule_file_denies_guarded_sessions_but_not_others(project):
    """...and never a read, which no rule can refuse (a role allows reading whatever its
    tools say, and the rules' extra protected paths are for writes)."""
    (project / ".forge" / "guard.yaml").write_text("roles:\n  x:\n    tools: Read\n")
    hint = ask(project, "Bash", {"command": "ls"}, agent_type="anything")
    assert_contract(hint)
    assert "guard.yaml:3" in hint.error and "FORGE_GUARD_RULES_INVALID" in hint.error
    for tool in READ_ONLY:
        assert ask(project, tool, {"file_path": "x"}, agent_type="anything") is None
    assert ask(project, "Bash", {"command": "ls"}) is None
    assert ask(project, "Bash", {"command": "rm -rf .git/forge-goals"}) is not None


def test_an_sdk_role_is_imposed_on_top(project):
    env = {"HOME": str(project.parent)}
    role = Role("sdk", ("Read", "Bash"))
    assert decide(event("Bash", {"command": "ls"}, project), env=env, role=role) is None
    assert decide(event("Write", {"file_path": "a", "content": ""}, project), env=env,
                  role=role) is not None
    assert decide(event("Bash", {"command": "rm -rf .git"}, project), env=env,
                  role=role) is not None


@pytest.mark.parametrize("broken", [
    {},
    {"session_id": "s", "tool_name": "Bash"},
    {"session_id": "s", "tool_name": "Bash", "tool_input": "rm -rf /"},
    {"session_id": 7, "tool_name": "Read", "tool_input": {}},
    {"session_id": "s", "tool_name": None, "tool_input": {}},
    {"session_id": "s", "tool_name": "Bash", "tool_input": {"command": ["rm"]}},
    {"session_id": "s", "tool_name": "Read", "tool_input": {}, "agent_type": 3},
])
def test_malformed_events_are_denied_with_a_contract_reason(broken):
    hint = decide(broken, env={})
    assert_contract(hint)
    assert "could not decide" in hint.error
