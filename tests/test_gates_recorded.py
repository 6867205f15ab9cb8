"""A goal's final gates as its `/goal` recorded them: one field of the ledger record each
person's `/goal` writes, read from the gates file itself, and the only definitions the goal
is judged by."""

from __future__ import annotations

import json

import pytest
from goal_support import activate_with_gates, goal_project
from test_gates import write

from forge_runtime.errors import ForgeError
from forge_runtime.gates import config, recorded
from forge_runtime.goal.rules import activation, charging
from forge_runtime.goal.store.ledger import Ledger

OBJECTIVE = "the parser passes its tests"
GATES = """\
gates:
  unit-tests:
    command: pytest -q
    boundary: ["src/**", "tests/**"]
    timeout: 600
  lint:
    command: ruff check .
    boundary: ["**/*.py"]
"""


@pytest.fixture
def project(tmp_path, monkeypatch):
    project = goal_project(tmp_path, monkeypatch)
    write(project.root, ".forge/gates.yaml", GATES)
    return project


def records(project, nonce: str) -> list[dict]:
    return Ledger(project.ledger_root, nonce).history()


def test_the_activation_record_carries_the_gates_in_file_order(project):
    nonce = activate_with_gates(project, OBJECTIVE).goal["nonce"]
    first = records(project, nonce)[0]
    assert first["kind"] == "activate"
    field = first[recorded.FIELD]
    assert field["gates"] == [
        {"name": "unit-tests", "command": "pytest -q", "boundary": ["src/**", "tests/**"],
         "timeout": 600},
        {"name": "lint", "command": "ruff check .", "boundary": ["**/*.py"], "timeout": None}]
    assert len(field["digest"]) == 64 and "problem" not in field
    gates = recorded.of_goal(project, nonce)
    assert [g.name for g in gates.gates] == ["unit-tests", "lint"]
    assert [g.definition_digest for g in gates.gates] == \
        [g.definition_digest for g in config.load(project)]


def test_a_goal_is_judged_by_the_newest_record_a_persons_goal_wrote(project):
    nonce = activate_with_gates(project, OBJECTIVE).goal["nonce"]
    ledger = Ledger(project.ledger_root, nonce)
    charging.charge(ledger, project.state_path, ["turn-1"], "s", "turn-1")
    write(project.root, ".forge/gates.yaml", GATES.replace("pytest -q", "pytest -q -x"))
    assert recorded.of_goal(project, nonce).gates[0].command == "pytest -q"  # file changed
    assert activate_with_gates(project, OBJECTIVE).outcome == activation.BOUND
    charging.charge(ledger, project.state_path, ["turn-2"], "s", "turn-2")
    assert recorded.of_goal(project, nonce).gates[0].command == "pytest -q -x"
    charging.end(ledger, project.state_path, "complete", "s", "met")
    write(project.root, ".forge/gates.yaml", GATES.replace("ruff check .", "ruff check src"))
    assert recorded.of_goal(project, nonce).gates[1].command == "ruff check ."
    assert activate_with_gates(project, OBJECTIVE).outcome == activation.REOPENED
    assert recorded.of_goal(project, nonce).gates[1].command == "ruff check src"
    kinds = [r["kind"] for r in records(project, nonce) if recorded.FIELD in r]
    assert kinds == ["activate", "bind", "reopen"]


def test_a_new_tranche_records_the_gates_again(project):
    nonce = activate_with_gates(project, OBJECTIVE).goal["nonce"]
    ledger = Ledger(project.ledger_root, nonce)
    charging.charge(ledger, project.state_path, [f"t{i}" for i in range(20)], "s", "t19")
    write(project.root, ".forge/gates.yaml", GATES.replace("pytest -q", "pytest"))
    assert activate_with_gates(project, OBJECTIVE).outcome == activation.TRANCHE_ADDED
    assert recorded.of_goal(project, nonce).gates[0].command == "pytest"


def test_a_project_without_gates_records_none(project):
    (project.root / ".forge" / "gates.yaml").unlink()
    nonce = activate_with_gates(project, OBJECTIVE).goal["nonce"]
    assert recorded.FIELD not in records(project, nonce)[0]
    assert recorded.of_goal(project, nonce) is None


def test_a_broken_gates_file_is_recorded_as_the_problem_it_is(project):
    write(project.root, ".forge/gates.yaml", "gates: [\n")
    nonce = activate_with_gates(project, OBJECTIVE).goal["nonce"]
    gates = recorded.of_goal(project, nonce)
    assert gates.gates == () and gates.problem.startswith(config.INVALID)


def test_the_recorded_gates_are_sealed_by_the_ledgers_chain(project):
    nonce = activate_with_gates(project, OBJECTIVE).goal["nonce"]
    path = project.ledger_root / nonce / "records" / "00000001.json"
    record = json.loads(path.read_text())
    record[recorded.FIELD]["gates"][0]["command"] = "true"
    path.write_text(json.dumps(record))
    with pytest.raises(ForgeError) as refused:
        recorded.of_goal(project, nonce)
    assert refused.value.code == "FORGE_GOAL_LEDGER_TAMPERED"


def test_drift_names_the_gates_the_file_defines_otherwise_or_no_longer(project):
    nonce = activate_with_gates(project, OBJECTIVE).goal["nonce"]
    gates = recorded.of_goal(project, nonce)
    assert recorded.drift(gates, config.load(project)) == []
    write(project.root, ".forge/gates.yaml", GATES.split("  lint:")[0].replace(
        "timeout: 600", "timeout: 60"))
    assert recorded.drift(gates, config.load(project)) == ["unit-tests", "lint"]


def test_a_field_that_is_not_forges_records_a_problem():
    assert recorded.of_field({"gates": {"x": 1}}).problem is not None
    assert recorded.of_field(None).problem is not None
