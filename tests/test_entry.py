"""The launchers run forge isolated and prove it ran; anything else fails closed.

The real-host version (a settings `env`, the host's own processes): tests/host/
test_hook_isolation.py. Here the launcher is run directly, as the host runs it.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forge_runtime import hints
from forge_runtime.entry import FOREIGN_RUNTIME
from forge_runtime.hint_audit import output_problems
from forge_runtime.launch import LAUNCHED_OK

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "hooks" / "forge-hook"
ENTRY = REPO / "forge_runtime" / "entry.py"


def launch(event: str, stdin: dict, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {**os.environ, "FORGE_PYTHON": sys.executable, "CLAUDE_PROJECT_DIR": str(cwd),
               **env}
    return subprocess.run([str(LAUNCHER), event], input=json.dumps(stdin).encode(),
                          env=environ, cwd=cwd, capture_output=True, timeout=60)


def pre_tool(cwd: Path, command: str = "ls") -> dict:
    return {"session_id": "s1", "hook_event_name": "PreToolUse", "cwd": str(cwd),
            "tool_name": "Bash", "tool_input": {"command": command}}


def test_planted_modules_and_python_variables_never_reach_the_hook(cli_project):
    for name in ("json.py", "forge_runtime/__init__.py", "forge_runtime/hooks/__init__.py",
                 "sitecustomize.py", "startup.py"):
        path = cli_project / name
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text("raise SystemExit('PLANTED CODE RAN')\n")
    done = launch("PreToolUse", pre_tool(cli_project, "rm -rf .git/forge-goals"), cli_project,
                  PYTHONPATH=str(cli_project), PYTHONSTARTUP=str(cli_project / "startup.py"),
                  PYTHONHOME=str(cli_project), PYTHONINSPECT="1")
    assert b"PLANTED" not in done.stdout + done.stderr
    assert done.returncode == 0
    reason = json.loads(done.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "Bash deletes the goal ledger" in reason, "the plugin's own guard answered"


@pytest.mark.parametrize("python", ["/bin/true", "/bin/false", "/no/such/python",
                                    '/tmp/a "quoted" path'])
def test_an_interpreter_that_does_not_run_forge_fails_closed(cli_project, python):
    replies = {}
    for event in ("PreToolUse", "Stop", "SessionStart"):
        done = launch(event, pre_tool(cli_project), cli_project, FORGE_PYTHON=python)
        assert done.returncode == 0
        replies[event] = json.loads(done.stdout)
    reason = replies["PreToolUse"]["hookSpecificOutput"]
    assert reason["permissionDecision"] == "deny"
    for text in (reason["permissionDecisionReason"], replies["Stop"]["stopReason"],
                 replies["SessionStart"]["systemMessage"]):
        assert output_problems(text) == [], text
        assert hints.split_rendered(text)[1].text == "forge doctor"
    assert replies["Stop"]["continue"] is False


def test_other_events_keep_the_interpreters_status(cli_project):
    done = launch("SessionEnd", {}, cli_project, FORGE_PYTHON="/bin/false")
    assert (done.returncode, done.stdout) == (1, b"")


def test_a_forge_that_ran_is_status_zero_for_the_host(cli_project):
    done = launch("PreToolUse", pre_tool(cli_project), cli_project)
    assert (done.returncode, done.stdout) == (0, b"")


def test_entry_refuses_a_forge_runtime_that_is_not_the_plugins_own(tmp_path):
    other = tmp_path / "other" / "forge_runtime"
    other.mkdir(parents=True)
    (other / "__init__.py").write_text("")
    code = ("import runpy, sys; sys.path.insert(0, sys.argv[1]); import forge_runtime; "
            "sys.argv = [sys.argv[2], 'hook', 'PreToolUse']; "
            "runpy.run_path(sys.argv[0], run_name='__main__')")
    done = subprocess.run([sys.executable, "-I", "-c", code, str(other.parent), str(ENTRY)],
                          input=b"{}", capture_output=True, timeout=60, cwd=tmp_path)
    assert done.returncode == FOREIGN_RUNTIME
    assert b"imports forge_runtime from" in done.stderr


def test_entry_reports_a_finished_hook_with_the_launch_status(cli_project):
    done = subprocess.run([sys.executable, "-I", str(ENTRY), "hook", "PreToolUse"],
                          input=json.dumps(pre_tool(cli_project)).encode(),
                          capture_output=True, timeout=60, cwd=cli_project)
    assert done.returncode == LAUNCHED_OK


def test_the_agents_forge_launcher_runs_the_plugins_cli_isolated(cli_project):
    (cli_project / "forge_runtime").mkdir()
    (cli_project / "forge_runtime" / "__init__.py").write_text("raise SystemExit('PLANTED')\n")
    done = subprocess.run([str(REPO / "cli" / "forge"), "--version"], cwd=cli_project,
                          env={**os.environ, "FORGE_PYTHON": sys.executable},
                          capture_output=True, text=True, timeout=60)
    assert done.returncode == 0 and done.stdout.startswith("forge "), done.stderr


def test_the_hook_launcher_starts_python_without_site(cli_project, tmp_path):
    """`site` is a quarter of a bare start and the guard's allow path needs nothing from it."""
    seen = tmp_path / "argv"
    wrapper = tmp_path / "python"
    wrapper.write_text(f'#!/bin/sh\nprintf "%s\\n" "$@" > {seen}\nexec {sys.executable} "$@"\n')
    wrapper.chmod(0o755)
    done = launch("PreToolUse", pre_tool(cli_project, "git status && ls"), cli_project,
                  FORGE_PYTHON=str(wrapper))
    assert (done.returncode, done.stdout) == (0, b""), done.stderr
    assert seen.read_text().split("\n")[:2] == ["-I", "-S"]
