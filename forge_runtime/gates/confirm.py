"""forge runs a goal's recorded final gates itself: the only run that verifies a goal.

Receipts (`forge gate run`) are written where the agent's tools write, by a process the agent
runs; sealed or not, they can only tell the model what to run next. What verifies a goal is
this: the gates its `/goal` recorded (recorded.py), run by forge from its own hook or a
person's `forge goal verify-gates`, confined as its recorded posture asks (confined.py), on the
tree as it is. The result is kept with the goal's gates record in the ledger
(`<ledger root>/gates/<nonce>.json`, `confirmed`; the output goes to
`<ledger root>/gate-runs/<nonce>/<gate>.log`): each gate's verdict with the boundary hash
it judged, under the recorded definitions' digest. A gate whose boundary did not change
since is not run again (the receipts' rule: a gate judges the files it covers), unless it did
not pass and a person asks (`verify-gates`); a hook never runs again what failed on the
same files.

A hook has a time limit, so a run from a hook gets a budget below it (goal.py): a gate that
does not finish within what is left is stopped and counts as not run. A later hook tries it
again only with more time than it had (the other gates reused), so a gate slower than any
hook's budget costs one attempt per tree, and the goal stays unverified until a person's
`forge goal verify-gates` (no budget but the gates' own timeouts).
"""

from __future__ import annotations

import time

from forge_runtime.gates import files, runner, status
from forge_runtime.gates.recorded import Recorded
from forge_runtime.goal.store import layout
from forge_runtime.goal.store.ledger import now

MIN_SLICE_SECONDS = 0.5
PASSED, NOT_RUN = "passed", "not run"
NOTHING_RAN = "nothing ran"  # the confinement of a run that could not start


def log_path(project, nonce: str, name: str) -> str:
    """Where forge's own run of gate `name` for goal `nonce` writes its output: beside the
    ledger, where the model may read it, never in the local area, where the agent could
    plant a symlink for forge's unsandboxed hook to write through."""
    return layout.gate_log(project.ledger_root, nonce, name)


def boundaries(project, nonce: str, recorded: Recorded) -> dict[str, str]:
    """Each recorded gate's boundary hash, through a stat cache of forge's own: the local
    area's is the agent's to write, and a planted entry would make a changed file read as
    the one forge's run judged. The ledger's directory is the agent's too where the posture
    is unsandboxed, so the witness vouches for this one (a cache it does not is not read)."""
    from forge_runtime.gates.witnessed import CacheWitness

    cache = layout.stat_cache_file(project.ledger_root, nonce)
    tree = status.Tree(project, list(recorded.gates), stat_cache=cache,
                       witness=CacheWitness(project, nonce))
    hashes = {gate.name: tree.boundary_of(gate)[0] for gate in recorded.gates}
    tree.save()
    return hashes


def confirm(project, nonce: str, recorded: Recorded, budget: float | None) -> dict:
    """forge's own run of the recorded gates on the tree as it is, written to the goal's
    gates record; returns it. `budget`: the seconds a hook may spend (None: a person's),
    hashing the boundaries included: a tree the agent made huge is the hook's time too."""
    started = time.monotonic()
    hashes = boundaries(project, nonce, recorded)
    if budget is not None:
        budget = max(0.0, budget - (time.monotonic() - started))
    before = files.read_record(project, nonce).get("confirmed")
    kept = before.get("results", {}) if isinstance(before, dict) and \
        before.get("digest") == recorded.digest and isinstance(before.get("results"), dict) \
        else {}
    confirmed = run(project, nonce, recorded, hashes, kept, budget)
    files.write_record(project, nonce, {**files.read_record(project, nonce),
                                        "confirmed": confirmed})
    return confirmed


def _reusable(kept: dict, boundary: str, left: float | None) -> bool:
    """Whether a gate's last verdict stands: it judged these very files, and it passed, or
    this is a hook (`left` given) that has no more time than it had when it was cut off."""
    if not isinstance(kept, dict) or kept.get("boundary") != boundary:
        return False
    if kept.get("verdict") == PASSED:
        return True
    if left is None:
        return False
    return kept.get("verdict") != NOT_RUN or left <= kept.get("duration_s", 0) + MIN_SLICE_SECONDS


def run(project, nonce: str, recorded: Recorded, hashes: dict[str, str], kept: dict,
        budget: float | None) -> dict:
    """Run every recorded gate whose verdict does not stand (`kept`), confined as the
    goal's recorded posture asks, within `budget` seconds."""
    started = time.monotonic()
    if recorded.problem is not None:
        return _result(recorded, {}, NOTHING_RAN, recorded.problem)
    from forge_runtime.gates import confined  # a Stop that only reads a verdict never runs

    results = {}
    confinement, known_to_start = None, False
    try:
        for gate in recorded.gates:
            left = None if budget is None else budget - (time.monotonic() - started)
            if _reusable(kept.get(gate.name), hashes[gate.name], left):
                results[gate.name] = kept[gate.name]
                continue
            if left is not None and left < MIN_SLICE_SECONDS:
                results[gate.name] = {"verdict": NOT_RUN, "boundary": hashes[gate.name],
                                      "duration_s": 0}
                continue
            if confinement is None:  # the posture is read only when something runs
                confinement = confined.for_goal(project, nonce)
                if confinement.problem is not None:
                    return _result(recorded, {}, confinement.kind, confinement.problem)
            results[gate.name] = _run_one(project, nonce, gate, confinement, left,
                                          hashes[gate.name])
            if results[gate.name]["verdict"] == PASSED:
                known_to_start = True
            elif not known_to_start:  # the failure may be the confinement's, not the gate's
                known_to_start, problem = True, confinement.start_problem()
                if problem is not None:
                    return _result(recorded, {}, confinement.kind, problem)
    finally:
        if confinement is not None:
            confinement.clean_up()
    kinds = {r.get("confinement") for r in results.values()} - {None}
    return _result(recorded, results, confinement.kind if confinement else
                   ", ".join(sorted(kinds)) or NOTHING_RAN, None)


def _run_one(project, nonce: str, gate, confinement, left: float | None,
             boundary: str) -> dict:
    limits = [t for t in (gate.timeout, left) if t is not None]
    with confinement.launch(gate.command, gate.name) as launch:
        code, timed_out, seconds = runner.execute(
            project, gate, log_path(project, nonce, gate.name), launch.command,
            min(limits) if limits else None, lambda elapsed: None, env=launch.env,
            pass_fds=launch.pass_fds)
    cut_short = timed_out and left is not None and (gate.timeout is None or left < gate.timeout)
    verdict = NOT_RUN if cut_short else PASSED if code == 0 and not timed_out else \
        "timed out" if timed_out else f"failed (exit {code})"
    return {"verdict": verdict, "exit_code": code, "duration_s": seconds, "at": now(),
            "boundary": boundary, "confinement": confinement.kind}


def _result(recorded: Recorded, results: dict, confinement: str, problem: str | None) -> dict:
    complete = problem is None and all(r["verdict"] != NOT_RUN for r in results.values())
    passed = complete and all(r["verdict"] == PASSED for r in results.values())
    return {"digest": recorded.digest, "at": now(), "passed": passed, "complete": complete,
            "results": results, "confinement": confinement, "problem": problem}


def describe(confirmed: dict) -> str:
    """One line: what forge's own run found."""
    if confirmed.get("problem"):
        return f"forge could not run the recorded gates: {confirmed['problem']}"
    if confirmed.get("passed"):
        return "forge ran every recorded final gate itself: all passed"
    parts = [f"{name} {r['verdict']}" for name, r in confirmed.get("results", {}).items()
             if r.get("verdict") != PASSED]
    return "forge ran the recorded final gates itself: " + ", ".join(parts)


def not_passing(confirmed: dict) -> list[str]:
    return [name for name, r in confirmed.get("results", {}).items()
            if r.get("verdict") != PASSED]
