"""What a person's `/goal` does: a new objective, the same one again (bind, tranche,
reopen), a changed one."""

from __future__ import annotations

import pytest
from goal_support import make_project
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forge_runtime.errors import ForgeError
from forge_runtime.goal.rules import activation
from forge_runtime.goal.rules.charging import charge, end
from forge_runtime.goal.store import state_file
from forge_runtime.goal.store.layout import OBJECTIVES_DIR
from forge_runtime.goal.store.ledger import Ledger


def _spend(project, goal: dict, turns: int, tag: str = "") -> dict:
    ledger = Ledger(project.ledger_root, goal["nonce"])
    for turn in range(turns):
        name = f"{tag}{goal['turn_count']}-{turn}"
        goal = charge(ledger, project.state_path, [name], "s", name).goal
    return goal


def test_a_new_objective_starts_a_fresh_goal(tmp_path):
    project = make_project(tmp_path)
    started = activation.activate(project, "  ship   the parser ")
    goal = started.goal
    assert started.outcome == activation.NEW
    assert (goal["turn_count"], goal["activation_count"], goal["turn_ceiling"],
            goal["status"]) == (0, 1, 20, "active")
    assert goal["objective"] == "ship the parser" and len(goal["nonce"]) == 32
    assert state_file.read(project.state_path).goal == state_file.mirror(goal)


def test_the_same_objective_before_exhaustion_binds_and_changes_nothing(tmp_path):
    project = make_project(tmp_path)
    goal = _spend(project, activation.activate(project, "ship it").goal, 7)
    again = activation.activate(project, "ship   it")
    assert again.outcome == activation.BOUND
    assert {k: again.goal[k] for k in ("nonce", "turn_count", "turn_ceiling",
                                      "activation_count", "activation_id")} == \
        {k: goal[k] for k in ("nonce", "turn_count", "turn_ceiling", "activation_count",
                              "activation_id")}


def test_each_reinvocation_after_exhaustion_adds_exactly_one_tranche(tmp_path):
    project = make_project(tmp_path)
    goal = activation.activate(project, "ship it").goal
    ids = {goal["activation_id"]}
    for tranche in (1, 2, 3):
        goal = _spend(project, goal, 25, tag=f"t{tranche}-")  # 5 more Stops are refused
        assert (goal["turn_count"], goal["status"]) == (20 * tranche, "exhausted")
        again = activation.activate(project, "ship it")
        assert again.outcome == activation.TRANCHE_ADDED
        goal = again.goal
        assert goal["turn_ceiling"] == 20 * (tranche + 1)
        assert goal["activation_count"] == tranche + 1
        assert goal["turn_count"] == 20 * tranche  # never reset
        ids.add(goal["activation_id"])
    assert len(ids) == 4


def test_a_changed_objective_always_starts_from_zero(tmp_path):
    project = make_project(tmp_path)
    first = _spend(project, activation.activate(project, "ship it").goal, 20)
    other = activation.activate(project, "ship it now").goal
    assert other["nonce"] != first["nonce"] and other["turn_count"] == 0


@pytest.mark.parametrize("kind", ["cancel", "complete"])
def test_a_cleared_or_completed_goal_reopens_with_its_count(tmp_path, kind):
    project = make_project(tmp_path)
    goal = _spend(project, activation.activate(project, "ship it").goal, 9)
    end(Ledger(project.ledger_root, goal["nonce"]), project.state_path, kind, "s", "test")
    again = activation.activate(project, "ship it")
    assert again.outcome == activation.REOPENED
    assert (again.goal["turn_count"], again.goal["turn_ceiling"],
            again.goal["status"]) == (9, 20, "active")


def test_clearing_an_exhausted_goal_is_no_way_around_the_budget(tmp_path):
    project = make_project(tmp_path)
    goal = _spend(project, activation.activate(project, "ship it").goal, 20)
    end(Ledger(project.ledger_root, goal["nonce"]), project.state_path, "cancel", "s", "x")
    again = activation.activate(project, "ship it").goal
    assert (again["turn_count"], again["turn_ceiling"]) == (20, 40)


def test_activation_refuses_a_tampered_ledger(tmp_path):
    project = make_project(tmp_path)
    goal = _spend(project, activation.activate(project, "ship it").goal, 3)
    record = Ledger(project.ledger_root, goal["nonce"]).records_dir / "00000002.json"
    record.write_text(record.read_text().replace('"turn_count":1', '"turn_count":0'))
    with pytest.raises(ForgeError) as caught:
        activation.activate(project, "ship it")
    assert caught.value.code == "FORGE_GOAL_LEDGER_TAMPERED"


@settings(max_examples=15, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(st.sampled_from(["spend5", "spend20", "again", "clear", "met"]), max_size=12))
def test_any_sequence_never_loses_turns_or_grants_more_than_20_per_activation(tmp_path, steps):
    import uuid

    project = make_project(tmp_path / uuid.uuid4().hex)
    goal = activation.activate(project, "ship it").goal
    spent = 0
    for step in steps:
        before = goal["turn_count"]
        if step.startswith("spend"):
            goal = _spend(project, goal, int(step[5:]), tag=uuid.uuid4().hex)
            spent += goal["turn_count"] - before
        elif step == "again":
            goal = activation.activate(project, "ship it").goal
        else:
            goal = end(Ledger(project.ledger_root, goal["nonce"]), project.state_path,
                       "cancel" if step == "clear" else "complete", "s", step)
        assert goal["turn_count"] >= before
        assert goal["turn_count"] <= goal["turn_ceiling"] == 20 * goal["activation_count"]
    assert goal["turn_count"] == spent
    assert Ledger(project.ledger_root, goal["nonce"]).verify() == goal


def test_another_worktree_of_the_repository_shares_the_goal_and_its_count(tmp_path):
    from forge_runtime.hostkit.projects import add_worktree, init_git_project
    from forge_runtime.project import find_project

    main = init_git_project(tmp_path / "main")
    add_worktree(main, tmp_path / "other")
    here, there = find_project(main), find_project(tmp_path / "other")
    assert here.ledger_root == there.ledger_root and here.state_path != there.state_path
    goal = _spend(here, activation.activate(here, "ship it").goal, 20)
    moved = activation.activate(there, "ship it")
    assert moved.outcome == activation.TRANCHE_ADDED
    assert moved.goal["nonce"] == goal["nonce"]
    assert (moved.goal["turn_count"], moved.goal["turn_ceiling"]) == (20, 40)
    assert state_file.read(there.state_path).goal["turn_count"] == 20


def _forget(project, goal: dict, what: str) -> None:
    import shutil

    index = project.ledger_root / OBJECTIVES_DIR / goal["objective_hash"]
    index.unlink()
    if what == "goal directory too":
        shutil.rmtree(project.ledger_root / goal["nonce"])


@pytest.mark.parametrize("what", ["index only", "goal directory too"])
def test_deleting_an_objectives_traces_never_buys_a_fresh_budget(tmp_path, what):
    project = make_project(tmp_path)
    goal = _spend(project, activation.activate(project, "ship it").goal, 20)
    _forget(project, goal, what)
    with pytest.raises(ForgeError) as caught:
        activation.activate(project, "ship it")
    assert caught.value.code == "FORGE_GOAL_LEDGER_TAMPERED"


def test_an_objective_index_pointing_at_another_goal_is_refused(tmp_path):
    project = make_project(tmp_path)
    first = activation.activate(project, "ship it").goal
    second = activation.activate(project, "ship that").goal
    index = project.ledger_root / OBJECTIVES_DIR / first["objective_hash"]
    index.unlink()
    index.write_text(second["nonce"])
    with pytest.raises(ForgeError) as caught:
        activation.activate(project, "ship it")
    assert "another objective's" in caught.value.message


def test_a_first_activation_cut_short_before_its_index_is_adopted_not_refused(tmp_path):
    """A crash (the hook killed) between writing a new goal and publishing its index leaves
    a goal at turn 0 that nothing names: the person's next /goal must not be refused."""
    project = make_project(tmp_path)
    repository = activation.repository_id(project.ledger_root)
    orphan = Ledger(project.ledger_root, "a" * 32)
    orphan.create(activation._fresh_goal("a" * 32, "ship it", repository))
    started = activation.activate(project, "ship it")
    assert started.goal["nonce"] == "a" * 32
    assert (started.goal["turn_count"], started.goal["turn_ceiling"]) == (0, 20)
    assert activation.activate(project, "ship it").goal["nonce"] == "a" * 32


def test_activation_ids_are_random_version_4_uuids_in_their_text_form():
    import uuid

    from forge_runtime.goal.store.ledger import random_uuid

    made = {random_uuid() for _ in range(200)}
    assert len(made) == 200
    for text in made:
        parsed = uuid.UUID(text)
        assert str(parsed) == text and parsed.version == 4 and parsed.variant == uuid.RFC_4122
