"""Many processes charging one goal at once: nothing lost, nothing counted twice."""

from __future__ import annotations

import multiprocessing

from goal_support import make_project

from forge_runtime.goal.rules import activation
from forge_runtime.goal.rules.charging import charge
from forge_runtime.goal.store import objective_index, state_file
from forge_runtime.goal.store.ledger import Ledger

WORKERS = 8


def _charge_turns(root: str, state_path: str, nonce: str, turns: list[str], barrier) -> None:
    from pathlib import Path

    barrier.wait()
    for turn in turns:
        charge(Ledger(Path(root), nonce), Path(state_path), [turn], "worker", turn)


def _run(project, nonce: str, turns_per_worker: list[list[str]]) -> None:
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(len(turns_per_worker))
    workers = [context.Process(target=_charge_turns, args=(
        str(project.ledger_root), str(project.state_path), nonce, turns, barrier))
        for turns in turns_per_worker]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
        assert worker.exitcode == 0


def test_distinct_turns_from_many_processes_are_all_counted_once(tmp_path):
    project = make_project(tmp_path)
    goal = activation.activate(project, "ship it").goal
    _run(project, goal["nonce"], [[f"w{w}-t{t}", f"shared-{t}"] for w in range(WORKERS)
                                  for t in (0,)])
    ledger = Ledger(project.ledger_root, goal["nonce"])
    final = ledger.verify()
    turns = [r["turn"] for r in ledger.history() if r["kind"] == "charge"]
    assert sorted(turns) == sorted({*(f"w{w}-t0" for w in range(WORKERS)), "shared-0"})
    assert final["turn_count"] == WORKERS + 1
    assert state_file.read(project.state_path).goal["turn_count"] == final["turn_count"]


def test_the_same_turn_from_many_processes_counts_once(tmp_path):
    project = make_project(tmp_path)
    goal = activation.activate(project, "ship it").goal
    _run(project, goal["nonce"], [["the-turn", "the-next-turn"]] * WORKERS)
    final = Ledger(project.ledger_root, goal["nonce"]).verify()
    assert final["turn_count"] == 2


def _activate(root: str, barrier, results) -> None:
    from forge_runtime.project import find_project

    barrier.wait()
    results.put(activation.activate(find_project(root), "one objective").goal["nonce"])


def test_many_processes_activating_one_new_objective_agree_on_one_goal(tmp_path):
    project = make_project(tmp_path)
    context = multiprocessing.get_context("fork")
    barrier, results = context.Barrier(WORKERS), context.Queue()
    workers = [context.Process(target=_activate, args=(str(project.root), barrier, results))
               for _ in range(WORKERS)]
    for worker in workers:
        worker.start()
    for worker in workers:
        worker.join(30)
        assert worker.exitcode == 0
    nonces = {results.get(timeout=5) for _ in workers}
    assert len(nonces) == 1
    goal = Ledger(project.ledger_root, nonces.pop()).verify()
    assert (goal["turn_count"], goal["activation_count"]) == (0, 1)


def test_a_first_activation_finishing_inside_anothers_lookup_is_joined_not_refused(tmp_path,
                                                                                    monkeypatch):
    """Process B looks for traces of the objective while process A creates its goal: B must
    end up on A's goal (or A on B's), never refuse A's fresh state.md as a lost goal."""
    import threading
    import time

    from forge_runtime.goal.store import ledger

    project = make_project(tmp_path)
    real_listing, other = ledger.goal_nonces, {}

    def other_process():
        other["goal"] = activation.activate(project, "one objective").goal

    def listing_while_another_activation_runs(seen_project):
        seen = real_listing(seen_project)
        monkeypatch.setattr(ledger, "goal_nonces", real_listing)
        other["thread"] = threading.Thread(target=other_process)
        other["thread"].start()
        time.sleep(0.3)  # unserialised, the other activation finishes in a few ms
        return seen

    monkeypatch.setattr(ledger, "goal_nonces", listing_while_another_activation_runs)
    mine = activation.activate(project, "one objective").goal
    other["thread"].join(10)
    assert mine["nonce"] == other["goal"]["nonce"]
    assert Ledger(project.ledger_root, mine["nonce"]).verify()["activation_count"] == 1


def test_reading_a_goal_while_other_processes_charge_it_never_reports_tampering(tmp_path):
    """`forge goal verify|status`, an activation's lookup and a Stop's status check all read
    a goal that other sessions may be charging at that moment."""
    from forge_runtime.errors import ForgeError
    from forge_runtime.goal.views import status

    project = make_project(tmp_path)
    goal = activation.activate(project, "ship it").goal
    context = multiprocessing.get_context("fork")
    barrier = context.Barrier(2)
    writers = [context.Process(target=_charge_turns, args=(
        str(project.ledger_root), str(project.state_path), goal["nonce"],
        [f"w{w}-t{t}" for t in range(9)], barrier)) for w in range(2)]
    for writer in writers:
        writer.start()
    refusals = []
    while any(writer.is_alive() for writer in writers):
        for read in (lambda: status.verify_all(project),
                     lambda: status.view(project, goal["nonce"]),
                     lambda: objective_index.find_nonce(project.ledger_root,
                                                        goal["objective_hash"])):
            try:
                read()
            except ForgeError as exc:
                refusals.append(exc.message)
    for writer in writers:
        writer.join(30)
        assert writer.exitcode == 0
    assert refusals == []
    assert Ledger(project.ledger_root, goal["nonce"]).verify()["turn_count"] == 18
