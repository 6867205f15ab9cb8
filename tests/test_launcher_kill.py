"""A Stop hook killed at someone else's hand ends a goal's autonomy and is told as what it is.

The real launcher (`hooks/forge-hook`) runs as the host runs it, with a FORGE_PYTHON stand-in
whose hook run dies of a signal. The host's own timeout signals the hook's whole process
group, launcher included (measured: see the launcher's comment), and that is tested too.
The real-host version: tests/host/test_goal_hook_deaths.py.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from goal_support import goal_project, goal_project_fixture, started_goal

from forge_runtime import hints
from forge_runtime.cli.main import main
from forge_runtime.goal.store import killed_stops, layout, state_file
from forge_runtime.goal.store.layout import session_marker
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.hint_audit import output_problems
from forge_runtime.hooks import session_start, stop, user_prompt_submit

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "hooks" / "forge-hook"
OBJECTIVE = "the parser passes its tests"

# The interpreter stand-in: the run named by $DIE ("hook", or "hook killed" for both runs)
# kills itself with $SIGNAL once it has read the event, as a killer would; the others are
# the real Python. Every command line is appended to $SEEN.
_STAND_IN = """#!/bin/sh
printf '%s|%s\\n' "$*" "${{FORGE_HOOK_EVENT:-}}" >> "$SEEN"
for run in $DIE; do
  case "$*" in *" $run"|*" $run "*) cat > /dev/null; kill -s "$SIGNAL" $$; sleep 5 ;; esac
done
exec {python} "$@"
"""


project = goal_project_fixture()


@pytest.fixture
def stand_in(tmp_path):
    path = tmp_path / "python"
    path.write_text(_STAND_IN.format(python=sys.executable))
    path.chmod(0o755)
    return path


def _launch(project, stand_in, session, *, die="hook", sig="KILL") -> subprocess.CompletedProcess:
    """The launcher's Stop for `session` (a goal_support Session, or a bare session id)."""
    session_id = getattr(session, "id", session)
    env = {**os.environ, "FORGE_PYTHON": str(stand_in), "CLAUDE_PROJECT_DIR": str(project.root),
           "CLAUDE_CODE_SESSION_ID": session_id, "DIE": die, "SIGNAL": sig,
           "SEEN": str(stand_in.parent / "seen")}
    stdin = session.event("Stop", stop_hook_active=True) if hasattr(session, "event") else {
        "session_id": session_id, "hook_event_name": "Stop", "cwd": str(project.root)}
    return subprocess.run([str(LAUNCHER), "Stop"], input=json.dumps(stdin).encode(), env=env,
                          cwd=project.root, capture_output=True, timeout=60)


def _stop_reason(done) -> str:
    """The text from the `Error:` line on of a reply that ends autonomy (a `Checkpoint:` line
    may lead)."""
    assert done.returncode == 0, done.stderr
    reply = json.loads(done.stdout)
    assert reply["continue"] is False
    text = reply["stopReason"]
    assert output_problems(text) == [], text
    return text[text.index("Error: "):]


@pytest.mark.parametrize("sig, number", [("KILL", 9), ("TERM", 15), ("INT", 2)])
def test_a_killed_stop_of_a_bound_session_ends_its_autonomy_and_is_recorded(
        project, stand_in, sig, number):
    session = started_goal(project, OBJECTIVE, 1)
    reason = _stop_reason(_launch(project, stand_in, session, sig=sig))
    first = reason.splitlines()[0]
    assert first.startswith("Error: FORGE_GOAL_HOOK_KILLED: forge's Stop hook was killed at ")
    assert f" by signal {number} (SIG{sig}), not by the host's timeout, so forge ends this " \
        "goal's autonomy" in first and "kernel layer" in first
    assert hints.split_rendered(reason)[1].text == "forge sandbox enable"
    [kill] = killed_stops.row(project.ledger_root)
    assert (kill["signal"], kill["session"]) == (number, session.id)


def test_a_killed_stop_of_a_session_without_a_goal_is_passed_on_and_records_nothing(
        project, stand_in):
    done = _launch(project, stand_in, "no-goal-session")
    assert (done.returncode, done.stdout) == (137, b"")
    assert not os.path.exists(os.path.join(project.ledger_root, layout.KILLED_STOPS))


def test_killed_stops_in_a_row_are_counted_until_one_runs_to_the_end(project, stand_in):
    session = started_goal(project, OBJECTIVE, 1)
    for _ in range(3):
        session.work()
        reason = _stop_reason(_launch(project, stand_in, session))
    assert reason.startswith("Error: FORGE_GOAL_HOOK_KILLED: 3 Stop hooks in a row were "
                             "killed by signal 9 (SIGKILL)")
    assert "something in this session is killing forge's hooks" in reason
    # the next person prompt charges the killed turns, late, and tells the person
    reply = user_prompt_submit.handle(session.event("UserPromptSubmit", prompt="go on"))
    assert reply["systemMessage"].startswith(
        "Error: FORGE_GOAL_HOOK_KILLED: 3 Stop hooks in a row were killed by signal 9")
    assert hints.split_rendered(reply["systemMessage"])[1].text == "forge sandbox enable"
    goal = state_file.read(project.state_path).goal
    charges = [r for r in Ledger(project.ledger_root, goal["nonce"]).history()
               if r["kind"] == "charge"]
    assert len(charges) == 4 and [r.get("late", False) for r in charges[1:]] == [True] * 3
    assert session_start.killed_stops_notice({"cwd": str(project.root)}) == {
        "systemMessage": reply["systemMessage"]}  # a new session is told too
    # a Stop that runs to the end breaks the row
    session.work()
    done = _launch(project, stand_in, session, die="none")
    assert done.returncode == 0, done.stderr
    assert killed_stops.row(project.ledger_root) == []
    assert session_start.killed_stops_notice({"cwd": str(project.root)}) is None
    session.work()
    reason = _stop_reason(_launch(project, stand_in, session))
    assert reason.startswith("Error: FORGE_GOAL_HOOK_KILLED: forge's Stop hook was killed")


def test_the_interpreter_is_not_told_the_event_on_its_command_line(project, stand_in):
    session = started_goal(project, OBJECTIVE, 1)
    _launch(project, stand_in, session)
    hook, killed = (stand_in.parent / "seen").read_text().splitlines()
    assert hook.endswith("entry.py hook|Stop") and "Stop" not in hook.split("|")[0]
    assert killed.endswith("entry.py killed 9|")  # no event named, in its arguments or env


def test_the_hosts_timeout_signals_the_launcher_too_so_it_never_counts_as_a_kill(
        project, tmp_path):
    """Claude Code ends a hook past its timeout with SIGTERM to the hook's process group
    (measured): the launcher dies with its interpreter and answers nothing."""
    session = started_goal(project, OBJECTIVE, 1)
    hang = tmp_path / "hanging-python"
    hang.write_text("#!/bin/sh\nexec sleep 30\n")
    hang.chmod(0o755)
    launcher = subprocess.Popen([str(LAUNCHER), "Stop"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, cwd=project.root, start_new_session=True,
                                env={**os.environ, "FORGE_PYTHON": str(hang),
                                     "CLAUDE_PROJECT_DIR": str(project.root),
                                     "CLAUDE_CODE_SESSION_ID": session.id})
    time.sleep(0.3)
    os.killpg(launcher.pid, signal.SIGTERM)
    out, _ = launcher.communicate(timeout=10)
    assert (launcher.returncode, out) == (-signal.SIGTERM, b"")
    assert killed_stops.row(project.ledger_root) == []


def test_when_the_second_run_dies_too_a_witnessed_session_still_stops(project, stand_in):
    session = started_goal(project, OBJECTIVE, 1)
    assert os.path.lexists(session_marker(session.id))
    reason = _stop_reason(_launch(project, stand_in, session, die="hook killed"))
    assert reason.startswith("Error: FORGE_GOAL_HOOK_KILLED: the Stop hook of forge was "
                             "killed by signal 9, not by the host timeout")
    assert hints.split_rendered(reason)[1].text == "forge sandbox enable"
    done = _launch(project, stand_in, "another-session", die="hook killed")
    assert (done.returncode, done.stdout) == (137, b"")


def test_a_killed_launcher_leaves_its_interpreter_answering_the_host(project, tmp_path):
    """The host reads a hook's answer from its stdout pipe after the hook's own process is
    gone (measured), and the interpreter holds that pipe: a killer that matches the event
    on the command line kills only the launcher."""
    slow = tmp_path / "slow-python"
    slow.write_text(f"#!/bin/sh\nsleep 0.5\nexec {sys.executable} \"$@\"\n")
    slow.chmod(0o755)
    stdin = {"session_id": "s1", "hook_event_name": "PreToolUse", "cwd": str(project.root),
             "tool_name": "Bash", "tool_input": {"command": "rm -rf .git/forge-goals"}}
    launcher = subprocess.Popen([str(LAUNCHER), "PreToolUse"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, cwd=project.root,
                                env={**os.environ, "FORGE_PYTHON": str(slow),
                                     "CLAUDE_PROJECT_DIR": str(project.root)})
    launcher.stdin.write(json.dumps(stdin).encode())
    launcher.stdin.close()
    time.sleep(0.1)
    launcher.kill()
    out = launcher.stdout.read()
    launcher.wait(timeout=10)
    reply = json.loads(out)["hookSpecificOutput"]
    assert launcher.returncode == -signal.SIGKILL
    assert reply["permissionDecision"] == "deny"
    assert "Bash deletes the goal ledger" in reply["permissionDecisionReason"]


def test_goal_status_tells_the_row_of_killed_stops_until_a_stop_runs(tmp_path, monkeypatch,
                                                                      capsys):
    project = goal_project(tmp_path, monkeypatch, cli=True)
    session = started_goal(project, OBJECTIVE, 2)
    for _ in range(3):
        killed_stops.add(project.ledger_root, session.id, 9)
    assert main(["goal", "status"]) == 2
    text = capsys.readouterr().out
    assert "killed      3 Stop hooks in a row were killed by signal 9 (SIGKILL), the last at " \
        in text
    assert output_problems(text) == [] and text.splitlines()[-1] == "Fix: forge sandbox enable"
    assert main(["goal", "status", "--json"]) == 2
    data = json.loads(capsys.readouterr().out)
    assert data["code"] == "FORGE_GOAL_HOOK_KILLED" and len(data["killed_stops"]) == 3
    assert stop.handle(session.event("Stop", stop_hook_active=True)) is None  # it ran
    assert main(["goal", "status"]) == 0
    assert "killed " not in capsys.readouterr().out


def test_a_stop_whose_launcher_is_killed_while_it_runs_charges_then_ends_autonomy(
        project, tmp_path):
    """The issue's killer matches the launcher's command line (`hook`, `Stop`), which no
    longer names the interpreter: the interpreter charges the turn, finds its launcher gone,
    and ends autonomy itself."""
    session = started_goal(project, OBJECTIVE, 1)
    session.work()
    slow = tmp_path / "slow-python"
    slow.write_text(f"#!/bin/sh\nsleep 0.4\nexec {sys.executable} \"$@\"\n")
    slow.chmod(0o755)
    launcher = subprocess.Popen([str(LAUNCHER), "Stop"], stdin=subprocess.PIPE,
                                stdout=subprocess.PIPE, cwd=project.root,
                                env={**os.environ, "FORGE_PYTHON": str(slow),
                                     "CLAUDE_PROJECT_DIR": str(project.root),
                                     "CLAUDE_CODE_SESSION_ID": session.id})
    launcher.stdin.write(json.dumps(session.event("Stop", stop_hook_active=True)).encode())
    launcher.stdin.close()
    time.sleep(0.1)
    launcher.kill()
    launcher.wait(timeout=10)  # reaped, as the host reaps its hooks
    reply = json.loads(launcher.stdout.read())
    assert reply["continue"] is False
    error = reply["stopReason"][reply["stopReason"].index("Error: "):]
    assert error.startswith("Error: FORGE_GOAL_HOOK_KILLED: forge's Stop hook was killed at ")
    assert " by a signal to its launcher (which forge cannot see), not by the host's timeout" \
        in error
    assert hints.split_rendered(error)[1].text == "forge sandbox enable"
    assert state_file.read(project.state_path).goal["turn_count"] == 2  # charged first
    [kill] = killed_stops.row(project.ledger_root)
    assert (kill["signal"], kill["session"]) == (None, session.id)


def test_a_wrapper_between_launcher_and_interpreter_is_no_killed_launcher(project, tmp_path):
    session = started_goal(project, OBJECTIVE, 1)
    session.work()
    wrapper = tmp_path / "wrapping-python"
    wrapper.write_text(f"#!/bin/sh\n{sys.executable} \"$@\"\n")  # a child, not an exec
    wrapper.chmod(0o755)
    done = subprocess.run([str(LAUNCHER), "Stop"], cwd=project.root, capture_output=True,
                          input=json.dumps(session.event("Stop", stop_hook_active=True)).encode(),
                          env={**os.environ, "FORGE_PYTHON": str(wrapper),
                               "CLAUDE_PROJECT_DIR": str(project.root)}, timeout=60)
    assert (done.returncode, done.stdout) == (0, b""), done.stderr
    assert state_file.read(project.state_path).goal["turn_count"] == 2
    assert killed_stops.row(project.ledger_root) == []
