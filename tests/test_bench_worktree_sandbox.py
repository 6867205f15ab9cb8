"""bench/worktree_sandbox.py counts what it says: the host's sandbox failing to start a call,
not a command's own failure, over the layouts it names. No host runs here (the bench does)."""

from __future__ import annotations

import subprocess

import pytest

from bench import worktree_sandbox
from forge_runtime.hostkit.pytest_plugin import as_script
from forge_runtime.hostkit.script import Request


@pytest.mark.parametrize("result, failed", [
    ("Exit code 1\nbwrap: Can't find source path /r/.git/config.lock: No such file or directory",
     True),
    ("Exit code 1\nbwrap: Can't get type of source /r/.git/config.lock: No such file", True),
    ("Exit code 1\nbwrap: Can't bind mount /oldroot/r/.ripgreprc on /newroot/r/.ripgreprc",
     True),
    ("RAN", False),
    ("Exit code 1\nRAN\nbwrap: Can't find source path /x", False),  # the command's own text
    ("Exit code 2\nbwrap: Can't find source path /x", False),
    ("", False),
])
def test_only_bubblewraps_own_refusal_counts(result, failed):
    assert worktree_sandbox.failed_to_start(result) is failed


def test_the_scripted_model_makes_the_calls_asked_for_one_at_a_time():
    script = as_script(worktree_sandbox.script(3))
    rule, reply = script.answer(Request({"messages": [{"role": "user", "content": "work"}]}))
    assert rule.name == "first"
    assert reply["tool_calls"] == [{"name": "Bash",
                                    "input": {"command": worktree_sandbox.COMMAND}}]
    result = Request({"messages": [{"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t", "content": "RAN"}]}]})
    assert [script.answer(result)[0].name for _ in range(3)] == ["next", "next", "done"]


@pytest.mark.parametrize("layout, shared", [("linked", True), ("clones", False), ("same", True)])
def test_each_layout_is_what_it_names(tmp_path, layout, shared):
    trees = worktree_sandbox.trees(tmp_path, layout, 3)
    assert len(trees) == 3

    def common_dir(tree):
        found = subprocess.run(["git", "-C", str(tree), "rev-parse", "--git-common-dir"],
                               capture_output=True, text=True, check=True).stdout.strip()
        return (tree / found).resolve()

    assert (len({common_dir(tree) for tree in trees}) == 1) is shared
    assert (len(set(trees)) == 1) is (layout == "same")
