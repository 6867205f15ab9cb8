"""Codex's apply_patch through forge's guard: the paths its patch names, the same rules."""

from __future__ import annotations

import pytest

from forge_runtime.guard import patch
from forge_runtime.guard.decide import decide


def call(project, text: str):
    return decide({"session_id": "s", "cwd": str(project), "tool_name": "apply_patch",
                   "tool_input": {"command": text}}, env={})


def wrapped(*lines: str) -> str:
    return "\n".join(["*** Begin Patch", *lines, "*** End Patch", ""])


def test_operations_name_every_path_the_patch_touches():
    text = wrapped("*** Add File: a.txt", "+hi", "*** Update File: b.txt", "*** Move to: c.txt",
                   "@@", "-x", "+y", "*** Delete File: d.txt")
    assert [(header, path) for header, path, _ in patch.operations(text)] == [
        (patch.ADD, "a.txt"), (patch.UPDATE, "b.txt"), (patch.MOVE, "c.txt"),
        (patch.DELETE, "d.txt")]


@pytest.mark.parametrize("lines", [
    ["*** Add File: .git/forge-goals/x.json", "+{}"],
    ["*** Delete File: .git/forge-goals/repository-id"],
    ["*** Update File: notes.txt", "*** Move to: .git/forge-guard/modes/s.json", "@@", "-a", "+b"],
    ["*** Add File: ./.forge/guard.yaml", "+roles: {}"],
    ["*** Add File: sub/../.git/forge-goals/y", "+1"],
    ["*** Delete File: .forge/local/state.md"],
])
def test_a_patch_into_a_protected_path_is_denied(cli_project, lines):
    hint = call(cli_project, wrapped(*lines))
    assert hint is not None and hint.render().startswith("Error: forge guard: apply_patch ")


def test_an_ordinary_patch_is_allowed(cli_project):
    assert call(cli_project, wrapped("*** Add File: src/app.py", "+print(1)")) is None


def test_ticking_the_checklist_is_allowed_but_the_goal_front_matter_is_not(cli_project):
    state = cli_project / ".forge" / "local" / "state.md"
    state.parent.mkdir(parents=True)
    state.write_text("---\ngoal: null\n---\n## Checklist\n- [ ] write it\n")
    tick = wrapped("*** Update File: .forge/local/state.md", "@@", "-- [ ] write it",
                   "+- [x] write it")
    assert call(cli_project, tick) is None
    forge_goal = wrapped("*** Update File: .forge/local/state.md", "@@", "-goal: null",
                         "+goal: {turn_count: 0}")
    assert "would change" in call(cli_project, forge_goal).render()
    stale = wrapped("*** Update File: .forge/local/state.md", "@@", "-not in the file", "+x")
    assert "does not apply" in call(cli_project, stale).render()


def test_input_that_is_not_a_patch_is_denied(cli_project):
    assert call(cli_project, "rm -rf .git") is not None
    hint = decide({"session_id": "s", "cwd": str(cli_project), "tool_name": "apply_patch",
                   "tool_input": {}}, env={})
    assert "no patch text" in hint.render()
