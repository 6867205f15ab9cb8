"""The final gates of a running goal: the Stop hook tells the model when they change, and a
goal met while a gate is stale or failing is met but unverified."""

from __future__ import annotations

import pytest
from goal_support import Session, gates_project, running_goal, stop_turn, two_gates
from test_gates import forge, forge_json, write

from forge_runtime.hooks import session_end

OBJECTIVE = "the parser passes its tests"
GATES = two_gates("echo tests")


@pytest.fixture
def project(tmp_path, monkeypatch):
    return gates_project(tmp_path, monkeypatch, GATES, "parse = None\n")


def context(reply: dict | None) -> str:
    """What the model's next request carries (and the person sees)."""
    assert reply is not None and "continue" not in reply
    text = reply["hookSpecificOutput"]["additionalContext"]
    assert reply["systemMessage"] == text
    return text


def told_the_person(reply: dict | None) -> str:
    """A notice for the person alone: the host would answer model context with a turn."""
    assert reply is not None and "hookSpecificOutput" not in reply
    return reply["systemMessage"]


def test_the_model_is_told_which_gates_are_stale_only_when_that_changes(project):
    session = running_goal(project, OBJECTIVE)
    first = context(stop_turn(session))  # nothing has run yet
    assert "FORGE_GATES_NOT_FRESH" in first and "unit-tests never-run, docs never-run" in first
    assert first.endswith("Next: forge gate run unit-tests docs\n"
                          "  only these gates' receipts are out of date")
    assert stop_turn(session) is None  # unchanged: said once
    assert forge("gate", "run")[0] == 0
    fresh = told_the_person(stop_turn(session))
    assert "FORGE_GATES_FRESH" in fresh and "Next: forge goal verify-gates" in fresh
    assert stop_turn(session) is None
    write(project.root, "src/parser.py", "parse = 'better'\n")
    stale = context(stop_turn(session))
    assert "unit-tests stale" in stale and "docs" not in stale.split("Next:")[0]
    assert "Next: forge gate run unit-tests\n" in stale


def test_a_goal_whose_gates_are_fresh_from_the_start_hears_nothing(project):
    assert forge("gate", "run")[0] == 0
    session = running_goal(project, OBJECTIVE)
    assert stop_turn(session) is None
    assert stop_turn(session) is None


def test_a_project_without_gates_gets_the_stop_reply_it_always_had(project):
    (project.root / ".forge/gates.yaml").unlink()
    session = running_goal(project, OBJECTIVE)
    assert stop_turn(session) is None


def test_a_broken_gates_file_is_told_to_the_model_and_stops_nothing(project):
    assert forge("gate", "run")[0] == 0
    session = running_goal(project, OBJECTIVE)
    assert stop_turn(session) is None
    write(project.root, ".forge/gates.yaml", "gates: [\n")
    text = context(stop_turn(session))
    assert "FORGE_GATES_INVALID" in text and text.endswith(
        "Fix: forge gate status\n  correct .forge/gates.yaml:2, then run this to check it")


def test_the_stuck_warning_points_first_at_the_stale_gate(project):
    session = running_goal(project, OBJECTIVE)
    stop_turn(session)  # told: never run
    replies = [stop_turn(session) for _ in range(5)]
    stuck = context(replies[-1])
    assert stuck.startswith("FORGE_GOAL_STUCK_WARNING")
    assert "FORGE_GATES_NOT_FRESH" in stuck
    assert stuck.endswith("Next: forge gate run unit-tests docs\n"
                          "  only these gates' receipts are out of date\n"
                          "Or: forge goal status")


def met(project, session: Session) -> None:
    stop_turn(session)
    session.verdict(met=True, condition=OBJECTIVE)
    assert session_end.handle(session.event("SessionEnd", reason="other")) is None


def test_a_goal_met_is_judged_by_forges_own_run_not_by_its_receipts(project):
    write(project.root, ".forge/gates.yaml",
          GATES.replace("echo docs", "grep -q good docs/index.md"))
    assert forge("gate", "run", "unit-tests")[0] == 0
    session = running_goal(project, OBJECTIVE)
    met(project, session)  # docs never ran, and forge's own run of it fails

    code, text = forge("goal", "status")
    assert code == 0
    assert "status      complete" in text
    assert "gates       met but unverified: forge ran the recorded final gates itself: " \
           "docs failed (exit 1)" in text
    assert text.endswith("Next: forge goal verify-gates\n  runs the goal's recorded final "
                         "gates, confined, and records the verdict\n")
    code, text = forge("goal", "verify-gates")
    assert code == 2
    assert "Error: FORGE_GOAL_UNVERIFIED: goal" in text and "docs failed (exit 1)" in text
    assert "Fix: forge gate run docs" in text

    write(project.root, "docs/index.md", "# parser, good now\n")  # no receipt: forge runs it
    code, text = forge("goal", "verify-gates")
    assert code == 0 and "met and verified" in text and text.rstrip().splitlines()[-2] == "Done."
    assert "docs  passed in" in text and "forge's own run" in text
    code, text = forge("goal", "status")
    assert "gates       verified at" in text and text.rstrip().endswith("reopens it")


def test_a_goal_met_with_stale_receipts_whose_gates_pass_is_verified(project):
    assert forge("gate", "run")[0] == 0
    session = running_goal(project, OBJECTIVE)
    write(project.root, "docs/index.md", "# parser, edited\n")  # the docs receipt is stale
    met(project, session)
    code, text = forge("goal", "status")
    assert "gates       verified at" in text


def test_a_goal_met_with_a_failing_gate_is_unverified_too(project):
    write(project.root, ".forge/gates.yaml", GATES.replace("echo docs", "exit 1"))
    forge("gate", "run")
    session = running_goal(project, OBJECTIVE)
    met(project, session)
    code, text = forge("goal", "status")
    assert "met but unverified: forge ran the recorded final gates itself: docs failed " \
           "(exit 1)" in text
    assert forge("goal", "verify-gates")[0] == 2


def test_a_goal_met_with_every_gate_fresh_is_verified_when_met(project):
    assert forge("gate", "run")[0] == 0
    session = running_goal(project, OBJECTIVE)
    met(project, session)
    write(project.root, "src/parser.py", "later = True\n")  # an edit after the goal was met
    code, text = forge("goal", "status")
    assert "gates       verified at" in text


def test_verify_gates_on_a_running_goal_waits_for_the_evaluator(project):
    assert forge("gate", "run")[0] == 0
    session = running_goal(project, OBJECTIVE)
    stop_turn(session)
    code, payload = forge_json("goal", "verify-gates")
    assert code == 0 and payload["_hint"]["marker"] == "Wait"
    write(project.root, "src/parser.py", "x = 2\n")
    code, payload = forge_json("goal", "status")
    assert payload["_next_action"] == "forge gate run unit-tests"


def test_the_next_prompt_records_a_verdict_the_last_stop_could_not_see(project):
    from forge_runtime.hooks import user_prompt_submit

    write(project.root, ".forge/gates.yaml",
          GATES.replace("echo docs", "grep -q good docs/index.md"))
    write(project.root, "docs/index.md", "# good\n")
    assert forge("gate", "run")[0] == 0
    session = running_goal(project, OBJECTIVE)
    write(project.root, "docs/index.md", "# stale now\n")
    stop_turn(session)
    session.verdict(met=True, condition=OBJECTIVE)
    user_prompt_submit.handle(session.event("UserPromptSubmit", prompt="thanks"))
    write(project.root, "docs/index.md", "# good again\n")  # the person works on after it
    assert forge("gate", "run", "docs")[0] == 0
    code, text = forge("goal", "status")
    assert "met but unverified" in text  # judged on the tree as it was when it was met
