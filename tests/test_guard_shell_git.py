"""git commands that write the work tree from history, judged by asking git (shell/git_tree.py).

Each project is a real repository whose history holds another version of a protected file;
the verdict must follow what git would do: refused when a protected file could change,
allowed when git's objects show it cannot, refused whenever git cannot answer.
"""

from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest
from guard_support import make_project

from forge_runtime.guard import shell
from forge_runtime.guard.shell import git_tree
from forge_runtime.project import find_project
from forge_runtime.protected import paths

ENV = {"GIT_AUTHOR_NAME": "t", "GIT_AUTHOR_EMAIL": "t@t", "GIT_COMMITTER_NAME": "t",
       "GIT_COMMITTER_EMAIL": "t@t"}


def git(root: Path, *args: str) -> None:
    subprocess.run(["git", "-C", str(root), *args], check=True, capture_output=True,
                   env={**os.environ, **ENV})


def verdict(root: Path, command: str):
    env = {"HOME": str(root.parent), "PATH": os.environ["PATH"]}
    return shell.analyse(command, str(root), env, paths.protected_paths(find_project(root)))


def repository(tmp_path: Path, *, rules_edited: bool, state_tracked: bool = False) -> Path:
    """A project whose HEAD~1 and branch `old` hold another rule file (and, when
    `state_tracked`, a committed state.md with no goal)."""
    root = make_project(tmp_path / "proj")
    rules = root / ".forge" / "guard.yaml"
    rules.write_text("roles: {}\n")
    git(root, "add", "src/app.py", ".forge/guard.yaml")
    git(root, "commit", "-qm", "first")
    rules.write_text("protected: [secrets/]\n")
    git(root, "commit", "-qam", "second")
    git(root, "branch", "old", "HEAD~1")
    if state_tracked:
        state = root / ".forge" / "local" / "state.md"
        text = state.read_text()
        state.write_text("---\ngoal: null\n---\n")
        git(root, "add", "-f", ".forge/local/state.md")
        git(root, "commit", "-qm", "state")
        state.write_text(text)
    if rules_edited:
        rules.write_text("protected: [secrets/, other/]\n")
    return root


@pytest.mark.parametrize("command", [
    "git stash", "git stash push -m wip", "git stash -u", "git checkout -- .",
    "git checkout -f", "git reset --hard", "git restore .forge", "git checkout old -- .forge",
    "git switch -f old", "git checkout -m old",
])
def test_a_local_change_to_the_rule_file_is_never_put_back(tmp_path, command):
    root = repository(tmp_path, rules_edited=True)
    assert verdict(root, command) is not None


@pytest.mark.parametrize("command", [
    "git stash", "git stash push -m wip", "git stash -u", "git reset --hard",
    "git checkout -q -b new && git checkout -q -", "git switch -c topic",
    "git merge --ff-only HEAD", "git checkout -- src/app.py", "git stash push -- src/",
    "git clean -fd", "git clean -n", "git clean -nfdx", "git checkout old -- src/app.py",
])
def test_what_cannot_change_a_protected_file_is_allowed(tmp_path, command):
    root = repository(tmp_path, rules_edited=False)
    (root / "src" / "app.py").write_text("print('changed')\n")
    assert verdict(root, command) is None


@pytest.mark.parametrize("command", [
    "git checkout old", "git switch old", "git merge old", "git rebase old",
    "git reset --keep old", "git revert --no-edit HEAD", "git cherry-pick HEAD",
    "git checkout -b x old", "git switch --detach HEAD~1", "git pull", "git pull . old",
    "git stash -a", "git clean -fdx", "git clean -fX", "git am ../x.patch",
])
def test_history_that_changes_a_protected_file_is_refused(tmp_path, command):
    root = repository(tmp_path, rules_edited=False)
    assert verdict(root, command) is not None


def test_a_stash_is_applied_only_when_it_leaves_protected_files_alone(tmp_path):
    root = repository(tmp_path, rules_edited=True)
    git(root, "stash", "push", "-q")  # the stash holds a change to the rule file
    assert verdict(root, "git stash pop") is not None
    assert verdict(root, "git stash apply stash@{0}") is not None
    (root / "src" / "app.py").write_text("print('wip')\n")
    git(root, "stash", "push", "-q", "--", "src/app.py")
    assert verdict(root, "git stash apply") is None
    assert verdict(root, "git stash apply 1") is not None


def test_a_tracked_state_md_is_not_restored_over_the_goal(tmp_path):
    root = repository(tmp_path, rules_edited=False, state_tracked=True)
    assert verdict(root, "git checkout -- .forge/local/state.md") is not None
    assert verdict(root, "git -C .forge/local restore state.md") is not None
    assert verdict(root, "git checkout HEAD -- src/app.py") is None


def test_git_clean_removes_an_untracked_rule_file(tmp_path):
    root = make_project(tmp_path / "proj")
    git(root, "add", "src/app.py")
    git(root, "commit", "-qm", "first")
    (root / ".forge" / "guard.yaml").write_text("roles: {}\n")
    for command in ("git clean -f", "git clean -fd", "git -C .forge clean -f",
                    "git stash -u"):
        assert verdict(root, command) is not None, command
    for command in ("git clean -n", "git clean -f src", "git stash"):
        assert verdict(root, command) is None, command


def test_what_git_says_holds_only_for_the_command_alone(tmp_path):
    root = repository(tmp_path, rules_edited=False)
    assert verdict(root, "git commit -qam x --allow-empty && git stash") is not None
    assert verdict(root, "git stash; git reset -q --soft HEAD~1") is not None
    assert verdict(root, "python3 x.py; git stash") is not None
    assert verdict(root, "echo x >> src/app.py && git stash") is None


def test_git_that_cannot_answer_refuses(tmp_path, monkeypatch):
    root = repository(tmp_path, rules_edited=False)
    assert verdict(root, "git checkout no-such-branch-or-path-x") is None  # a path: no-op
    assert verdict(root, "git merge no-such-branch") is not None
    monkeypatch.setattr(git_tree, "PROBE_SECONDS", 1e-6)
    assert verdict(root, "git stash") is not None
    monkeypatch.undo()
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    assert verdict(root, "git stash") is not None


def test_asking_git_runs_none_of_the_repository_s_code(tmp_path):
    """An agent can write .git/config and .gitattributes: the probe must not start their
    fsmonitor, filters or hooks."""
    root = repository(tmp_path, rules_edited=False)
    marker = tmp_path / "ran"
    script = tmp_path / "evil.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\ncat\n")
    script.chmod(0o755)
    git(root, "config", "core.fsmonitor", str(script))
    git(root, "config", "filter.evil.clean", str(script))
    git(root, "config", "filter.evil.smudge", str(script))
    (root / ".gitattributes").write_text("* filter=evil\n")
    os.utime(root / ".forge" / "guard.yaml", (1, 1))  # stat-dirty: status would re-hash it
    for command in ("git stash", "git checkout old", "git clean -fd", "git stash pop"):
        verdict(root, command)
    assert not marker.exists()


def test_two_commands_that_rely_on_git_are_refused_together(tmp_path):
    """`git stash` makes stash@{0} stash@{1}: what git said of each command beforehand no
    longer holds once the other has run."""
    root = repository(tmp_path, rules_edited=False)
    (root / "src" / "app.py").write_text("print('wip')\n")
    git(root, "stash", "push", "-q", "--", "src/app.py")  # stash@{1}: src only
    (root / ".forge" / "guard.yaml").write_text("roles: {x: {tools: [Bash]}}\n")
    git(root, "stash", "push", "-q")  # stash@{0}: the rule file
    (root / "src" / "app.py").write_text("print('more')\n")
    assert verdict(root, "git stash") is None
    assert verdict(root, "git stash apply stash@{1}") is None
    assert verdict(root, "git stash apply stash@{0}") is not None
    combined = "git stash -q; git stash apply -q stash@{1}"
    assert verdict(root, combined) is not None
    subprocess.run(["bash", "-c", combined], cwd=root, capture_output=True,
                   env={**os.environ, **ENV})
    assert "Bash" in (root / ".forge" / "guard.yaml").read_text()  # what it would have done
