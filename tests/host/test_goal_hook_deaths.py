"""A Stop hook that dies never gives a free turn, against the real Claude Code.

forge's hooks run through a FORGE_PYTHON wrapper that, on Stops drawn at random (seeded),
makes the hook hang past its timeout (the host kills it then, launcher and all: the host
goes on, since Stop hooks have no `onFailure`) or SIGKILLs its interpreter at a random
instant of its run. After the host's timeout the next Stop that runs charges every turn the
transcript shows, so the session still ends at its ceiling, give or take the one turn whose
Stop is the last to run. An interpreter killed by someone else ends the goal's autonomy at
that Stop (the launcher lives to see it).
"""

from __future__ import annotations

import json
import os
import random
import signal
from pathlib import Path

import pytest
from goal_support import goal_in_state
from session_support import NEVER_MET, model_turns, plugin_with_hooks

from forge_runtime.goal.store import killed_stops
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.project import find_project

pytestmark = pytest.mark.host

OBJECTIVE = "the file never.txt exists"
STOP_TIMEOUT = 2  # seconds: the test plugin's Stop hook timeout, so a hang costs little

# Each Stop of the session reads its line of the plan: `run`, `kill <seconds>` (SIGKILL after
# that long) or `hang` (sleep past the timeout before forge even starts).
_WRAPPER = """#!/bin/sh
real="{real}"
case "$FORGE_HOOK_EVENT" in Stop) ;; *) exec "$real" "$@" ;; esac
count=$(( $(cat "{counter}" 2>/dev/null || echo 0) + 1 ))
echo "$count" > "{counter}"
action=$(sed -n "${{count}}p" "{plan}")
case "$action" in
  hang) sleep {hang}; exec "$real" "$@" ;;
  kill*) exec 3<&0; "$real" "$@" 0<&3 & hook=$!; sleep "${{action#kill }}"; kill -9 "$hook";
         wait "$hook"; exit ;;  # 137 when the kill came before forge had answered
  *) exec "$real" "$@" ;;
esac
"""


def _short_stop_timeout(config: dict) -> None:
    for group in config["hooks"]["Stop"]:
        for hook in group["hooks"]:
            hook["timeout"] = STOP_TIMEOUT


def _hang_plan(seed: int, also: int) -> list[str]:
    """Hang 4 of the first 20 Stops past the timeout (Stop `also` among them)."""
    rng = random.Random(seed)
    hangs = {also, *rng.sample([stop for stop in range(1, 21) if stop != also], 3)}
    return ["hang" if stop in hangs else "run" for stop in range(1, 41)]


def _wrapped(claude_host, tmp_path, plan: list[str]):
    """A host whose forge hooks run through the planning wrapper (Stop timeout 2 s)."""
    host = claude_host(NEVER_MET, plugin_dirs=[plugin_with_hooks(tmp_path, _short_stop_timeout)])
    (tmp_path / "plan").write_text("\n".join(plan) + "\n")
    wrapper = tmp_path / "killing-python"
    wrapper.write_text(_WRAPPER.format(real=host.workdir / "forge-python",
                                       counter=tmp_path / "counter", plan=tmp_path / "plan",
                                       hang=STOP_TIMEOUT + 3))
    wrapper.chmod(0o755)
    return host, {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100", "FORGE_PYTHON": str(wrapper)}


def stop_replies(session) -> list[dict]:
    """What each Stop hook answered the host, as the host reports it (a killed interpreter's
    hook has no record of its own: its launcher answers)."""
    return [json.loads(event["stdout"]) for event in session.hook_events
            if event.get("subtype") == "hook_response" and event.get("hook_event") == "Stop"
            and (event.get("stdout") or "").strip()]


def _turns(session) -> list[str]:
    return [entry["uuid"] for entry in session.transcript() if entry.get("type") ==
            "assistant" and (entry.get("message") or {}).get("stop_reason") == "end_turn"]


@pytest.mark.parametrize("seed, also", [(20261201, 20), (4, 1)],
                         ids=["ceiling-stop-timed-out", "first-stop-timed-out"])
def test_stop_hooks_the_host_timed_out_on_random_turns_still_end_the_session_at_its_ceiling(
        claude_host, project, tmp_path, seed, also):
    plan = _hang_plan(seed, also)
    host, env = _wrapped(claude_host, tmp_path, plan)
    session = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=120, env=env)

    assert session.terminal_reason == "stop_hook_prevented", session.result
    stops = int((tmp_path / "counter").read_text())
    worked = model_turns(session)
    assert worked == stops  # one Stop per turn, whether or not forge's hook survived it
    assert worked in (20, 21), plan[:worked]
    # the session ended at the first Stop whose hook ran to the end: a hang never reaches
    # forge, and the host's timeout kills the launcher with it, so nothing answers for it
    ended = [reply for reply in stop_replies(session) if reply.get("continue") is False]
    assert len(ended) == 1 and plan[worked - 1] != "hang", plan[:worked]
    goal = goal_in_state(project)
    ledger = Ledger(find_project(project).ledger_root, goal["nonce"])
    assert ledger.verified()["turn_count"] == 20 and goal["status"] == "exhausted"
    records = ledger.history()
    turns = _turns(session)
    assert len(turns) == worked
    assert [record["turn"] for record in records if record["kind"] == "charge"] == turns[:20]
    # the turn past the ceiling is owed, unless its own entry had not landed in the transcript
    # when its Stop (the last to run) read it: the count is exact give or take that one turn
    assert records[-1]["kind"] == "exhaust"
    assert records[-1].get("owed", []) in (turns[20:], [])
    late = [record["turn"] for record in records if record.get("late")]
    hung = [turn for turn, action in zip(turns, plan[:worked], strict=True) if action == "hang"]
    assert set(hung) <= set(late)  # a hook that never ran charged nothing itself
    assert ended[0]["stopReason"].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: ")
    assert f"{len(late)} of this tranche's turns were charged late" in ended[0]["stopReason"]
    assert killed_stops.row(find_project(project).ledger_root) == []  # a timeout is no kill


@pytest.mark.parametrize("seed", [20261201, 4])
def test_a_stop_whose_interpreter_is_killed_ends_the_goals_autonomy_at_that_turn(
        claude_host, project, tmp_path, seed):
    rng = random.Random(seed)
    spared = rng.randrange(0, 6)  # Stops that run before the killing starts
    plan = ["run"] * spared + [f"kill {rng.uniform(0.0, 0.3):.3f}" for _ in range(40)]
    host, env = _wrapped(claude_host, tmp_path, plan)
    session = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=120, env=env)

    assert session.terminal_reason == "stop_hook_prevented", session.result
    worked = model_turns(session)
    assert spared < worked <= 20, plan[:worked]
    # every Stop before the last was charged and ended nothing (a stuck warning at the fifth
    # unchanged turn, or the notice before the tranche's last turn, at most); the last is the
    # launcher's answer for an interpreter killed before forge had answered
    replies = stop_replies(session)
    assert [reply.get("continue") for reply in replies] == [None] * (len(replies) - 1) + [
        False], replies
    assert all(reply["systemMessage"].startswith(("FORGE_GOAL_STUCK_WARNING",
                                                  "FORGE_GOAL_LAST_TURN"))
               for reply in replies[:-1])
    reason = replies[-1]["stopReason"]
    error = reason[reason.index("Error: "):].splitlines()
    assert error[0].startswith("Error: FORGE_GOAL_HOOK_KILLED: ") and "signal 9" in error[0]
    assert error[1] == "Fix: forge sandbox enable"
    [kill] = killed_stops.row(find_project(project).ledger_root)
    assert (kill["signal"], kill["session"]) == (9, session.session_id)
    # the killed turn is charged late by the session's end (or the next prompt)
    goal = goal_in_state(project)
    ledger = Ledger(find_project(project).ledger_root, goal["nonce"])
    charged = [record["turn"] for record in ledger.history() if record["kind"] == "charge"]
    assert charged == _turns(session)[:len(charged)] and len(charged) in (worked - 1, worked)


# The agent's own background killer, started by its Bash tool during the goal (guard-only
# posture: no sandbox). `launchers` is every process whose command line holds
# `hook` and `Stop`, which is forge's launcher and no longer its interpreter (the event is
# in its environment), which finds its launcher gone; `interpreters` is one that knows
# that: every Python whose parent's command line names the Stop hook, doing a hook's work.
# The host kit's PID namespace keeps the machine's /proc, so the killer looks only at
# processes of its own namespace working in its own directory (the project: a hook's
# working directory), and signals them by their pid there (NSpid): nothing outside this
# test. Bounded: it ends by itself after two minutes, and the test ends it at its end.
# `descendants` kills every Python the Stop launcher starts, its second run included.
KILLER = """\
import os, signal, time
match = {match!r}
here, mine = os.getcwd(), os.readlink("/proc/self/ns/pid")
os.makedirs("killer", exist_ok=True)
with open("killer/pid", "w") as out:
    out.write(os.readlink("/proc/self"))  # its pid as the machine's /proc (and the test) see it
def argv(pid):
    with open(f"/proc/{{pid}}/cmdline", "rb") as handle:
        return handle.read().split(b"\\0")
def ours(pid):
    if os.readlink(f"/proc/{{pid}}/ns/pid") != mine or os.readlink(f"/proc/{{pid}}/cwd") != here:
        return None
    with open(f"/proc/{{pid}}/status") as handle:
        return int([line for line in handle if line.startswith("NSpid:")][0].split()[-1])
def doomed(pid, words):
    if match == "launchers":
        return any(b"hook" in word for word in words) and any(b"Stop" in word for word in words)
    with open(f"/proc/{{pid}}/stat") as handle:
        parent = handle.read().rsplit(")", 1)[1].split()[1]
    return b"python" in words[0] and (match == "descendants" or b"hook" in words) and \\
        any(b"Stop" in word for word in argv(parent))
end = time.time() + 120
while time.time() < end:
    for name in os.listdir("/proc"):
        if not name.isdigit():
            continue
        try:
            words = argv(name)
            if doomed(name, words) and (pid := ours(name)) is not None:
                os.kill(pid, signal.SIGKILL)
                with open("killer/kills", "a") as log:
                    log.write(b" ".join(words).decode(errors="replace").strip() + "\\n")
        except (OSError, IndexError):
            continue
    time.sleep(0.003)
"""
START = "nohup python3 k.py > /dev/null 2>&1 & echo KILLER-STARTED"


def _killer_script(match: str) -> dict:
    return {"rules": [
        {"name": "evaluator says not yet", "when": {"goal_evaluator": True},
         "reply": {"verdict": {"ok": False, "reason": "GOAL-NOT-MET: keep working"}}},
        {"name": "model works", "when": {"last_tool_result_contains": "KILLER-STARTED"},
         "reply": {"text": "Working on it."}},
        {"name": "model starts the killer", "when": {"last_tool_result_contains": "k.py"},
         "reply": {"tool_calls": [{"name": "Bash", "input": {"command": START}}]}},
        {"name": "model writes the killer", "when": {"conversation_contains": "GOAL-NOT-MET",
                                                     "conversation_lacks": "KILLER-STARTED"},
         "reply": {"tool_calls": [{"name": "Write", "input": {
             "file_path": "{cwd}/k.py", "content": KILLER.format(match=match)}}]}},
        {"name": "model works", "reply": {"text": "Working on it."}},
    ]}


def _end_killer(project) -> None:
    """SIGKILL the killer if it still runs (its pid file, checked against its command line
    and working directory; the session's PID namespace usually took it down already)."""
    try:
        pid = int((project / "killer" / "pid").read_text())
        if b"k.py" in Path(f"/proc/{pid}/cmdline").read_bytes() and \
                Path(f"/proc/{pid}/cwd").resolve() == project.resolve():
            os.kill(pid, signal.SIGKILL)
    except (OSError, ValueError):
        pass


@pytest.mark.parametrize("match", ["launchers", "interpreters"])
def test_a_background_killer_started_by_the_agent_buys_no_turns_in_this_session_or_the_next(
        claude_host, project, match):
    (project / ".forge").mkdir(exist_ok=True)
    (project / ".forge" / "guard.yaml").write_text("goal: {require_sandbox: false}\n")
    host = claude_host(_killer_script(match))
    args = ["--permission-mode", "acceptEdits", "--allowedTools", "Bash"]
    env = {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"}
    try:
        first = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=120, args=args, env=env)
        _end_killer(project)
        second = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=120, args=args, env=env)
    finally:
        _end_killer(project)

    killed = (project / "killer" / "kills").read_text().splitlines()
    assert killed, "the killer killed nothing"
    ledger_root = find_project(project).ledger_root
    goal = goal_in_state(project)
    records = Ledger(ledger_root, goal["nonce"]).history()
    charged = [record["turn"] for record in records if record["kind"] == "charge"]
    owed = records[-1].get("owed", []) if records[-1]["kind"] == "exhaust" else []
    worked = _turns(first) + _turns(second)
    for session in (first, second):
        assert session.terminal_reason == "stop_hook_prevented", session.result
        assert "KILLER-STARTED" in json.dumps(session.model_requests()[-1])  # it ran here
    # nothing was free: every turn worked is charged, in order, or owed to the next tranche,
    # give or take the last one (its entry may land after the session's last hook read)
    assert charged == worked[:len(charged)] and owed == worked[len(charged):][:len(owed)]
    assert len(worked) - len(charged) - len(owed) <= 1, (len(worked), len(charged), owed)
    if match == "launchers":  # the interpreters answer through the pipe they hold
        assert all(line.endswith("forge-hook Stop") for line in killed), killed
        how = "a signal to its launcher (which forge cannot see)"
    else:
        assert all(line.endswith("entry.py hook") for line in killed), killed
        how = "signal 9 (SIGKILL)"
    # each session ends at the first Stop the killer reached: turn 2 (the one that started
    # it), or a few later when it missed some (a launcher killed before it started its
    # interpreter gives no sign: the next Stop charges that turn late)
    assert len(_turns(first)) < 20 and len(_turns(second)) < 20
    first_reason, second_reason = (stop_replies(session)[-1]["stopReason"]
                                   for session in (first, second))
    assert "\nError: FORGE_GOAL_HOOK_KILLED: " in first_reason
    assert first_reason.splitlines()[-1] == "Fix: forge sandbox enable"
    # the row of killed Stops outlives the session: the next one is told at its start
    start = [event for event in second.hook_events if event.get("subtype") == "hook_response"
             and event.get("hook_event") == "SessionStart"]
    told = json.loads(start[0]["stdout"])["systemMessage"]
    assert told.startswith("Error: FORGE_GOAL_HOOK_KILLED: forge's Stop hook was killed at ")
    assert f" by {how}, not by the host's timeout: something in this session" in told
    assert told.splitlines()[-1] == "Fix: forge sandbox enable"
    # and the second session's own killed Stop counts its row (broken by a Stop of its own
    # that ran to the end, such as its first)
    row = killed_stops.row(ledger_root)
    assert row and {kill["signal"] for kill in row} == {None if match == "launchers" else 9}
    assert row[-1]["session"] == second.session_id
    assert (f"{len(row)} Stop hooks in a row were killed by {how}" if len(row) > 1
            else f" by {how}, not by the host's timeout") in second_reason


def test_a_killer_of_every_python_under_the_stop_launcher_still_meets_a_launcher_that_stops(
        claude_host, project):
    """The launcher's second run dies too: the launcher itself answers, from the goal
    witness's marker of a bound session (a file test, no interpreter)."""
    (project / ".forge").mkdir(exist_ok=True)
    (project / ".forge" / "guard.yaml").write_text("goal: {require_sandbox: false}\n")
    host = claude_host(_killer_script("descendants"))
    try:
        session = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=120,
                           args=["--permission-mode", "acceptEdits", "--allowedTools", "Bash"],
                           env={"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"})
    finally:
        _end_killer(project)

    killed = (project / "killer" / "kills").read_text().splitlines()
    assert any(line.endswith("entry.py killed 9") for line in killed), killed
    assert session.terminal_reason == "stop_hook_prevented", session.result
    assert len(_turns(session)) < 20
    reason = stop_replies(session)[-1]["stopReason"]
    assert reason.splitlines() == [
        "Error: FORGE_GOAL_HOOK_KILLED: the Stop hook of forge was killed by signal 9, not by "
        "the host timeout, so forge ends the autonomy of this goal", "Fix: forge sandbox enable"]
