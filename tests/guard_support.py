"""A forge project on disk for guard tests: git repo, ledger records, state.md, an event maker."""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest

STATE = ("---\ngoal:\n  nonce: n1\n  turn_count: 3\n  turn_ceiling: 20\n---\n"
         "## Checklist\n- [ ] read\n")
RECORD = '{"seq": 1, "goal": {"turn_count": 3}}\n'


def make_project(root: Path) -> Path:
    """A git project with a ledger record and a state file, as a running goal leaves them."""
    root.mkdir(parents=True, exist_ok=True)
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    records = root / ".git" / "forge-goals" / "n1" / "records"
    records.mkdir(parents=True)
    (records / "00000001.json").write_text(RECORD)
    local = root / ".forge" / "local"
    local.mkdir(parents=True)
    (local / "state.md").write_text(STATE)
    (local / ".gitignore").write_text("*\n")
    (root / "src").mkdir()
    (root / "src" / "app.py").write_text("print('hi')\n")
    return root


def guard_project_fixture():
    """A test module's `project` fixture (`project = guard_project_fixture()`): a git
    project as `make_project` leaves it, under the test's tmp_path."""
    @pytest.fixture
    def project(tmp_path) -> Path:
        """A guard test's project (guard_support.guard_project_fixture)."""
        return make_project(tmp_path / "proj")

    return project


def event(tool: str, tool_input: dict, cwd: Path, **extra) -> dict:
    return {"session_id": "sess-1", "hook_event_name": "PreToolUse", "tool_name": tool,
            "tool_input": tool_input, "cwd": str(cwd), "tool_use_id": "toolu_1", **extra}


def judged(refused: list[str], passed: list[str]) -> list:
    """The (command, refused) cases of one parametrized test of a guard's verdicts: each
    command of `refused` must be refused, each of `passed` let through (see
    `assert_verdict`); each case's id says which it must be."""
    return [*(pytest.param(command, True, id=f"refused:{command}") for command in refused),
            *(pytest.param(command, False, id=f"passes:{command}") for command in passed)]


def assert_verdict(finding, refused: bool) -> None:
    """A `judged` case's verdict: a finding when the command must be refused, none when it
    must pass."""
    if refused:
        assert finding is not None, "let through"
    else:
        assert finding is None, finding
