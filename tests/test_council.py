"""The council's rules without a model: which questions it takes during a goal, what it
records, and what it charges. The real sessions run in tests/host/test_council_host.py."""

from __future__ import annotations

import json

import pytest
from goal_support import Session, make_project
from test_gates import age, forge, write

from forge_runtime.council import advisors, convene, sdk, triage
from forge_runtime.errors import ForgeError
from forge_runtime.goal import state, transcript

GATES = """\
gates:
  unit-tests:
    command: echo tests
    boundary: ["src/**"]
  lint:
    command: echo lint
    boundary: ["src/**"]
"""
CHAIR = ("Verdict: keep one module.\nReasons: simplicity carried it.\n"
         "Minority report: scale would split it past 200 rules.")


def scripted(member, prompt: str, cwd: str) -> sdk.Answer:
    """A model for the council's plumbing: each member answers in its own words."""
    text = CHAIR if member is advisors.CHAIRMAN else f"{member.perspective} thinks so"
    return sdk.Answer(member.role, text, 2, 100, 20, None, [])


@pytest.fixture
def project(tmp_path, monkeypatch):
    monkeypatch.setattr(transcript, "FLUSH_WAIT", 0.05)
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    monkeypatch.delenv("CLAUDECODE", raising=False)
    project = make_project(tmp_path)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project.root))
    write(project.root, "src/app.py", "x = 1\n")
    write(project.root, ".forge/gates.yaml", GATES)
    age(project.root)
    assert forge("gate", "run")[0] == 0
    return project


def running_goal(project) -> Session:
    session = Session(project)
    session.person_goal("the parser is readable")
    session.turn()
    return session


@pytest.mark.parametrize("question, command", [
    ("Do the tests still pass?", "forge gate run unit-tests lint"),
    ("Is unit-tests still green after the refactor?", "forge gate run unit-tests"),
    ("Is there evidence for PRD-001 yet?", "forge gate run unit-tests lint"),
], ids=["tests", "a named gate", "evidence, nothing fresh"])
def test_a_question_a_stale_gate_settles_gets_that_gate_run(project, question, command):
    write(project.root, "src/app.py", "x = 2\n")
    refused = triage.refusal(project, question)
    assert refused.code == triage.SETTLED and refused.fix == command


def test_a_question_about_fresh_gates_is_answered_by_their_status(project):
    assert triage.refusal(project, "Does lint pass?").fix == "forge gate status"
    assert triage.refusal(project, "Record evidence for PRD-001?").fix == \
        "forge gate evidence unit-tests --for PRD-001"


def test_a_destructive_question_is_not_a_councils_to_decide(project):
    refused = triage.refusal(project, "Should I force-push over main to drop the old branch?")
    assert refused.code == triage.DESTRUCTIVE and refused.exit_code == 2


def test_a_genuine_decision_is_admitted(project):
    assert triage.refusal(project, "Table-driven parser or recursive descent?") is None


def test_during_a_goal_a_council_is_charged_one_turn_per_session(project):
    running_goal(project)
    before = state.read(project.state_path).goal["turn_count"]
    held = convene.convene(project, "Table-driven parser or recursive descent?", ask=scripted)
    assert held["charged"] == convene.SESSIONS == 11
    assert state.read(project.state_path).goal["turn_count"] == before + 11
    text = (project.root / held["record"]).read_text()
    assert f"goal: {held['goal']}" in text and "charged_turns: 11" in text
    assert "## Verdict\n\nkeep one module." in text
    assert "## Minority report\n\nscale would split it past 200 rules." in text
    assert held["cost"]["turns"] == 22 and held["cost"]["input_tokens"] == 1100


def test_during_a_goal_the_cheap_check_comes_first_unless_a_person_asks(project):
    running_goal(project)
    write(project.root, "src/app.py", "x = 3\n")
    with pytest.raises(ForgeError) as refused:
        convene.convene(project, "Do the tests pass now?", ask=scripted)
    assert refused.value.fix == "forge gate run unit-tests lint"
    held = convene.convene(project, "Do the tests pass now?", ask=scripted, person=True)
    assert held["convened_by"] == "person"


def test_a_council_that_does_not_fit_the_budget_is_refused_before_it_starts(project):
    session = running_goal(project)
    for _ in range(9):  # 10 of 20 turns used: 10 left, a council needs 11
        session.turn()
    asked = []
    with pytest.raises(ForgeError) as refused:
        convene.convene(project, "Which cache layout?", ask=lambda *a: asked.append(a))
    assert refused.value.code == "FORGE_COUNCIL_OVER_BUDGET" and asked == []


def test_without_a_goal_nothing_is_charged_and_ids_do_not_collide(project):
    first = convene.convene(project, "Which cache layout?", ask=scripted, for_id="PRD-002")
    second = convene.convene(project, "Which log format?", ask=scripted)
    assert (first["id"], second["id"]) == ("COUNCIL-001", "COUNCIL-002")
    assert first["charged"] == 0 and "for: PRD-002" in (project.root / first["record"]
                                                        ).read_text()


def test_the_peer_review_sees_letters_not_perspectives(project):
    prompts = {}

    def remember(member, prompt, cwd):
        prompts.setdefault(member.role, []).append(prompt)
        return scripted(member, prompt, cwd)

    convene.convene(project, "Which cache layout?", ask=remember)
    review = prompts["advisor-scale"][1]
    assert "Opinion A:" in review and "Opinion E:" in review
    assert "scale" not in review.replace("scale thinks so", "")
    assert "The scale advisor" in prompts["council-chair"][0]


def test_a_council_held_by_subagents_is_recorded_from_their_answers(project, tmp_path):
    said = {"opinions": {m.perspective: f"{m.perspective} says yes" for m in advisors.ADVISORS},
            "reviews": {m.perspective: "A first" for m in advisors.ADVISORS},
            "verdict": CHAIR}
    path = tmp_path / "council.json"
    path.write_text(json.dumps(said))
    running_goal(project)
    code, text = forge("council", "Which cache layout?", "--record", str(path))
    assert code == 0, text
    assert "0 turn(s) charged" in text  # their turns were the main session's, charged there
    record = (project.root / ".forge/councils/COUNCIL-001.md").read_text()
    assert "maintainer says yes" in record and "keep one module." in record
    del said["reviews"]["scale"]
    path.write_text(json.dumps(said))
    code, text = forge("council", "Which cache layout?", "--record", str(path))
    assert code == 1 and "lacks 'scale'" in text


def test_a_verdict_without_a_minority_report_is_an_error(project):
    def no_minority(member, prompt, cwd):
        answer = scripted(member, prompt, cwd)
        return answer._replace(text="Verdict: yes") if member is advisors.CHAIRMAN else answer

    held = convene.convene(project, "Which cache layout?", ask=no_minority)
    assert held["verdict"] == "yes" and held["minority"] is None


def test_person_is_refused_inside_an_agents_session(project, monkeypatch):
    monkeypatch.setenv("CLAUDECODE", "1")
    code, text = forge("council", "Which cache layout?", "--person")
    assert code == 2 and "FORGE_COUNCIL_NOT_A_PERSON" in text


def test_check_says_whether_a_council_may_take_the_question(project):
    running_goal(project)
    code, text = forge("council", "Which cache layout?", "--check")
    assert code == 0 and text.rstrip().endswith("a council may take it")
    code, text = forge("council", "Does lint pass?", "--check")
    assert code == 2 and "Fix: forge gate status" in text
