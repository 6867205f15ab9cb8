"""`forge guard roles|check` and `forge mode enter|exit|status` as a person runs them."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from guard_support import guard_project_fixture

project = guard_project_fixture()


def forge(project, *words):
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project), "NO_COLOR": "1"}
    env.pop("CLAUDE_CODE_SESSION_ID", None)
    return subprocess.run([sys.executable, "-m", "forge_runtime", *words], cwd=project,
                          env=env, capture_output=True, text=True, timeout=60)


def test_roles_lists_roles_protected_paths_and_modes(project):
    forge(project, "mode", "enter", "reviewer", "--session", "s-9")
    done = forge(project, "guard", "roles", "--json")
    payload = json.loads(done.stdout)
    assert {r["name"] for r in payload["roles"]} >= {"clarifier", "reviewer", "advisor"}
    labels = {p["label"] for p in payload["protected"]}
    assert {"the goal ledger", "the goal fields of state.md"} <= labels
    assert payload["modes"] == [{"session_id": "s-9", "role": "reviewer"}]
    assert payload["_next_action"] == "forge guard check --role clarifier --tool Write"


def test_check_answers_like_the_hook(project):
    denied = forge(project, "guard", "check", "--role", "clarifier", "--tool", "Write")
    assert denied.returncode == 2
    assert "Error: forge guard: the clarifier role may not use Write" in denied.stdout
    allowed = forge(project, "guard", "check", "--role", "clarifier", "--tool", "Read",
                    "--input", '{"file_path": "src/app.py"}')
    assert allowed.returncode == 0 and "Done." in allowed.stdout
    ledger = forge(project, "guard", "check", "--tool", "Bash", "--input",
                   '{"command": "rm -rf .git/forge-goals"}', "--json")
    assert ledger.returncode == 2
    assert json.loads(ledger.stdout)["decision"] == "deny"
    assert forge(project, "guard", "check", "--tool", "Write", "--agent-type",
                 "forge:advisor").returncode == 2


def test_check_refuses_bad_arguments_with_a_fix(project):
    bad_json = forge(project, "guard", "check", "--tool", "Bash", "--input", "{nope")
    assert bad_json.returncode == 1 and "Fix: forge guard check" in bad_json.stderr
    no_role = forge(project, "guard", "check", "--role", "nobody", "--tool", "Read")
    assert no_role.returncode == 1 and "Fix: forge guard roles" in no_role.stderr


def test_a_mode_is_entered_listed_and_left(project):
    entered = forge(project, "mode", "enter", "clarifier", "--session", "abc-1")
    assert entered.returncode == 0
    assert "Wait: the clarifier step is done" in entered.stdout
    assert "Or: forge mode exit --session abc-1" in entered.stdout
    check = forge(project, "guard", "check", "--tool", "Edit", "--session", "abc-1")
    assert check.returncode == 2 and "Fix: forge mode exit --session abc-1" in check.stdout
    status = forge(project, "mode", "status")
    assert "abc-1: clarifier" in status.stdout
    assert "Next: forge mode exit --session abc-1" in status.stdout
    left = forge(project, "mode", "exit", "--session", "abc-1")
    assert left.returncode == 0 and "Done." in left.stdout
    assert forge(project, "guard", "check", "--tool", "Edit", "--session", "abc-1",
                 "--input", '{"file_path": "x", "old_string": "", "new_string": "y"}'
                 ).returncode == 0


def test_entering_an_unknown_role_or_without_a_session_is_an_error(project):
    unknown = forge(project, "mode", "enter", "builder", "--session", "s")
    assert unknown.returncode == 1 and "no role named 'builder'" in unknown.stderr
    no_session = forge(project, "mode", "enter", "clarifier")
    assert no_session.returncode == 1 and "CLAUDE_CODE_SESSION_ID" in no_session.stderr


def test_a_session_in_a_mode_cannot_switch_itself_to_another_role(project):
    """Anyone may enter a mode, agents included; so entering must never loosen one."""
    (project / ".forge" / "guard.yaml").write_text(
        "roles:\n  tester: {tools: [Read, Bash]}\n")
    assert forge(project, "mode", "enter", "clarifier", "--session", "s-1").returncode == 0
    switched = forge(project, "mode", "enter", "tester", "--session", "s-1")
    assert switched.returncode == 2
    assert "already in the clarifier mode" in switched.stderr
    assert "Fix: forge mode exit --session s-1" in switched.stderr
    assert "s-1: clarifier" in forge(project, "mode", "status").stdout
    again = forge(project, "mode", "enter", "clarifier", "--session", "s-1")
    assert again.returncode == 0
