"""Many processes charging one goal at once: turns per second, and nothing lost.

Eight sessions are bound to one goal (as when a person runs the same `/goal` in eight
worktrees); each finishes a turn, and their eight Stop hooks start together through the
real launcher. Every round starts from the same ledger (a snapshot puts it back), so each
round must add exactly eight charges with eight distinct turns, and the whole chain must
still verify. Throughput is eight turns over the round's wall time, from the first spawn
to the last exit.
"""

from __future__ import annotations

import statistics
import subprocess
import time
from pathlib import Path

from bench.goal import build_goal
from bench.measure import run_once
from bench.scenarios import NotAvailable, require_module
from bench.suite import INVALID, MEASURED, NOT_AVAILABLE, Settings
from bench.workspace import Workspace

PROCESSES = 8
START_TURNS = 200


def _one_by_one(commands) -> float:
    """The same charges, each process after the other: what concurrency is compared with."""
    start = time.perf_counter()
    for command in commands:
        run_once(command)
    return time.perf_counter() - start


def _round(commands) -> tuple[float, list[int]]:
    """Start every command at once, wait for all; wall seconds and exit codes."""
    start = time.perf_counter()
    procs = [subprocess.Popen(list(c.argv), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE, env=c.env, cwd=c.cwd) for c in commands]
    for proc, command in zip(procs, commands, strict=True):
        proc.stdin.write(command.stdin)
        proc.stdin.close()
    codes = [proc.wait() for proc in procs]
    wall = time.perf_counter() - start
    for proc in procs:
        proc.stdout.close()
        proc.stderr.close()
    return wall, codes


def _charges_since(history: list[dict], turns_before: int) -> list[str]:
    return [record["turn"] for record in history
            if record["kind"] == "charge" and record["goal"]["turn_count"] > turns_before]


def measure(settings: Settings, base: Path, rounds: int) -> dict:
    try:
        require_module("forge_runtime.goal.events.stop", "the goal ledger's hook functions")
    except NotAvailable as exc:
        return {"status": NOT_AVAILABLE, "reason": str(exc), "processes": PROCESSES}
    from forge_runtime.errors import ForgeError
    from forge_runtime.goal.store.ledger import Ledger

    space = Workspace.create(settings.plugin_root, settings.python, base, "concurrency",
                             settings.fixtures)
    try:
        built = build_goal(space, START_TURNS, sessions=PROCESSES)
    except Exception as exc:  # forge changed under the bench: say so, keep the rest
        return {"status": INVALID, "processes": PROCESSES,
                "reason": f"could not prepare: {exc.__class__.__name__}: {exc}"}
    for number, host in enumerate(built.sessions, start=START_TURNS + 1):
        host.model_turn(number)
    commands = [space.hook(host.stop_event()) for host in built.sessions]
    snapshot = built.snapshot("concurrency")
    ledger = Ledger(space.project().ledger_root, built.nonce)
    walls, sequential, charged, duplicated, failures, broken = [], [], 0, 0, [], None
    for _ in range(rounds):
        snapshot.restore()
        sequential.append(_one_by_one(commands))
        snapshot.restore()
        wall, codes = _round(commands)
        walls.append(wall)
        failures += [code for code in codes if code]
        try:
            history = ledger.history()  # verifies the whole chain first
        except ForgeError as exc:
            broken = exc.message
            break
        turns = _charges_since(history, START_TURNS)
        charged += len(set(turns))
        duplicated += len(turns) - len(set(turns))
    expected = len(walls) * PROCESSES
    wall = statistics.median(walls)
    return {"status": MEASURED, "processes": PROCESSES, "rounds": len(walls),
            "start_turns": START_TURNS, "round_wall_ms": round(wall * 1000, 1),
            "one_by_one_ms": round(statistics.median(sequential) * 1000, 1),
            "turns_per_second": round(PROCESSES / wall, 1), "expected": expected,
            "charged": charged, "lost": expected - charged, "duplicated": duplicated,
            "failed_processes": len(failures), "chain_verified": broken is None,
            "chain_problem": broken}
