"""The goal witness: a ledger deleted, relocated, rolled back or replaced is caught at the next
Stop and at the next /goal, from its effects, whatever command did it (no guard involved)."""

from __future__ import annotations

import shutil

import pytest
from goal_support import (
    Session,
    goal_project_fixture,
    goal_projects,
    make_project,
    started_goal,
)

from forge_runtime.goal.store import sessions, state_file
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.goal.sync import witness
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
        assert find_project(project.root).ledger_root == project.ledger_root  # forge stays
    elif damage == "rolled back":
        _roll_back(project, tmp_path, backup)
    else:  # the same goal rebuilt from scratch with fewer turns: another chain, same nonce
        nonce = state_file.read(project.state_path).goal["nonce"]
        other = make_project(tmp_path / "forger")
        forger = Session(other)
        forger.person_goal(OBJECTIVE)
        forger.turn()
        forged = state_file.read(other.state_path).goal["nonce"]
        shutil.rmtree(project.ledger_root / nonce)
        shutil.copytree(other.ledger_root / forged, project.ledger_root / nonce)
    lines = _refusal(session.turn())
    assert lines[0].startswith("Error: FORGE_GOAL_LEDGER_TAMPERED: "), lines
    assert lines[1] == ("Fix: rm " + str(project.git_dir / "commondir")
                        if damage == "relocated" else "Fix: forge goal verify")
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


def test_a_repository_in_a_directory_named_worktrees_is_no_linked_work_tree(tmp_path):
    from forge_runtime.hostkit.projects import init_git_project

    root = init_git_project(tmp_path / "worktrees")
    project = find_project(root)
    assert project.ledger_root == root / ".git" / "forge-goals"
    from forge_runtime.digest import sha256_hex

    git_dir = str((root / ".git").resolve())  # its own key, not its parent directory's
    assert witness.repository_key(project) == sha256_hex(git_dir.encode())[:32]


def test_a_deleted_witness_is_adopted_and_a_session_without_a_goal_is_left_alone(project):
    session = _running(project)
    shutil.rmtree(witness.witness_root())
    assert session.turn() is None  # adopted: nothing says the ledger lost anything
    bystander = Session(project)
    bystander.prompt("what does this repo do?")
    assert bystander.turn() is None
    assert sessions.involvement(project.ledger_root, bystander.id) == set()
    goal = state_file.read(project.state_path).goal
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


# -- pointing forge elsewhere, from outside the agent, once the budget is spent ----------------

def _spent(project) -> None:
    """A person's goal that used its 20 turns; then the damage removes state.md too, so only
    the witness remembers the goal."""
    session = started_goal(project, OBJECTIVE, 19)
    assert "FORGE_GOAL_BUDGET_EXHAUSTED" in session.turn()["stopReason"]


def _next_goal(root) -> dict | None:
    """A new session's `/goal` of the same objective in the work tree at `root`, one turn."""
    fresh = Session(find_project(root))
    fresh.person_goal(OBJECTIVE)
    return fresh.turn()


def _git(*args) -> None:
    import subprocess

    subprocess.run(["git", *map(str, args)], check=True, capture_output=True)


def _linked(tmp_path):
    """A real repository and a linked work tree of it (`git worktree add`), both opted out
    of the sandbox as goal tests are: (main, linked)."""
    from forge_runtime.hostkit.projects import add_worktree, init_git_project

    main = init_git_project(tmp_path / "main")
    linked = add_worktree(main, tmp_path / "linked")
    goal_projects(main, linked)
    return main, linked


def _rewrite_commondir(git_dir, tmp_path) -> None:
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir(exist_ok=True)
    (git_dir / "commondir").write_text(f"{elsewhere}\n")


def _edit_dot_git_file(root, tmp_path) -> None:
    fake = tmp_path / "fake-gitdir"
    fake.mkdir()
    (root / ".git").write_text(f"gitdir: {fake}\n")


def _swap_dot_git_for_a_file(root, tmp_path) -> None:
    shutil.move(root / ".git", tmp_path / "hidden.git")
    _edit_dot_git_file(root, tmp_path)


DAMAGE = {
    "commondir rewritten": lambda main, linked, tmp: _rewrite_commondir(main / ".git", tmp),
    "a linked tree's commondir rewritten": lambda main, linked, tmp: _rewrite_commondir(
        find_project(linked).git_dir, tmp),
    "a linked tree's commondir removed": lambda main, linked, tmp: (
        find_project(linked).git_dir / "commondir").unlink(),
    "a linked tree's .git file edited": lambda main, linked, tmp: _edit_dot_git_file(
        linked, tmp),
    ".git swapped for a gitdir file": lambda main, linked, tmp: _swap_dot_git_for_a_file(
        main, tmp),
}


@pytest.mark.parametrize("damage", list(DAMAGE))
def test_pointing_forge_elsewhere_after_a_spent_budget_ends_the_next_goal(tmp_path, damage):
    main, linked = _linked(tmp_path)
    where = linked if "linked" in damage else main
    project = find_project(where)
    _spent(project)
    nonce = _only_goal(project)
    DAMAGE[damage](main, linked, tmp_path)
    project.state_path.unlink()
    lines = _refusal(_next_goal(where))
    assert lines[0].startswith("Error: FORGE_GOAL_LEDGER_TAMPERED: "), lines
    assert lines[1].startswith("Fix: "), lines
    ledger = tmp_path / "hidden.git" / "forge-goals" if "swapped" in damage else \
        project.ledger_root
    goal = Ledger(ledger, nonce).verified()
    assert (goal["turn_count"], goal["turn_ceiling"]) == (20, 20)  # no tranche granted


def _only_goal(project) -> str:
    (nonce,) = [entry.name for entry in project.ledger_root.iterdir()
                if entry.is_dir() and len(entry.name) == 32]
    return nonce


def test_a_non_git_project_made_a_git_one_does_not_reset_its_budget(tmp_path, monkeypatch):
    root = tmp_path / "plain"
    root.mkdir()
    (root / ".forge").mkdir()
    goal_projects(root)
    project = find_project(root)
    assert not project.is_git
    _spent(project)
    _git("init", "-q", root)  # the ledger under .forge/local/goals is not where git's is
    project.state_path.unlink()
    lines = _refusal(_next_goal(root))
    assert lines[0].startswith("Error: FORGE_GOAL_LEDGER_TAMPERED: "), lines
    assert lines[1] == "Fix: forge goal adopt", lines
    from forge_runtime.cli.main import main

    with monkeypatch.context() as person:  # who did set git up: the goals come along
        person.setenv("CLAUDE_PROJECT_DIR", str(root))
        person.chdir(root)
        assert main(["goal", "adopt"]) == 0
    assert _next_goal(root) is None
    now = find_project(root)
    goal = Ledger(now.ledger_root, _only_goal(now)).verified()
    assert (goal["turn_count"], goal["turn_ceiling"]) == (21, 40)


def test_git_dir_and_git_common_dir_in_the_hooks_environment_move_nothing(
        tmp_path, monkeypatch):
    main, _ = _linked(tmp_path)
    project = find_project(main)
    _spent(project)
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.setenv("GIT_DIR", str(elsewhere))
    monkeypatch.setenv("GIT_COMMON_DIR", str(elsewhere))
    project.state_path.unlink()
    assert find_project(main).ledger_root == project.ledger_root
    assert _next_goal(main) is None  # the same goal, one more tranche: its count kept
    goal = Ledger(project.ledger_root, _only_goal(project)).verified()
    assert (goal["turn_count"], goal["turn_ceiling"], goal["activation_count"]) == (21, 40, 2)


def test_a_real_linked_worktree_shares_the_ledger_and_a_fresh_clone_is_no_tamper(tmp_path):
    main, linked = _linked(tmp_path)
    started_goal(find_project(main), OBJECTIVE, 3)
    assert _next_goal(linked) is None  # the same goal, bound from the other work tree
    goal = Ledger(find_project(main).ledger_root, _only_goal(find_project(main))).verified()
    assert goal["turn_count"] == 4
    clone = tmp_path / "clone"
    _git("clone", "-q", main, clone)
    goal_projects(clone)
    assert _next_goal(clone) is None  # another repository: its own goal, from zero
    assert Ledger(find_project(clone).ledger_root,
                  _only_goal(find_project(clone))).verified()["turn_count"] == 1


@pytest.mark.parametrize("how", ["moved", "copied"])
def test_a_project_moved_or_copied_asks_the_person_to_adopt_its_ledger(tmp_path, how,
                                                                      monkeypatch, capsys):
    from forge_runtime.hostkit.projects import init_git_project

    old = init_git_project(tmp_path / "old")
    goal_projects(old)
    _spent(find_project(old))
    new = tmp_path / "new"
    if how == "moved":
        shutil.move(old, new)
    else:
        shutil.copytree(old, new, symlinks=True)
    lines = _refusal(_next_goal(new))
    assert lines[0].startswith("Error: FORGE_GOAL_LEDGER_MOVED: "), lines
    assert str(old / ".git" / "forge-goals") in lines[0], lines
    assert lines[1] == "Fix: forge goal adopt", lines
    from forge_runtime.cli.main import main

    with monkeypatch.context() as person:  # in a terminal in the new place
        person.setenv("CLAUDE_PROJECT_DIR", str(new))
        person.chdir(new)
        assert main(["goal", "adopt"]) == 0, capsys.readouterr()
    assert "1 goal(s) kept their counts here" in capsys.readouterr().out
    assert _next_goal(new) is None  # the count it carried: one more tranche, never zero
    goal = Ledger(find_project(new).ledger_root, _only_goal(find_project(new))).verified()
    assert (goal["turn_count"], goal["turn_ceiling"]) == (21, 40)
    if how == "copied":  # the original goes on as it was
        assert _next_goal(old) is None
        goal = Ledger(find_project(old).ledger_root, _only_goal(find_project(old))).verified()
        assert (goal["turn_count"], goal["turn_ceiling"]) == (21, 40)


def test_adopting_a_moved_ledger_never_accepts_one_rolled_back(tmp_path, monkeypatch, capsys):
    from forge_runtime.hostkit.projects import init_git_project

    old = init_git_project(tmp_path / "old")
    goal_projects(old)
    project = find_project(old)
    session = started_goal(project, OBJECTIVE, 1)
    backup = tmp_path / "backup"
    shutil.copytree(project.ledger_root, backup)
    session.turn()
    new = tmp_path / "new"
    shutil.move(old, new)
    ledger = new / ".git" / "forge-goals"
    shutil.rmtree(ledger)
    shutil.copytree(backup, ledger)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(new))
    monkeypatch.chdir(new)
    from forge_runtime.cli.main import main

    assert main(["goal", "adopt"]) == 2
    assert "FORGE_GOAL_LEDGER_TAMPERED" in capsys.readouterr().err


def test_vouching_for_the_ledger_imports_nothing_a_charging_stop_would_not(project):
    """Every charging Stop vouches: in a lean interpreter it brings neither `re` nor `shlex`
    (those only come with a refusal's Fix)."""
    import subprocess
    import sys
    from pathlib import Path

    _running(project, 1)
    code = ("import sys; sys.path.insert(0, sys.argv[1]);"
            "from forge_runtime.goal.sync.witness import Witness;"
            "from forge_runtime.project import locate_project;"
            "Witness(locate_project(sys.argv[2])).whereabouts.vouch();"
            "print(sorted({'re', 'shlex'} & set(sys.modules)))")
    repo = Path(__file__).resolve().parents[1]
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code, str(repo), str(project.root)],
                          capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]", done.stderr
