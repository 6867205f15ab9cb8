"""Crash safety: SIGKILL a charging process at random instants, hundreds of times.

The killed process charges turns in a loop and reports each finished charge on a pipe, so
after every kill the test knows which turn was in flight. The whole chain must verify, the
count must be the finished charges or those plus the one in flight (never anything else),
the state file must agree (it may lag by that one turn), and charging the in-flight turn
again must leave it counted exactly once.

A kill of a process loses nothing the kernel already has, whether or not it reached the
disk, so the ledger lives on a memory file system when there is one: fsync is free there
and hundreds of kills take a second or two instead of ten.
"""

from __future__ import annotations

import os
import random
import shutil
import signal
import tempfile
import time
from pathlib import Path

import pytest
from goal_support import make_project

from forge_runtime.goal.rules import activation, consistency
from forge_runtime.goal.rules.charging import charge
from forge_runtime.goal.store.ledger import Ledger

KILLS = 200
# A loaded machine can stretch a charge so that KILLS land on one side of its commit point
# only (27 in flight, none past the commit, once in a full CI run): kill on, up to this many
# times KILLS, until both sides are hit.
MORE_KILLS = 4
CHARGES_PER_PROCESS = 3


def _charging_process(ledger: Ledger, state_path, first_turn: int, report: int) -> None:
    try:
        for turn in range(first_turn, first_turn + CHARGES_PER_PROCESS):
            charge(ledger, state_path, [f"turn-{turn}"], "crash", f"turn-{turn}")
            os.write(report, b".")
    finally:
        os._exit(0)


@pytest.fixture
def fast_dir(tmp_path):
    shm = Path("/dev/shm")
    if not shm.is_dir() or not os.access(shm, os.W_OK):
        yield tmp_path
        return
    path = Path(tempfile.mkdtemp(prefix="forge-crash-", dir=shm))
    yield path
    shutil.rmtree(path, ignore_errors=True)


def _kill_window(project) -> float:
    """How long one process takes to start and finish its charges here (fastest of 3)."""
    times = []
    for run in range(3):
        goal = activation.activate(project, f"calibration {run}").goal
        ledger = Ledger(project.ledger_root, goal["nonce"])
        started = time.perf_counter()
        pid = os.fork()
        if pid == 0:
            _charging_process(ledger, project.state_path, 0, os.open(os.devnull, os.O_WRONLY))
        os.waitpid(pid, 0)
        times.append(time.perf_counter() - started)
    return min(times)


def test_a_charge_killed_at_any_instant_leaves_the_old_count_or_the_new(fast_dir):
    project = make_project(fast_dir)
    window = _kill_window(project)
    rng = random.Random(20261130)
    goal, in_flight_landed, in_flight_lost = None, 0, 0
    for attempt in range(KILLS * MORE_KILLS):
        if attempt >= KILLS and in_flight_landed and in_flight_lost:
            break  # both sides of the commit point were hit: enough
        if goal is None or goal["turn_count"] > 20 - CHARGES_PER_PROCESS - 1:
            goal = activation.activate(project, f"objective {attempt}").goal
        ledger = Ledger(project.ledger_root, goal["nonce"])
        before = goal["turn_count"]
        read_end, write_end = os.pipe()
        pid = os.fork()
        if pid == 0:
            os.close(read_end)
            _charging_process(ledger, project.state_path, before, write_end)
        os.close(write_end)
        time.sleep(rng.uniform(0, window))
        os.kill(pid, signal.SIGKILL)
        os.waitpid(pid, 0)
        finished = len(os.read(read_end, 64))
        os.close(read_end)

        goal = ledger.verify()
        assert goal["turn_count"] - before in (finished, finished + 1)
        consistency.check(project.state_path, ledger)
        if finished < CHARGES_PER_PROCESS:
            landed = goal["turn_count"] - before > finished
            in_flight_landed += landed
            in_flight_lost += not landed
            turn = f"turn-{before + finished}"
            goal = charge(ledger, project.state_path, [turn], "crash", turn).goal
            assert goal["turn_count"] == before + finished + 1
    # the kills really landed mid-charge, on both sides of the commit point
    assert in_flight_landed >= 1 and in_flight_lost >= 1, (in_flight_landed, in_flight_lost)
