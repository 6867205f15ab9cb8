"""The checkpoint where forge stops a goal: the next unchecked step and the checklist's
progress, in the Stop reply the person sees and the model's context gets, with the hint
unchanged; and the gauge the status line and `forge goal status` share."""

from __future__ import annotations

import pytest
from goal_support import Session, goal_project_fixture, goal_with_checklist

from forge_runtime import hints
from forge_runtime.goal.store import state_file
from forge_runtime.goal.views import checkpoint, gauge
from forge_runtime.hint_audit import output_problems
from forge_runtime.hooks import stop

OBJECTIVE = "the CSV importer handles quoted commas"
CHECKLIST = ("- [x] read the CSV spec\n- [x] write the tests\n- [x] parse the delimiter\n"
             "- [ ] parse the header row\n- [ ] handle quoted commas\n- [ ] handle escapes\n"
             "- [ ] document it\n")
CHECKPOINT = "Checkpoint: 3 of 7 steps done; next unchecked step: parse the header row"


project = goal_project_fixture()


def running(project, turns: int) -> Session:
    return goal_with_checklist(project, OBJECTIVE, turns, CHECKLIST)


def test_exhaustion_names_the_checkpoint_before_the_same_hint(project):
    session = running(project, 19)
    reason = session.turn()["stopReason"]
    lines = reason.splitlines()
    assert lines[0].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: goal ")
    assert lines[1:] == [CHECKPOINT, f"Next: /goal {OBJECTIVE}",
                         "  adds one more tranche of 20 turns", "Or: /goal clear"]
    assert output_problems(reason) == []
    assert hints.split_rendered(reason)[1] == hints.split_rendered(
        "\n".join([lines[0], *lines[2:]]))[1]  # the hint is the one without the checkpoint


def test_tampering_names_the_checkpoint_and_keeps_its_fix(project):
    session = running(project, 3)
    nonce = state_file.read(project.state_path).goal["nonce"]
    record = project.ledger_root / nonce / "records" / "00000003.json"
    record.write_text(record.read_text().replace('"charge"', '"bind"'))
    lines = session.turn()["stopReason"].splitlines()
    assert lines[0] == CHECKPOINT
    assert lines[1].startswith("Error: FORGE_GOAL_LEDGER_TAMPERED: goal ")
    assert lines[2] == "Fix: forge goal verify"


def test_a_hook_failure_names_the_checkpoint(project, monkeypatch):
    session = running(project, 2)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project.root))
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", session.id)
    lines = stop.on_failure("internal error KeyError: 'x'")["stopReason"].splitlines()
    assert lines[0] == CHECKPOINT
    assert lines[1].startswith("Error: FORGE_GOAL_HOOK_FAILED: forge's Stop hook failed")
    assert lines[2] == "Fix: forge goal verify"


def test_a_hook_failure_with_an_unreadable_state_still_stops_the_goal(project, monkeypatch):
    session = running(project, 2)
    project.state_path.write_bytes(b"\xff\xfe not forge's")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project.root))
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", session.id)
    reply = stop.on_failure("input is not JSON")
    assert reply["continue"] is False
    assert reply["stopReason"].splitlines()[0] == \
        "Checkpoint: unknown (.forge/local/state.md cannot be read)"


def test_another_goal_taking_the_work_tree_keeps_its_message(project):
    first, second = Session(project), Session(project)
    first.person_goal(OBJECTIVE)
    first.turn()
    second.person_goal("another objective")
    second.turn()
    lines = first.turn()["stopReason"].splitlines()  # state.md holds the other goal's list
    assert lines[0].startswith("Error: FORGE_GOAL_WORKTREE_TAKEN: ")


@pytest.mark.parametrize("tasks, said", [
    ([], "no checklist steps in .forge/local/state.md"),
    ([(True, "a"), (True, "b")], "2 of 2 steps done; no unchecked step left"),
    ([(False, "only")], "0 of 1 step done; next unchecked step: only"),
])
def test_the_checkpoint_sentence(tasks, said):
    assert checkpoint.of_tasks(tasks).describe() == said


def test_agent_written_steps_are_cleaned_and_cut_short():
    found = checkpoint.of_tasks([(False, "evil\u202e step\u200b " + "x" * 300)])
    step = found.step()
    assert step.startswith("evil step ") and len(step) == checkpoint.STEP_LIMIT
    assert step.isprintable() and step.endswith("…")


@pytest.mark.parametrize("used, cells", [(0, 0), (1, 1), (9, 4), (10, 5), (19, 9), (20, 10),
                                         (39, 9), (40, 10)])
def test_the_gauge_fills_with_the_turns_and_is_full_only_when_spent(used, cells):
    ceiling = 40 if used > 20 else 20
    assert gauge.bar(used, ceiling) == "▰" * cells + "▱" * (10 - cells)
    assert gauge.bar(used, ceiling, unicode=False) == "[" + "#" * cells + "-" * (10 - cells) + "]"


@pytest.mark.parametrize("env, ok", [
    ({"LANG": "en_GB.UTF-8"}, True), ({"LANG": "C.utf8"}, True), ({"LANG": "C"}, False),
    ({}, False), ({"LC_ALL": "C", "LANG": "en_GB.UTF-8"}, False),
    ({"LC_CTYPE": "en_US.UTF-8", "LANG": "C"}, True),
    ({"LC_CTYPE": "C.UTF-8", "LANG": "C"}, False),  # Python's own PEP 538 coercion
    ({"LC_CTYPE": "C.UTF-8", "LANG": "de_DE.UTF-8"}, True),
])
def test_the_gauge_is_unicode_only_in_a_utf8_locale(env, ok):
    assert gauge.unicode_ok(env) is ok
