"""The goal witness: a ledger deleted, relocated, rolled back or replaced is caught at the next
Stop and at the next /goal, from its effects, whatever command did it (no guard involved)."""

from __future__ import annotations

import shutil

import pytest
from goal_support import Session, goal_project_fixture, make_project, started_goal

from forge_runtime.goal import sessions, state, witness
from forge_runtime.goal.ledger import Ledger
from forge_runtime.project import find_project

OBJECTIVE = "the parser passes its tests"


project = goal_project_fixture()


def _running(project, turns: int = 3) -> Session:
    return started_goal(project, OBJECTIVE, turns)


def _refusal(reply) -> list[str]:
    """The refusal's lines after the checkpoint line every tamper stop starts with."""
    assert reply is not None and reply["continue"] is False, reply
    lines = reply["stopReason"].splitlines()
    assert lines[0].startswith("Checkpoint: "), lines
    return lines[1:]


def _delete(project, tmp_path):
    shutil.rmtree(project.ledger_root)


def _relocate(project, tmp_path):
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    (project.git_dir / "commondir").write_text(str(elsewhere) + "\n")


def _roll_back(project, tmp_path, backup):
    shutil.rmtree(project.ledger_root)
    shutil.copytree(backup, project.ledger_root)


@pytest.mark.parametrize("damage", ["deleted", "relocated", "rolled back", "replaced"])
def test_a_lost_ledger_is_caught_at_the_next_stop_and_the_next_goal(project, tmp_path, damage,
                                                                    monkeypatch):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    session.turn()
    backup = tmp_path / "backup"
    shutil.copytree(project.ledger_root, backup)
    session.turn()
    session.turn()
    if damage == "deleted":
        _delete(project, tmp_path)
    elif damage == "relocated":
        _relocate(project, tmp_path)
        assert find_project(project.root).ledger_root != project.ledger_root
    elif damage == "rolled back":
        _roll_back(project, tmp_path, backup)
    else:  # the same goal rebuilt from scratch with fewer turns: another chain, same nonce
        nonce = state.read(project.state_path).goal["nonce"]
        other = make_project(tmp_path / "forger")
        forger = Session(other)
        forger.person_goal(OBJECTIVE)
        forger.turn()
        forged = state.read(other.state_path).goal["nonce"]
        shutil.rmtree(project.ledger_root / nonce)
        shutil.copytree(other.ledger_root / forged, project.ledger_root / nonce)
    lines = _refusal(session.turn())
    assert lines[0].startswith("Error: FORGE_GOAL_LEDGER_TAMPERED: "), lines
    assert lines[1] == "Fix: forge goal verify"
    fresh = Session(find_project(project.root))
    fresh.person_goal(OBJECTIVE)  # the next /goal must not start again from zero
    lines = _refusal(fresh.turn())
    assert lines[0].startswith("Error: FORGE_GOAL_LEDGER_TAMPERED: "), lines
    from forge_runtime.cli.main import main

    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project.root))
    assert main(["goal", "verify"]) == 2  # and the Fix says what is wrong, not "fine"


def test_the_witness_lives_outside_the_work_tree_keyed_by_the_git_dir_not_commondir(
        project, tmp_path):
    _running(project, 1)
    root = witness.witness_root()
    assert not str(root).startswith(str(project.root))
    key = witness.repository_key(project)
    (project.git_dir / "commondir").write_text(str(tmp_path) + "\n")
    assert witness.repository_key(find_project(project.root)) == key
    assert (root / key / "goals").is_dir()


def test_a_linked_worktree_shares_its_repositorys_witness(tmp_path):
    from forge_runtime.hostkit.projects import add_worktree, init_git_project

    main = init_git_project(tmp_path / "main")
    add_worktree(main, tmp_path / "other")
    assert witness.repository_key(find_project(main)) == \
        witness.repository_key(find_project(tmp_path / "other"))


def test_a_deleted_witness_is_adopted_and_a_session_without_a_goal_is_left_alone(project):
    session = _running(project)
    shutil.rmtree(witness.witness_root())
    assert session.turn() is None  # adopted: nothing says the ledger lost anything
    bystander = Session(project)
    bystander.prompt("what does this repo do?")
    assert bystander.turn() is None
    assert sessions.involvement(project.ledger_root, bystander.id) == set()
    goal = state.read(project.state_path).goal
    assert Ledger(project.ledger_root, goal["nonce"]).verified()["turn_count"] == 4


def test_the_witness_check_on_a_stop_reads_no_more_than_one_record(project, monkeypatch):
    """O(1): a Stop of a long goal reads the same few records whatever its length."""
    session = _running(project, 6)
    reads = []
    real = Ledger._record

    def counting(self, seq):
        reads.append(seq)
        return real(self, seq)

    monkeypatch.setattr(Ledger, "_record", counting)
    session.turn()
    short = len(reads)
    for _ in range(5):
        session.turn()
    reads.clear()
    session.turn()
    assert len(reads) == short


def test_the_guard_refuses_the_agents_tools_the_witness(project):
    from forge_runtime.guard import decide

    root = witness.witness_root()
    for tool, tool_input in [
            ("Bash", {"command": f"rm -rf {root}"}),
            ("Bash", {"command": f"echo {{}} > {root}/sessions/s.json"}),
            ("Write", {"file_path": str(root / "goals" / "x.json"), "content": "{}"})]:
        hint = decide.decide({"session_id": "s", "hook_event_name": "PreToolUse",
                              "cwd": str(project.root), "tool_name": tool,
                              "tool_input": tool_input})
        assert hint is not None and "forge's goal witness" in hint.render(), tool_input
