"""The guard and forge's gate files: `.forge/gates.yaml` is refused to every writing tool while
the project has a goal in progress (and only then), and the gate receipts' key is refused to
every tool, reads included, in every session."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from goal_support import activate_with_gates, goal_project
from test_guard_decide import assert_contract

from forge_runtime.goal.rules import charging
from forge_runtime.goal.store.layout import receipt_key
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.guard.decide import decide

GATES = "gates:\n  unit-tests:\n    command: pytest -q\n    boundary: [\"src/**\"]\n"
WEAKENED = GATES.replace("pytest -q", "true")


@pytest.fixture
def project(tmp_path, monkeypatch):
    project = goal_project(tmp_path, monkeypatch)
    (project.root / ".forge").mkdir(exist_ok=True)
    (project.root / ".forge" / "gates.yaml").write_text(GATES)
    return project


def ask(project, tool: str, tool_input: dict, agent_type: str | None = None):
    event = {"session_id": "sess-1", "hook_event_name": "PreToolUse", "tool_name": tool,
             "tool_input": tool_input, "cwd": str(project.root), "tool_use_id": "t1"}
    if agent_type:
        event["agent_type"] = agent_type
    return decide(event, env={"HOME": str(project.root.parent),
                              "CLAUDE_PROJECT_DIR": str(project.root)})


def start_goal(project) -> str:
    return activate_with_gates(project, "the parser passes its tests").goal["nonce"]


GATES_WRITES = [
    ("Write", {"file_path": ".forge/gates.yaml", "content": WEAKENED}),
    ("Edit", {"file_path": ".forge/gates.yaml", "old_string": "pytest -q",
              "new_string": "true"}),
    ("MultiEdit", {"file_path": ".forge/gates.yaml",
                   "edits": [{"old_string": "pytest -q", "new_string": "true"}]}),
    ("apply_patch", {"command": "*** Begin Patch\n*** Update File: .forge/gates.yaml\n"
                                "@@\n-    command: pytest -q\n+    command: true\n"
                                "*** End Patch\n"}),
    ("Bash", {"command": "sed -i 's/pytest -q/true/' .forge/gates.yaml"}),
    ("Bash", {"command": "printf 'gates: {}\\n' > .forge/gates.yaml"}),
    ("Bash", {"command": "rm .forge/gates.yaml"}),
    ("Bash", {"command": "mv .forge/gates.yaml /tmp/gates.yaml"}),
    ("Bash", {"command": "cd .forge && cp /dev/null gates.yaml"}),
]


@pytest.mark.parametrize("tool, tool_input", GATES_WRITES)
def test_a_change_to_the_gates_file_is_refused_while_a_goal_is_in_progress(project, tool,
                                                                           tool_input):
    nonce = start_goal(project)
    hint = ask(project, tool, tool_input)
    assert_contract(hint)
    assert f"while goal {nonce} is in progress" in hint.error
    assert hint.text == f"forge goal status --nonce {nonce}"
    assert "types the same /goal again" in hint.rationale
    assert (project.root / ".forge" / "gates.yaml").read_text() == GATES


@pytest.mark.parametrize("tool, tool_input", GATES_WRITES)
def test_with_no_goal_in_progress_the_gates_file_is_the_projects_own(project, tool,
                                                                      tool_input):
    assert ask(project, tool, tool_input) is None


def test_a_goal_awaiting_its_first_stop_is_in_progress_already(project):
    """The person's prompt records the gates before the model's first turn: that turn may
    not change them either."""
    from goal_support import Session

    Session(project).person_goal("the parser passes its tests")
    hint = ask(project, *GATES_WRITES[0])
    assert_contract(hint)
    assert "while goal (a /goal awaiting its first Stop) is in progress" in hint.error
    assert hint.text == "forge goal status"


@pytest.mark.parametrize("command", [
    "git checkout -- .forge/gates.yaml",
    "python3 -c 'open(\".forge/gates.yaml\", \"w\").write(\"\")'"])
def test_what_the_shell_model_cannot_read_stays_refused_during_a_goal(project, command):
    start_goal(project)
    assert_contract(ask(project, "Bash", {"command": command}))
    assert (project.root / ".forge" / "gates.yaml").read_text() == GATES


@pytest.mark.parametrize("ending", ["complete", "cancel"])
def test_a_goal_that_ended_leaves_the_gates_file_free(project, ending):
    nonce = start_goal(project)
    assert ask(project, *GATES_WRITES[0]) is not None
    charging.end(Ledger(project.ledger_root, nonce), project.state_path, ending, "s", "test")
    assert ask(project, *GATES_WRITES[0]) is None


def test_reading_the_gates_file_during_a_goal_is_allowed(project):
    start_goal(project)
    assert ask(project, "Read", {"file_path": ".forge/gates.yaml"}) is None
    assert ask(project, "Bash", {"command": "cat .forge/gates.yaml && forge gate status"}) \
        is None
    assert ask(project, "Write", {"file_path": "src/app.py", "content": "x = 1\n"}) is None


def test_a_goal_whose_ledger_cannot_be_read_counts_as_in_progress(project):
    nonce = start_goal(project)
    charging.end(Ledger(project.ledger_root, nonce), project.state_path, "complete", "s", "t")
    head = project.ledger_root / nonce / "head.json"
    head.write_text("{broken")
    hint = ask(project, *GATES_WRITES[0])
    assert hint is not None and f"goal {nonce}" in hint.error


# -- the receipt key ---------------------------------------------------------------------

@pytest.fixture
def key(project):
    path = receipt_key(str(project.ledger_root))
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "wb") as handle:
        handle.write(os.urandom(32))
    return path


def key_reads(project, key: str) -> list[tuple[str, dict]]:
    relative = os.path.relpath(key, project.root)
    gates_dir = os.path.dirname(relative)
    return [
        ("Read", {"file_path": key}),
        ("Read", {"file_path": relative}),
        ("NotebookRead", {"notebook_path": relative}),
        ("Grep", {"pattern": ".", "path": gates_dir}),
        ("Grep", {"pattern": ".", "path": ".git"}),
        ("Grep", {"pattern": ".", "glob": "**/receipt.key"}),
        ("Glob", {"pattern": "*", "path": gates_dir}),
        ("Bash", {"command": f"cat {relative}"}),
        ("Bash", {"command": f"cp {relative} /tmp/k"}),
        ("Bash", {"command": f"base64 {relative}"}),
        ("Bash", {"command": "python3 -c 'print(open(\".git/forge-goals/gates/\" + "
                             "\"receipt.key\", \"rb\").read())'"}),
        ("Bash", {"command": "tar cf - .git/forge-goals/gates | base64"}),
        ("mcp__files__read_file", {"path": relative}),
    ]


@pytest.mark.parametrize("agent_type", [None, "forge:clarifier"])
def test_every_tool_is_refused_a_read_of_the_receipt_key(project, key, agent_type):
    for tool, tool_input in key_reads(project, key):
        hint = ask(project, tool, tool_input, agent_type)
        assert_contract(hint)
        assert "receipts' key" in hint.error, (tool, tool_input)


def test_a_symlink_to_the_key_is_refused_too(project, key):
    (project.root / "k").symlink_to(key)
    assert ask(project, "Read", {"file_path": "k"}) is not None


def test_ordinary_reads_and_searches_stay_allowed(project, key):
    for tool, tool_input in [("Read", {"file_path": "src/app.py"}),
                             ("Grep", {"pattern": "TODO", "path": "."}),
                             ("Grep", {"pattern": "TODO"}),
                             ("Glob", {"pattern": "**/*.py"}),
                             ("Bash", {"command": "forge gate run && forge gate status"}),
                             ("Read", {"file_path": ".git/forge-goals/repository-id"})]:
        assert ask(project, tool, tool_input) is None, (tool, tool_input)


def test_the_read_allow_path_imports_nothing_heavy(project, key):
    """The key check runs on every Read: it must keep the allow path's imports."""
    event = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Read",
             "tool_input": {"file_path": "src/app.py"}, "cwd": str(project.root)}
    code = ("import sys, io, json\nfrom forge_runtime.hooks import dispatch\n"
            f"raw = json.dumps({event!r}).encode()\n"
            "before = set(sys.modules)\n"
            "out = io.StringIO()\n"
            "dispatch.run(['PreToolUse'], io.BytesIO(raw), out, io.StringIO())\n"
            "print(sorted({'re', 'pathlib', 'json', 'forge_runtime.goal.store.ledger'} & "
            "(set(sys.modules) - before)), repr(out.getvalue()))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "CLAUDE_PROJECT_DIR": str(project.root)},
                          timeout=30)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "[] ''"


def test_a_real_hook_process_refuses_the_key_read(project, key):
    event = {"session_id": "s", "hook_event_name": "PreToolUse", "tool_name": "Read",
             "tool_input": {"file_path": key}, "cwd": str(project.root)}
    done = subprocess.run([sys.executable, "-m", "forge_runtime.hooks", "PreToolUse"],
                          input=json.dumps(event), capture_output=True, text=True, timeout=30,
                          env={**os.environ, "CLAUDE_PROJECT_DIR": str(project.root)})
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)["hookSpecificOutput"]
    assert reply["permissionDecision"] == "deny"
    assert "receipts' key" in reply["permissionDecisionReason"]
