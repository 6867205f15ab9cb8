"""state.md: forge owns the goal front matter, the agent owns the checklist body."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_runtime.errors import ForgeError
from forge_runtime.goal.store import state_file

GOAL = {"nonce": "a" * 32, "objective": "ship it", "objective_hash": "b" * 64,
        "activation_id": "act", "activation_count": 1, "turn_count": 3, "turn_ceiling": 20,
        "status": "active", "repository": "ignored: not mirrored"}
BODY = "# Goal\n\n## Checklist\n- [x] read the issue\n- [ ] write the parser\n- [ ] test it\n"


def test_writing_the_goal_keeps_the_body_exactly(tmp_path):
    path = tmp_path / "state.md"
    path.write_text(f"---\ngoal: null\n---\n{BODY}")
    state_file.write_goal(path, GOAL)
    parsed = state_file.read(path)
    assert parsed.goal == state_file.mirror(GOAL)
    assert parsed.body == BODY
    assert parsed.next_step == "write the parser"
    state_file.validate(path, parsed)


@given(st.text(alphabet=st.characters(blacklist_categories=("Cs",)), max_size=200))
def test_any_body_survives_a_goal_update(tmp_path_factory, body):
    path = tmp_path_factory.mktemp("s") / "state.md"
    path.write_text(f"---\ngoal: null\n---\n{body}", encoding="utf-8", newline="")
    state_file.write_goal(path, GOAL)
    assert state_file.read(path).body == body


def test_a_missing_state_file_starts_from_forges_template(tmp_path):
    path = tmp_path / "local" / "state.md"
    state_file.write_goal(path, GOAL)
    parsed = state_file.read(path)
    assert parsed.goal["turn_count"] == 3
    assert "## Checklist" in parsed.body
    from forge_runtime.resources import STATE_TEMPLATE

    assert str(STATE_TEMPLATE) == state_file.TEMPLATE  # the shipped template, not a copy


def test_front_matter_a_person_reformatted_as_yaml_still_reads(tmp_path):
    path = tmp_path / "state.md"
    path.write_text("---\ngoal:\n  nonce: " + "a" * 32 + "\n  turn_count: 4\n---\nbody\n")
    assert state_file.read(path).goal == {"nonce": "a" * 32, "turn_count": 4}


@pytest.mark.parametrize("text, why", [
    ("no fence\n", "does not start"),
    ("---\ngoal: null\nbody\n", "no closing"),
    ("---\ngoal: [1, 2]\n---\n", "neither null nor a mapping"),
    ("---\n: : :\n---\n", "not YAML"),
])
def test_a_broken_state_file_is_a_precise_error(tmp_path, text, why):
    path = tmp_path / "state.md"
    path.write_text(text)
    with pytest.raises(ForgeError) as caught:
        state_file.read(path)
    assert why in caught.value.message
    assert caught.value.fix == "forge goal sync"


def test_the_schema_rejects_a_goal_with_a_wrong_field(tmp_path):
    path = tmp_path / "state.md"
    state_file.write_goal(path, {**GOAL, "turn_count": -1})
    with pytest.raises(ForgeError) as caught:
        state_file.validate(path, state_file.read(path))
    assert "turn_count" in caught.value.message


def test_progress_changes_only_when_the_checklist_does(tmp_path):
    first = state_file.StateFile(None, BODY)
    assert first.progress() == state_file.StateFile(None, BODY + "\nnotes\n").progress()
    ticked = BODY.replace("- [ ] write", "- [x] write")
    assert first.progress() != state_file.StateFile(None, ticked).progress()


# The checklist pattern forge matched with `re` before it parsed lines by hand (state.task).
CHECKLIST_LINE = r"^\s*[-*] \[( |x|X)\] (.*\S)\s*$"
LINE_PARTS = st.sampled_from(["-", "*", "+", " ", "  ", "\t", "\u00a0", "\u2003", "[", "]",
                              "[ ]", "[x]", "[X]", "[y]", "x", "X", "step", "é", "\u200b",
                              "\x0c", "\x1f", "\x85"])


@given(st.lists(LINE_PARTS, max_size=8).map("".join) | st.text(max_size=20))
def test_a_checklist_line_reads_as_the_regular_expression_read_it(line):
    import re

    match = re.match(CHECKLIST_LINE, line)
    expected = (match.group(1) != " ", match.group(2)) if match else None
    assert state_file.task(line) == expected


def test_the_checklist_reads_ticked_and_open_steps_in_order():
    body = "# Goal\n- [x] parse\n  * [ ] write  \n- [ ]    \n-[ ] no\n- [X] done\n"
    assert state_file.StateFile(None, body).tasks == [(True, "parse"), (False, "write"),
                                                 (True, "done")]
    assert state_file.StateFile(None, body).next_step == "write"
