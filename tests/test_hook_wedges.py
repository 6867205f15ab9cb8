"""forge's hooks answer before the host's timeout whatever the work tree holds, and never
write through a link.

Each attack is run for real: the agent's FIFO in place of `.forge/local/state.md`, the goal
ledger's lock held by another process, `.forge/local` swapped for a link out of the project.
Hooks run through the real launcher (`hooks/forge-hook`) as the host runs them, with a
subprocess timeout standing in for the host's, which a hook that blocked would run into.
The real-host version: tests/host/test_hook_wedges_host.py.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest
from goal_support import goal_of, goal_project_fixture, run_cli, started_goal

from forge_runtime.goal.store import sessions
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.hint_audit import output_problems

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "hooks" / "forge-hook"
OBJECTIVE = "the parser passes its tests"
HOST_TIMEOUT = 30  # seconds: Claude Code's for Stop and UserPromptSubmit (hooks/hooks.json)

project = goal_project_fixture()


def _launch(project, event: dict, name: str, **env) -> tuple[subprocess.CompletedProcess, float]:
    """forge's launcher for `event`, as the host runs it; its reply and how long it took."""
    started = time.monotonic()
    done = subprocess.run(
        [str(LAUNCHER), name], input=json.dumps(event).encode(), cwd=project.root,
        env={**os.environ, "FORGE_PYTHON": sys.executable, "CLAUDE_PROJECT_DIR":
             str(project.root), "CLAUDE_CODE_SESSION_ID": event["session_id"], **env},
        capture_output=True, timeout=HOST_TIMEOUT)
    return done, time.monotonic() - started


def _stop(project, session, **env) -> tuple[dict, float]:
    session.work()
    done, took = _launch(project, session.event("Stop", stop_hook_active=True), "Stop", **env)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout or b"null"), took


def _charged(project, session) -> int:
    nonce = sessions.read_binding(project.ledger_root, session.id)["nonce"]
    return Ledger(project.ledger_root, nonce).verify()["turn_count"]


def _ends_autonomy(reply: dict, code: str) -> list[str]:
    assert reply["continue"] is False
    text = reply["stopReason"]
    assert output_problems(text) == [], text
    lines = text.splitlines()
    assert any(line.startswith(f"Error: {code}: ") for line in lines), text
    return lines


def _swap_for_fifo(path: Path) -> None:
    """What the agent's script does (`os.mkfifo`), the guard never reading it."""
    path.unlink()
    os.mkfifo(path)


def test_a_fifo_for_state_md_ends_autonomy_at_once_and_its_turn_is_charged(project):
    session = started_goal(project, OBJECTIVE, 2)
    _swap_for_fifo(project.state_path)

    reply, took = _stop(project, session)

    assert took < 10, "the Stop waited on the agent's FIFO"
    lines = _ends_autonomy(reply, "FORGE_GOAL_LEDGER_TAMPERED")
    assert "is not a regular file" in reply["stopReason"]
    assert lines[0] == "Checkpoint: unknown (.forge/local/state.md cannot be read)"
    assert _charged(project, session) == 3  # the turn ran: charged, never free
    # the prompt hook's catch-up meets the same FIFO: it answers, and charges nothing twice
    done, took = _launch(project, session.event("UserPromptSubmit", prompt="go on"),
                         "UserPromptSubmit")
    assert done.returncode == 0 and took < 10
    assert _charged(project, session) == 3
    # the person's way out replaces the FIFO with forge's file, the agent's body gone with it
    from forge_runtime.goal.views import status

    status.sync(project, goal_nonce(project, session))
    assert goal_of(project)["turn_count"] == 3


def goal_nonce(project, session) -> str:
    return sessions.read_binding(project.ledger_root, session.id)["nonce"]


@pytest.mark.parametrize("what", ["fifo", "device", "directory"])
def test_no_hook_opens_a_state_md_that_is_not_a_regular_file(project, what):
    session = started_goal(project, OBJECTIVE, 1)
    project.state_path.unlink()
    if what == "fifo":
        os.mkfifo(project.state_path)
    elif what == "device":
        project.state_path.symlink_to("/dev/zero")  # a link: refused before it is followed
    else:
        project.state_path.mkdir()
    reply, took = _stop(project, session)
    assert took < 10
    _ends_autonomy(reply, "FORGE_GOAL_LEDGER_TAMPERED")
    assert _charged(project, session) == 2


class _HeldLock:
    """The goal ledger's lock, held by another process (the agent's `flock`, where the kernel
    layer is off, or a hook wedged on something)."""

    def __init__(self, project, session) -> None:
        path = os.path.join(project.ledger_root, goal_nonce(project, session), "lock")
        self.child = subprocess.Popen(
            [sys.executable, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], "
             "os.O_RDWR); fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); "
             "time.sleep(120)", path], stdout=subprocess.PIPE, text=True)
        assert self.child.stdout.readline() == "held\n"

    def release(self) -> None:
        self.child.kill()
        self.child.wait()


def test_a_held_ledger_lock_ends_autonomy_before_the_hosts_timeout_and_the_turn_is_caught_up(
        project):
    session = started_goal(project, OBJECTIVE, 2)
    holder = _HeldLock(project, session)
    try:
        reply, took = _stop(project, session)
    finally:
        holder.release()
    assert took < HOST_TIMEOUT - 5, "the host would have killed this Stop"
    lines = _ends_autonomy(reply, "FORGE_GOAL_WEDGED")
    assert lines[0].startswith("Checkpoint: ")
    assert "the goal ledger's lock" in reply["stopReason"]
    assert [line for line in lines if line.startswith("Fix: ")][0].startswith("Fix: fuser -v ")
    assert _charged(project, session) == 2
    # the lock let go: the session's next event charges the wedged turn, late, and records
    # the end forge owed the ledger; a continuation of the ended goal is stopped
    reply, _ = _stop(project, session)
    _ends_autonomy(reply, "FORGE_GOAL_UNBUDGETED")
    assert _charged(project, session) == 4
    assert _ended(project, session) == ("cancelled", "wedged")


def _ended(project, session) -> tuple[str, str | None]:
    nonce = sessions.read_binding(project.ledger_root, session.id)["nonce"]
    goal = Ledger(project.ledger_root, nonce).verify()
    return goal["status"], goal.get("ended")


def test_the_stop_watchdog_answers_with_the_checkpoint_when_the_work_does_not_return(project):
    session = started_goal(project, OBJECTIVE, 1)
    holder = _HeldLock(project, session)
    try:  # a watchdog shorter than the lock's deadline: the watchdog is what answers
        reply, took = _stop(project, session, FORGE_HOOK_WATCHDOG="1")
    finally:
        holder.release()
    assert took < 5
    lines = _ends_autonomy(reply, "FORGE_GOAL_WEDGED")
    assert lines[0].startswith("Checkpoint: ")
    assert "forge's Stop hook did not finish within 1 s" in reply["stopReason"]
    assert "Fix: forge goal status" in lines
    assert _ended(project, session) == ("active", None)  # the ledger could not be written
    session.prompt("what happened?")  # the person's next prompt records the end, then
    assert _ended(project, session) == ("cancelled", "wedged")
    assert _charged(project, session) == 2  # the wedged turn, charged late


def test_the_prompt_hook_watchdog_ends_a_goals_autonomy(project):
    session = started_goal(project, OBJECTIVE, 1)
    session.work()  # a turn whose Stop did not run: the prompt hook's catch-up charges it
    holder = _HeldLock(project, session)
    try:
        done, took = _launch(project, session.event("UserPromptSubmit", prompt="go on"),
                             "UserPromptSubmit", FORGE_HOOK_WATCHDOG="1")
    finally:
        holder.release()
    assert done.returncode == 0 and took < 5, done.stderr
    _ends_autonomy(json.loads(done.stdout), "FORGE_GOAL_WEDGED")


def test_session_end_answers_before_its_10_s_whatever_holds_the_lock(project):
    session = started_goal(project, OBJECTIVE, 1)
    session.work()
    holder = _HeldLock(project, session)
    try:
        done, took = _launch(project, session.event("SessionEnd", reason="other"),
                             "SessionEnd")
    finally:
        holder.release()
    assert done.returncode == 0 and took < 10, done.stderr
    assert b"wedged" in done.stderr


def test_a_watchdog_setting_can_only_shorten_it(project):
    session = started_goal(project, OBJECTIVE, 1)
    reply, took = _stop(project, session, FORGE_HOOK_WATCHDOG="100000")
    assert reply is None and _charged(project, session) == 2
    reply, took = _stop(project, session, FORGE_HOOK_WATCHDOG="0")
    assert reply is None and _charged(project, session) == 3


def test_forge_goal_status_never_hangs_on_a_held_lock(project, capsys, monkeypatch):
    from forge_runtime.goal.store import lock

    session = started_goal(project, OBJECTIVE, 1)
    monkeypatch.setattr(lock, "LOCK_SECONDS", 0.5)
    monkeypatch.chdir(project.root)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project.root))
    holder = _HeldLock(project, session)
    try:
        started = time.monotonic()
        code, out = run_cli(capsys, "goal", "status")
    finally:
        holder.release()
    assert time.monotonic() - started < 5
    assert code == 2, out
    assert "Error: FORGE_GOAL_WEDGED: the goal ledger's lock " in out
    assert "Fix: fuser -v " in out


# -- 32.6: no write through a link ----------------------------------------------------------

def test_a_linked_forge_local_is_refused_not_written_through(project, tmp_path):
    session = started_goal(project, OBJECTIVE, 1)
    outside = tmp_path / "outside"
    local = Path(project.state_path).parent
    local.rename(outside)  # the agent's script: the directory moved out, a link left behind
    local.symlink_to(outside)
    before = {path.name: path.read_bytes() for path in outside.iterdir()}

    reply, took = _stop(project, session)

    _ends_autonomy(reply, "FORGE_GOAL_LEDGER_TAMPERED")
    assert {path.name: path.read_bytes() for path in outside.iterdir()} == before
    assert _charged(project, session) == 2


def test_a_state_md_linked_out_of_the_project_is_replaced_by_sync_never_written_through(
        project, tmp_path):
    from forge_runtime.goal.store import state_file
    from forge_runtime.goal.views import status

    session = started_goal(project, OBJECTIVE, 1)
    target = tmp_path / "victim.md"
    target.write_bytes(project.state_path.read_bytes())
    project.state_path.unlink()
    project.state_path.symlink_to(target)
    victim = target.read_bytes()

    reply, _ = _stop(project, session)
    _ends_autonomy(reply, "FORGE_GOAL_LEDGER_TAMPERED")
    status.sync(project, goal_nonce(project, session))
    assert target.read_bytes() == victim
    assert not project.state_path.is_symlink()
    assert state_file.read(project.state_path).goal["turn_count"] == 2


FULL_BRIEF = ("## Goal\nExport CSV.\n## Acceptance criteria\n- report.csv exists\n"
              "## Boundaries\n- no PDF\n## Unknowns and assumptions\n- readers: finance\n")


def _clarifier_stop(project, answer: str = FULL_BRIEF) -> tuple[dict, float]:
    event = {"session_id": "s1", "hook_event_name": "SubagentStop", "cwd": str(project.root),
             "agent_type": "forge:clarifier", "last_assistant_message": answer}
    done, took = _launch(project, event, "SubagentStop")
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout), took


@pytest.mark.parametrize("linked", ["notes", "local"])
def test_a_linked_forge_folder_makes_the_clarifier_hook_refuse_not_write(project, tmp_path,
                                                                          linked):
    outside = tmp_path / "outside"
    outside.mkdir()
    folder = Path(project.root) / ".forge" / linked
    if folder.exists():
        folder.rename(tmp_path / "moved")
    folder.symlink_to(outside)

    reply, _ = _clarifier_stop(project)

    assert list(outside.iterdir()) == []
    text = reply["systemMessage"]
    assert output_problems(text) == [], text
    if linked == "notes":
        assert text.startswith("Error: forge's clarifier hook did not write ")
        assert ".forge/notes: is a link or not a directory; forge does not open it" in text
    else:  # the brief is frozen; the verdict for the main session is what is refused
        assert (Path(project.root) / ".forge" / "notes" / "brief.md").is_file()
        assert text.startswith("Error: forge's clarifier hook did not write ")
        assert ".forge/local: is a link or not a directory" in text


def test_a_fifo_for_the_frozen_brief_never_wedges_the_clarifier_hook(project):
    notes = Path(project.root) / ".forge" / "notes"
    notes.mkdir(parents=True, exist_ok=True)
    os.mkfifo(notes / "brief.md")
    reply, took = _clarifier_stop(project)
    assert took < 10
    assert reply["systemMessage"].startswith("Error: forge's clarifier hook did not write ")
    assert "is not a regular file" in reply["systemMessage"]
