"""Write, Edit, MultiEdit and NotebookEdit against protected paths and state.md's goal fields."""

from __future__ import annotations

import pytest
from guard_support import STATE, guard_project_fixture

from forge_runtime.guard import edits
from forge_runtime.project import find_project
from forge_runtime.protected import paths

project = guard_project_fixture()


def verdict(project, tool, tool_input, cwd=None):
    protected = paths.protected_paths(find_project(project))
    return edits.check(tool, tool_input, str(cwd or project), {"HOME": str(project.parent)},
                       protected)


STATE_PATH = ".forge/local/state.md"


@pytest.mark.parametrize("tool, tool_input", [
    ("Write", {"file_path": ".git/forge-goals/n1/records/00000001.json", "content": "{}"}),
    ("Write", {"file_path": ".git/forge-goals/n2/records/00000001.json", "content": "{}"}),
    ("Edit", {"file_path": ".git/forge-goals/n1/records/00000001.json",
              "old_string": "3", "new_string": "0"}),
    ("MultiEdit", {"file_path": ".git/forge-guard/modes/sess-1.json", "edits": []}),
    ("Write", {"file_path": ".forge/guard.yaml", "content": "roles: {}\n"}),
    ("NotebookEdit", {"notebook_path": ".git/forge-goals/n1/x.ipynb", "new_source": ""}),
    ("NotebookEdit", {"notebook_path": STATE_PATH, "new_source": ""}),
    ("Write", {"file_path": "src/../.git/forge-goals/n1/f", "content": ""}),
    ("Write", {"file_path": "~/proj/.git/forge-goals/n1/f", "content": ""}),
    ("Write", {"file_path": "$HOME/proj/.git/forge-goals/n1/f", "content": ""}),
    ("Write", {"file_path": "$UNKNOWN/f", "content": ""}),
    ("Write", {"content": "no path"}),
    ("Edit", {"file_path": 42, "old_string": "a", "new_string": "b"}),
])
def test_protected_files_cannot_be_written(project, tool, tool_input):
    assert verdict(project, tool, tool_input) is not None


def test_an_absolute_path_and_a_symlink_are_followed(project, tmp_path):
    absolute = project / ".git" / "forge-goals" / "n1" / "records" / "00000001.json"
    assert verdict(project, "Write", {"file_path": str(absolute), "content": ""})
    (tmp_path / "sneaky").symlink_to(absolute.parent)
    assert verdict(project, "Write", {"file_path": str(tmp_path / "sneaky" / "00000002.json"),
                                      "content": ""})


def test_state_md_checklist_may_be_edited(project):
    assert verdict(project, "Edit", {"file_path": STATE_PATH, "old_string": "- [ ] read",
                                     "new_string": "- [x] read\n- [ ] write"}) is None
    body_rewrite = STATE.replace("- [ ] read", "- [x] read")
    assert verdict(project, "Write", {"file_path": STATE_PATH, "content": body_rewrite}) is None
    assert verdict(project, "MultiEdit", {"file_path": STATE_PATH, "edits": [
        {"old_string": "- [ ] read", "new_string": "- [x] read"},
        {"old_string": "## Checklist", "new_string": "## Checklist\n- [ ] more"},
    ]}) is None


@pytest.mark.parametrize("tool, tool_input", [
    ("Edit", {"old_string": "turn_count: 3", "new_string": "turn_count: 0"}),
    ("Edit", {"old_string": "turn_ceiling: 20", "new_string": "turn_ceiling: 2000"}),
    ("Edit", {"old_string": "---\n## Checklist", "new_string": "## Checklist"}),
    ("Edit", {"old_string": "3", "new_string": "0", "replace_all": True}),
    ("MultiEdit", {"edits": [{"old_string": "- [ ] read", "new_string": "- [x] read"},
                             {"old_string": "nonce: n1", "new_string": "nonce: n9"}]}),
    ("Write", {"content": "---\ngoal: null\n---\n## Checklist\n"}),
    ("Write", {"content": "## Checklist\n- [ ] read\n"}),
    ("MultiEdit", {"edits": "not a list"}),
    ("Edit", {"old_string": None, "new_string": "x"}),
])
def test_state_md_goal_fields_cannot_change(project, tool, tool_input):
    finding = verdict(project, tool, {"file_path": STATE_PATH, **tool_input})
    assert finding is not None
    assert finding.entry.label == "the goal fields of state.md"


def test_an_empty_old_string_on_a_written_state_md_is_refused_unsimulated(project):
    """Replacing "" everywhere would put new_string between every character: hundreds of MB
    from a small input, in a hook the host lets through if it dies."""
    finding = verdict(project, "Edit", {"file_path": STATE_PATH, "old_string": "",
                                        "new_string": "x" * 10_000_000, "replace_all": True})
    assert finding is not None and "malformed" in finding.message


def test_a_new_state_md_may_only_hold_no_goal(project):
    (project / STATE_PATH).unlink()
    assert verdict(project, "Write", {"file_path": STATE_PATH,
                                      "content": "---\ngoal: null\n---\n## Checklist\n"}) is None
    assert verdict(project, "Write", {"file_path": STATE_PATH, "content": STATE}) is not None


def test_ordinary_files_are_untouched_by_the_guard(project):
    assert verdict(project, "Write", {"file_path": "src/new.py", "content": "x"}) is None
    assert verdict(project, "Edit", {"file_path": "src/app.py", "old_string": "hi",
                                     "new_string": "ho"}) is None
    assert verdict(project, "Write", {"file_path": "docs/state.md", "content": "x"}) is None


@pytest.mark.parametrize("text, expected", [
    ("---\ngoal: null\n---\nbody", "---\ngoal: null\n---\n"),
    ("---\r\ngoal: null\r\n---\r\nbody", "---\r\ngoal: null\r\n---\r\n"),
    ("---\ngoal: null\n...\nbody", "---\ngoal: null\n...\n"),
    ("---\ngoal: null\n---", "---\ngoal: null\n---"),
    ("no front matter", None),
    ("---\nunterminated\n", None),
    ("----\nnot a fence\n---\n", None),
])
def test_front_matter_is_found_exactly(text, expected):
    assert edits.front_matter(text) == expected
