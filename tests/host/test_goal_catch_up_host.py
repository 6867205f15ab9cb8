"""The count is exact across faults and sessions, in the real Claude Code: a turn a full disk
kept forge from charging is charged by the goal's next session or by the session's resume,
and a resume charges no turn nobody worked.

The project lies on a small tmpfs that the model's own Bash fills in the goal's third turn;
the test frees it, as the person would, and goes on.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

import pytest
from goal_support import goal_in_state, opt_out_of_sandbox
from session_support import NEVER_MET, model_turns, stop_reasons

from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.hostkit.projects import init_git_project
from forge_runtime.project import find_project

pytestmark = pytest.mark.host

OBJECTIVE = "the file never.txt exists"
NO_BLOCK_CAP = {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"}
FILL = "head -c 64000000 /dev/zero > fill.bin; echo filled"

# Two turns of work, then a turn whose Bash fills the disk, then work again.
FILLS_IN_THIRD_TURN = f"""
rules:
  - name: evaluator says not yet
    when: {{goal_evaluator: true}}
    reply: {{verdict: {{ok: false, reason: "GOAL-NOT-MET: keep working"}}}}
  - name: model works
    when: {{last_is_tool_result: true}}
    reply: {{text: "Working on it."}}
  - name: model works
    times: 2
    reply: {{text: "Working on it."}}
  - name: model fills the disk
    times: 1
    reply: {{tool_calls: [{{name: Bash, input: {{command: "{FILL}"}}}}]}}
  - name: model works
    reply: {{text: "Working on it."}}
"""


@pytest.fixture
def small_disk(tmp_path):
    """A 6 MB tmpfs holding the project (and with it the goal ledger in its .git)."""
    disk = tmp_path / "disk"
    disk.mkdir()
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=6m", "tmpfs", str(disk)], check=True)
    try:
        project = init_git_project(disk / "project")
        opt_out_of_sandbox(project)
        yield project
    finally:
        subprocess.run(["umount", "-l", str(disk)], check=False)


def _filled_in_third_turn(claude_host, project: Path):
    host = claude_host(FILLS_IN_THIRD_TURN)
    first = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=120, env=NO_BLOCK_CAP,
                     args=["--permission-mode", "acceptEdits", "--allowedTools", "Bash"])
    assert (project / "fill.bin").exists(), first.result
    reasons = stop_reasons(first)
    assert len(reasons) == 1 and "FORGE_GOAL_LEDGER_UNWRITABLE" in reasons[0], reasons
    assert "the disk is full" in reasons[0] and "a /goal of it in any session" in reasons[0]
    (project / "fill.bin").unlink()  # the person frees space
    return host, first


def _ledger_turns(project: Path) -> int:
    nonce = goal_in_state(project)["nonce"]
    return Ledger(find_project(project).ledger_root, nonce).verify()["turn_count"]


def test_a_new_sessions_goal_after_a_full_disk_ends_with_every_turn_worked_charged(
        claude_host, small_disk):
    _, first = _filled_in_third_turn(claude_host, small_disk)
    worked_first = model_turns(first)  # each turn closes with "Working on it."
    assert worked_first == 3 and _ledger_turns(small_disk) == 2

    second = claude_host(NEVER_MET).run(f"/goal {OBJECTIVE}", cwd=small_disk, timeout=120,
                                        env=NO_BLOCK_CAP)
    assert "20 of 20 turns" in stop_reasons(second)[-1]
    assert worked_first + model_turns(second) == 20 == _ledger_turns(small_disk)


def test_a_resume_after_a_full_disk_charges_exactly_the_turns_the_model_worked(
        claude_host, small_disk):
    host, first = _filled_in_third_turn(claude_host, small_disk)
    resumed = host.run("go on", cwd=small_disk, resume=first.session_id, timeout=120,
                       env=NO_BLOCK_CAP)
    assert "20 of 20 turns" in stop_reasons(resumed)[-1], resumed.result
    assert 3 + model_turns(resumed) == 20 == _ledger_turns(small_disk)


# The third Stop and the session's end hang past their timeouts (the host kills them, and
# goes on): forge's hooks there never run, as when a machine kills them while the session
# ends.
_HANGING_PYTHON = """#!/bin/sh
real="{real}"
case "$FORGE_HOOK_EVENT" in
  Stop) count=$(( $(cat "{counter}" 2>/dev/null || echo 0) + 1 )); echo "$count" > "{counter}"
        [ "$count" -eq 3 ] && sleep {hang} ;;
  SessionEnd) sleep {hang} ;;
esac
exec "$real" "$@"
"""
HOOK_TIMEOUT = 2  # seconds, for the test plugin's Stop and SessionEnd hooks

IMPOSSIBLE_AT_THIRD = """
rules:
  - name: evaluator says not yet
    when: {goal_evaluator: true}
    times: 2
    reply: {verdict: {ok: false, reason: "GOAL-NOT-MET: keep working"}}
  - name: evaluator finds it impossible
    when: {goal_evaluator: true}
    reply: {verdict: {ok: false, impossible: true, reason: "cannot be done here"}}
  - name: model works
    reply: {text: "Working on it."}
"""


def _short_timeouts(config: dict) -> None:
    for event in ("Stop", "SessionEnd"):
        for group in config["hooks"][event]:
            for hook in group["hooks"]:
                hook["timeout"] = HOOK_TIMEOUT


def test_a_turn_whose_stop_was_killed_as_its_session_ended_is_charged_by_the_next_session(
        claude_host, project, tmp_path):
    from session_support import plugin_with_hooks

    host = claude_host(IMPOSSIBLE_AT_THIRD,
                       plugin_dirs=[plugin_with_hooks(tmp_path, _short_timeouts)])
    wrapper = tmp_path / "hanging-python"
    wrapper.write_text(_HANGING_PYTHON.format(real=host.workdir / "forge-python",
                                              counter=tmp_path / "counter",
                                              hang=HOOK_TIMEOUT + 3))
    wrapper.chmod(0o755)
    first = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=120,
                     env={"FORGE_PYTHON": str(wrapper)})
    assert model_turns(first) == 3 and _ledger_turns(project) == 2  # the third never charged

    second = claude_host(NEVER_MET).run(f"/goal {OBJECTIVE}", cwd=project, timeout=120,
                                        env=NO_BLOCK_CAP)
    assert "20 of 20 turns" in stop_reasons(second)[-1]
    assert 3 + model_turns(second) == 20 == _ledger_turns(project)
