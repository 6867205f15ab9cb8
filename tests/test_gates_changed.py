"""A person's `/goal` whose final gates differ from those its objective last recorded shows
the difference (the prompt hook's message, `forge goal status`) before it records them."""

from __future__ import annotations

import json
import subprocess
import sys

from goal_support import Session, goal_of, goal_project_fixture
from test_gates import write

from forge_runtime import hints
from forge_runtime.gates import recorded

OBJECTIVE = "the parser passes its tests"
GATES = """\
gates:
  unit-tests:
    command: pytest -q
    boundary: ["src/**", "tests/**"]
"""

project = goal_project_fixture()


def _goal_with_gates(project) -> Session:
    write(project.root, ".forge/gates.yaml", GATES)
    session = Session(project)
    session.person_goal(OBJECTIVE)
    session.turn()
    return session


def _weaken(project) -> None:
    """What a script the guard cannot read does: the gate now checks nothing."""
    (project.root / ".forge" / "gates.yaml").write_text(
        GATES.replace("pytest -q", '"true"') + "  lint:\n    command: ruff check .\n"
        "    boundary: [\"**/*.py\"]\n")


def test_the_next_goal_shows_a_weakened_gate_before_it_records_it(project):
    _goal_with_gates(project)
    _weaken(project)
    reply = Session(project).person_goal(OBJECTIVE)
    text = reply["systemMessage"]
    assert "FORGE_GATES_CHANGED" in text and goal_of(project)["nonce"] in text
    assert "gate unit-tests changed: command `pytest -q` -> `true`" in text
    assert "gate lint added: runs `ruff check .`" in text
    assert [marker for marker, _ in hints.parse_lines(text)] == ["Next"]


def test_the_same_gates_say_nothing(project):
    _goal_with_gates(project)
    reply = Session(project).person_goal(OBJECTIVE)
    assert reply is None or "FORGE_GATES_CHANGED" not in reply["systemMessage"]


def test_a_first_goal_has_nothing_to_compare(project):
    write(project.root, ".forge/gates.yaml", GATES)
    reply = Session(project).person_goal(OBJECTIVE)
    assert reply is None or "FORGE_GATES_CHANGED" not in reply["systemMessage"]


def test_a_removed_gates_file_and_a_removed_gate_are_shown(project):
    _goal_with_gates(project)
    (project.root / ".forge" / "gates.yaml").unlink()
    reply = Session(project).person_goal(OBJECTIVE)
    assert "the gates file is gone" in reply["systemMessage"]
    before = recorded.of_goal(project, goal_of(project)["nonce"])
    assert recorded.changes(before, recorded.Recorded((), "x", None)) == \
        ["gate unit-tests removed (it ran `pytest -q`)"]


def test_goal_status_shows_the_difference(project):
    _goal_with_gates(project)
    _weaken(project)
    done = subprocess.run([sys.executable, "-m", "forge_runtime", "goal", "status", "--json"],
                          cwd=project.root, capture_output=True, text=True)
    data = json.loads(done.stdout)
    assert data["gates_changed"] == [
        "gate lint added: runs `ruff check .`",
        "gate unit-tests changed: command `pytest -q` -> `true`"]
    plain = subprocess.run([sys.executable, "-m", "forge_runtime", "goal", "status"],
                           cwd=project.root, capture_output=True, text=True).stdout
    assert "gates file  differs from what /goal last recorded: gate unit-tests changed" in plain
