"""forge runs a goal's recorded final gates itself: the only run that verifies a goal.

Receipts (`forge gate run`) are written where the agent's tools write, by a process the agent
runs; sealed or not, they can only tell the model what to run next. What verifies a goal is
this: the gates its `/goal` recorded (recorded.py), run by forge from its own hook or a
person's `forge goal verify-gates`, confined as the agent's Bash is (confined.py), on the
tree as it is. The result is kept with the goal's gates record in the ledger
(`<ledger root>/gates/<nonce>.json`, `confirmed`), keyed by the recorded definitions and each
gate's boundary hash: while neither changes, the next look reuses it instead of running
again.

A hook has a time limit, so a run from a hook gets a budget below it (goal.py): a gate that does not
finish within what is left is stopped and counts as not run, and the goal stays unverified
until a person's `forge goal verify-gates` (no budget but the gates' own timeouts).
"""

from __future__ import annotations

import os
import time

from forge_runtime.gates import confined, runner, status
from forge_runtime.gates.recorded import Recorded
from forge_runtime.goal.ledger import now

MIN_SLICE_SECONDS = 0.5
NOT_RUN = "not run"
NOTHING_RAN = "nothing ran"  # the confinement of a run that could not start

def log_path(project, nonce: str, name: str) -> str:
    """Where forge's own run of gate `name` for goal `nonce` writes its output."""
    return os.path.join(project.ledger_root, "gates", f"{nonce}.{name}.log")


def boundaries(project, nonce: str, recorded: Recorded) -> dict[str, str]:
    """Each recorded gate's boundary hash, through a stat cache of forge's own: the local
    area's is the agent's to write, and a planted entry would make a changed file read as
    the one forge's run judged."""
    cache = os.path.join(project.ledger_root, "gates", f"{nonce}.stat-cache.json")
    tree = status.Tree(project, list(recorded.gates), stat_cache=cache)
    hashes = {gate.name: tree.boundary_of(gate)[0] for gate in recorded.gates}
    tree.save()
    return hashes


def current(confirmed, recorded: Recorded, hashes: dict[str, str]) -> bool:
    """True when `confirmed` speaks for these definitions and this tree."""
    return isinstance(confirmed, dict) and confirmed.get("digest") == recorded.digest \
        and confirmed.get("boundaries") == hashes


def confirm(project, nonce: str, recorded: Recorded, budget: float | None) -> dict:
    """forge's own run of the recorded gates on the tree as it is, written to the goal's
    gates record; returns it. A run that speaks for these definitions and this tree is
    reused: a passing one always, a failing one by a hook (`budget` given)."""
    from forge_runtime.gates import goal

    hashes = boundaries(project, nonce, recorded)
    before = goal.read_record(project, nonce).get("confirmed")
    # a hook does not run again what failed on this very tree; a person's verify-gates does
    if current(before, recorded, hashes) and before.get("complete") and \
            (before.get("passed") or budget is not None):
        return before
    confirmed = run(project, nonce, recorded, budget)
    confirmed.update(digest=recorded.digest, boundaries=hashes)
    goal.write_record(project, nonce, {**goal.read_record(project, nonce),
                                       "confirmed": confirmed})
    return confirmed


def run(project, nonce: str, recorded: Recorded, budget: float | None) -> dict:
    """Run every recorded gate, confined as the posture asks, within `budget` seconds."""
    started = time.monotonic()
    if recorded.problem is not None:
        return _result({}, True, NOTHING_RAN, recorded.problem)
    confinement = confined.for_project(project, confined.sandboxed_posture(project))
    if confinement.problem is not None:
        return _result({}, True, confinement.kind, confinement.problem)
    results = {}
    try:
        for gate in recorded.gates:
            left = None if budget is None else budget - (time.monotonic() - started)
            if left is not None and left < MIN_SLICE_SECONDS:
                results[gate.name] = {"verdict": NOT_RUN}
                continue
            limits = [t for t in (gate.timeout, left) if t is not None]
            code, timed_out, seconds = runner.execute(
                project, gate, log_path(project, nonce, gate.name),
                confinement.command(gate.command), min(limits) if limits else None,
                lambda elapsed: None)
            cut_short = timed_out and left is not None and \
                (gate.timeout is None or left < gate.timeout)
            results[gate.name] = {"verdict": NOT_RUN if cut_short else
                                  "passed" if code == 0 and not timed_out else
                                  "timed out" if timed_out else f"failed (exit {code})",
                                  "exit_code": code, "duration_s": seconds}
    finally:
        confinement.clean_up()
    complete = all(r["verdict"] != NOT_RUN for r in results.values())
    return _result(results, complete, confinement.kind, None)


def _result(results: dict, complete: bool, confinement: str, problem: str | None) -> dict:
    passed = problem is None and complete and \
        all(r["verdict"] == "passed" for r in results.values())
    return {"at": now(), "passed": passed, "complete": complete, "results": results,
            "confinement": confinement, "problem": problem}


def describe(confirmed: dict) -> str:
    """One line: what forge's own run found."""
    if confirmed.get("problem"):
        return f"forge could not run the recorded gates: {confirmed['problem']}"
    if confirmed.get("passed"):
        return "forge ran every recorded final gate itself: all passed"
    parts = [f"{name} {r['verdict']}" for name, r in confirmed.get("results", {}).items()
             if r.get("verdict") != "passed"]
    return "forge ran the recorded final gates itself: " + ", ".join(parts)


def not_passing(confirmed: dict) -> list[str]:
    return [name for name, r in confirmed.get("results", {}).items()
            if r.get("verdict") != "passed"]
