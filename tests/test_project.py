"""Finding a project's root, git directories and ledger from anywhere inside it."""

from __future__ import annotations

import subprocess

from forge_runtime.hostkit.projects import add_worktree, init_git_project
from forge_runtime.project import find_project


def test_a_git_work_tree_is_found_from_a_subdirectory(tmp_path):
    subprocess.run(["git", "init", "-q", str(tmp_path)], check=True)
    (tmp_path / "src" / "deep").mkdir(parents=True)
    project = find_project(tmp_path / "src" / "deep")
    assert project.root == tmp_path.resolve()
    assert project.ledger_root == tmp_path.resolve() / ".git" / "forge-goals"


def test_linked_worktrees_share_one_ledger(tmp_path):
    main = init_git_project(tmp_path / "main")
    add_worktree(main, tmp_path / "other")
    other = find_project(tmp_path / "other")
    assert other.root == (tmp_path / "other").resolve()
    assert other.ledger_root == find_project(main).ledger_root


def test_outside_git_a_subdirectory_shares_the_projects_ledger(tmp_path):
    (tmp_path / ".forge").mkdir()
    (tmp_path / "docs").mkdir()
    project = find_project(tmp_path / "docs")
    assert project.root == tmp_path.resolve()
    assert project.ledger_root == tmp_path.resolve() / ".forge" / "local" / "goals"
    assert not project.is_git


def test_with_neither_git_nor_forge_the_start_is_the_root(tmp_path):
    assert find_project(tmp_path).root == tmp_path.resolve()


def test_a_project_of_strings_names_the_same_places_as_one_of_paths(tmp_path):
    """The hooks' goal path builds its Project of strings (no pathlib import); every
    property names the same file as find_project's, in the same kind as its root."""
    from pathlib import Path

    from forge_runtime.project import locate_project, paths_of

    (tmp_path / ".git").mkdir()
    light, full = locate_project(tmp_path), find_project(tmp_path)
    assert paths_of(light) == full
    for name in ("root", "git_dir", "git_common_dir", "forge_dir", "local_dir", "state_path",
                 "ledger_root"):
        assert isinstance(getattr(light, name), str)
        assert isinstance(getattr(full, name), Path)
        assert getattr(light, name) == str(getattr(full, name))
