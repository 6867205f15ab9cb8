"""The PreToolUse hook end to end: stdin in, the host's deny reply out, never fail open."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from guard_support import event, make_project
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forge_runtime.guard import modes, rules
from forge_runtime.guard.roles import DEFAULT_ROLES
from forge_runtime.hooks import dispatch
from forge_runtime.project import find_project
from forge_runtime.protected import paths

LAUNCHER = Path(__file__).resolve().parents[1] / "hooks" / "forge-hook"
CLARIFIER = DEFAULT_ROLES["clarifier"]


def run_hook(raw: bytes) -> tuple[dict | None, str]:
    out, err = io.StringIO(), io.StringIO()
    assert dispatch.run(["PreToolUse"], io.BytesIO(raw), out, err) == 0
    return (json.loads(out.getvalue()) if out.getvalue() else None), err.getvalue()


def is_deny(reply: dict | None) -> bool:
    output = (reply or {}).get("hookSpecificOutput", {})
    return output.get("permissionDecision") == "deny" and bool(
        output.get("permissionDecisionReason"))


@pytest.fixture
def project(tmp_path, monkeypatch):
    root = make_project(tmp_path / "proj")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(root))
    return root


def test_a_deny_is_the_hosts_reply_shape_with_a_contract_reason(project):
    reply, err = run_hook(json.dumps(event("Write", {"file_path": "a", "content": ""}, project,
                                           agent_type="forge:clarifier")).encode())
    assert is_deny(reply)
    reason = reply["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.splitlines()[0].startswith("Error: forge guard: the clarifier role")
    assert reason.splitlines()[1] == "Fix: forge guard roles"
    assert reply["hookSpecificOutput"]["hookEventName"] == "PreToolUse"
    assert err == ""


def test_an_allowed_call_gets_no_reply_so_the_hosts_permissions_still_apply(project):
    reply, err = run_hook(json.dumps(event("Write", {"file_path": "a", "content": ""},
                                           project)).encode())
    assert reply is None and err == ""


@pytest.mark.parametrize("raw", [b"", b"not json", b"[1]", b"{}", b'{"session_id": "s"}',
                                 b'{"session_id":"s","hook_event_name":"Stop"}',
                                 b"\xff\xfe", json.dumps({
                                     "session_id": "s", "hook_event_name": "PreToolUse",
                                     "tool_name": "Read", "tool_input": []}).encode()])
def test_malformed_input_is_denied_with_a_one_line_report(raw):
    reply, err = run_hook(raw)
    assert is_deny(reply)
    assert "Traceback" not in err and err.startswith("Error: forge PreToolUse hook")


def test_an_internal_error_is_a_deny(project, monkeypatch):
    from forge_runtime.guard import decide as decide_module

    def broken(*args, **kwargs):
        raise RuntimeError("boom")

    monkeypatch.setattr(decide_module, "_decide", broken)
    reply, _ = run_hook(json.dumps(event("Read", {"file_path": "a"}, project)).encode())
    assert is_deny(reply)
    assert "RuntimeError: boom" in reply["hookSpecificOutput"]["permissionDecisionReason"]


def test_the_launcher_denies_as_a_real_process(project):
    env = {**os.environ, "FORGE_PYTHON": sys.executable}
    stdin = json.dumps(event("Bash", {"command": "rm -rf .git/forge-goals"}, project))
    done = subprocess.run([str(LAUNCHER), "PreToolUse"], input=stdin, capture_output=True,
                          text=True, env=env, timeout=30)
    assert done.returncode == 0, done.stderr
    assert is_deny(json.loads(done.stdout))
    assert (project / ".git" / "forge-goals" / "n1").is_dir()


def heavy_imports(project, tool: str, tool_input: dict, heavy: set[str]) -> str:
    """The heavy modules a hook process imported while answering one tool call."""
    code = ("import sys, io, json\nfrom forge_runtime.hooks import dispatch\n"
            f"raw = json.dumps({event(tool, tool_input, project)!r}).encode()\n"
            "dispatch.run(['PreToolUse'], io.BytesIO(raw), io.StringIO(), io.StringIO())\n"
            f"print(sorted(set({sorted(heavy)!r}) & set(sys.modules)))")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env={**os.environ, "CLAUDE_PROJECT_DIR": str(project)}, timeout=30)
    assert done.returncode == 0, done.stderr
    return done.stdout.strip()


def test_an_unguarded_read_imports_nothing_heavy(project):
    heavy = {"yaml", "jsonschema", "filelock", "shlex", "glob", "dataclasses", "inspect"}
    assert heavy_imports(project, "Read", {"file_path": "a"}, heavy) == "[]"


def test_an_ordinary_bash_command_imports_nothing_heavy(project):
    """`dataclasses` pulls in `inspect`, about 5 ms on every Bash call of every session;
    `glob` is only needed for a word with a pattern."""
    heavy = {"yaml", "jsonschema", "filelock", "dataclasses", "inspect", "glob"}
    assert heavy_imports(project, "Bash", {"command": "git status && ls -la"}, heavy) == "[]"


@pytest.mark.parametrize("with_rules", [False, True])
@pytest.mark.parametrize("command, denied", [
    ("git status --short && grep -rn TODO . | head -20 > notes.txt", False),
    ("sh -c 'rm -rf \"$1\"' _ .git/forge-goals", True),
])
def test_the_shell_model_imports_neither_re_nor_shlex(project, command, denied, with_rules):
    """`re` alone costs more than half a bare interpreter start; the guard's own splitter and
    string scans leave it (and `shlex`, `enum`, `functools`, `collections`) out of every
    Bash call, also where a rule file names roles (read from its validated cache). Run
    without `site`, which would import some of them first."""
    if with_rules:
        (project / ".forge" / "guard.yaml").write_text(
            "roles:\n  auditor:\n    tools: [Read]\nprotected: [secrets]\n")
        rules.for_project(find_project(project))  # validated here, with jsonschema: cached
    repo = str(Path(__file__).resolve().parents[1])
    code = ("import sys, io\n"
            f"sys.path.insert(0, {repo!r})\n"
            "before = set(sys.modules)\n"
            "from forge_runtime.hooks import dispatch\n"
            "out = io.StringIO()\n"
            "dispatch.run(['PreToolUse'], sys.stdin.buffer, out, io.StringIO())\n"
            "print(sorted({'re', 'shlex', 'enum', 'functools', 'collections', 'unicodedata',"
            " '__future__', 'site'}"
            " & (set(sys.modules) - before)))\n"
            "print(out.getvalue())")
    stdin = json.dumps(event("Bash", {"command": command}, project))
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], input=stdin,
                          capture_output=True, text=True, timeout=30,
                          env={**os.environ, "CLAUDE_PROJECT_DIR": str(project)})
    assert done.returncode == 0, done.stderr
    imported, reply = done.stdout.split("\n", 1)
    assert imported == "[]"
    assert is_deny(json.loads(reply) if reply.strip() else None) is denied


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda children: st.lists(children, max_size=4) | st.dictionaries(st.text(max_size=8),
                                                                      children, max_size=4),
    max_leaves=12)
tool_names = st.sampled_from(["Bash", "Write", "Edit", "MultiEdit", "NotebookEdit", "Agent",
                              "mcp__files__write", "Task", "KillShell"]) | st.text(max_size=12)


@settings(max_examples=150, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(tool=tool_names, tool_input=st.dictionaries(st.text(max_size=10), json_values,
                                                   max_size=4),
       extra=st.dictionaries(st.sampled_from(["cwd", "agent_id", "permission_mode",
                                              "transcript_path", "tool_use_id"]),
                             json_values, max_size=3))
def test_a_guarded_role_never_gets_an_allow_for_a_tool_it_lacks(project, tool, tool_input,
                                                                  extra):
    modes.enter(paths.guard_dir(find_project(project)), "sess-in-mode", "clarifier")
    as_subagent = {"session_id": "sess-1", "agent_type": "forge:clarifier"}
    in_mode = {"session_id": "sess-in-mode"}
    for guarded in (as_subagent, in_mode):
        raw = {"hook_event_name": "PreToolUse", "tool_name": tool, "tool_input": tool_input,
               **extra, **guarded}
        reply, err = run_hook(json.dumps(raw).encode())
        assert "Traceback" not in err
        if not CLARIFIER.allows(tool):
            assert is_deny(reply), (tool, guarded, reply)


@settings(max_examples=150, deadline=None)
@given(raw=st.binary(max_size=200) | json_values.map(lambda v: json.dumps(v).encode()))
def test_random_input_never_crashes_and_never_allows_unread(raw):
    reply, err = run_hook(raw)
    assert "Traceback" not in err
    assert is_deny(reply)
