"""The council's rules without a model: which questions it takes during a goal, what it
records, and what it charges. The real sessions run in tests/host/test_council_host.py."""

from __future__ import annotations

import json

import pytest
from goal_support import Session, make_project
from test_gates import age, forge, write

from forge_runtime.council import advisors, convene, sdk, triage
from forge_runtime.errors import ForgeError
from forge_runtime.goal.hosts import transcript
from forge_runtime.goal.store import state_file

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
    before = state_file.read(project.state_path).goal["turn_count"]
    held = convene.convene(project, "Table-driven parser or recursive descent?", ask=scripted)
    assert held["charged"] == convene.SESSIONS == 11
    assert state_file.read(project.state_path).goal["turn_count"] == before + 11
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


PROSE = "I would go with SQLite: rows are queried often, and CSV files grow without an index."


def chair_in_prose(member, prompt, cwd):
    answer = scripted(member, prompt, cwd)
    return answer._replace(text=PROSE) if member is advisors.CHAIRMAN else answer


def test_a_chairman_who_ignores_the_shape_is_recorded_as_said_and_marked(project):
    held = convene.convene(project, "SQLite or flat CSV files?", ask=chair_in_prose)
    assert held["status"] == "unshaped" and held["verdict"] is None
    assert held["chair_text"] == PROSE and held["cost"]["sessions"] == 11
    record = (project.root / held["record"]).read_text()
    assert "status: unshaped" in record and PROSE in record
    assert "lacks verdict, reasons, minority report; it is kept as said" in record
    assert "forge council --resume COUNCIL-001" in record
    asked = []

    def shaped_now(member, prompt, cwd):
        asked.append(member.role)
        return scripted(member, prompt, cwd)

    resumed = convene.resume(project, "COUNCIL-001", ask=shaped_now)
    assert asked == ["council-chair"]  # only the seat that is missing is asked again
    assert resumed["status"] == "complete" and resumed["verdict"] == "keep one module."
    assert resumed["resumed"] == 1 and resumed["cost"]["sessions"] == 12
    assert PROSE in json.loads((project.root / ".forge/councils/COUNCIL-001.json")
                               .read_text())["chair_attempts"][0]


def failing_seat(perspective: str, stage: str = "opinion"):
    """A model whose one advisor's session fails at `stage` (as a non-retryable API error
    reaches forge: sdk.ask's ForgeError)."""
    def ask(member, prompt, cwd):
        if member.perspective == perspective and (stage == "opinion") == \
                ("Peer review:" not in prompt):
            raise ForgeError(f"the council's {member.role} session failed (ProcessError: "
                             "API error 400, not retryable)", "forge doctor")
        return scripted(member, prompt, cwd)
    return ask


def test_a_failed_advisor_keeps_the_other_opinions_and_resumes_only_the_missing(project):
    session = running_goal(project)
    before = state_file.read(project.state_path).goal["turn_count"]
    held = convene.convene(project, "SQLite or flat CSV files?", ask=failing_seat("scale"))
    assert held["status"] == "incomplete"
    assert sorted(o["perspective"] for o in held["opinions"]) == [
        "contrarian", "maintainer", "pragmatism", "simplicity"]
    assert held["reviews"] == [] and held["cost"]["failed"] == 1
    assert held["missing"][0].startswith("the scale advisor's opinion (the council's "
                                         "advisor-scale session failed")
    assert held["charged"] == 5  # every session asked is charged, the failed one too
    assert state_file.read(project.state_path).goal["turn_count"] == before + 5
    record = (project.root / held["record"]).read_text()
    assert "status: incomplete" in record and "maintainer thinks so" in record
    asked = []

    def remember(member, prompt, cwd):
        asked.append((member.role, "Peer review:" in prompt))
        return scripted(member, prompt, cwd)

    resumed = convene.resume(project, held["id"], ask=remember)
    assert asked.count(("advisor-scale", False)) == 1 and len(asked) == 1 + 5 + 1
    assert not any(role != "advisor-scale" and not review and role != "council-chair"
                   for role, review in asked)  # no opinion given before is asked again
    assert resumed["status"] == "complete" and resumed["charged"] == 12
    assert state_file.read(project.state_path).goal["turn_count"] == before + 12
    record = (project.root / resumed["record"]).read_text()
    assert "resumed: 1" in record and "sessions: 12" in record and "failed_sessions: 1" in record
    assert "## Missing" not in record
    session.turn()  # the goal goes on from there


def test_a_failed_review_stops_before_the_chairman_and_resumes_there(project):
    held = convene.convene(project, "Which cache layout?", ask=failing_seat("contrarian",
                                                                            "review"))
    assert held["status"] == "incomplete" and len(held["reviews"]) == 4
    assert held["chair_text"] is None
    asked = []
    resumed = convene.resume(project, held["id"], ask=lambda m, p, c: asked.append(m.role)
                             or scripted(m, p, c))
    assert asked == ["advisor-contrarian", "council-chair"]
    assert resumed["status"] == "complete"


def test_the_cli_records_an_incomplete_council_and_names_the_resume(project, monkeypatch):
    monkeypatch.setattr(sdk, "ask", failing_seat("pragmatism"))
    code, text = forge("council", "SQLite or flat CSV files?")
    assert code == 2 and "Traceback" not in text
    assert "FORGE_COUNCIL_INCOMPLETE" in text
    assert "Next: forge council --resume COUNCIL-001" in text
    assert "missing     the pragmatism advisor's opinion" in text
    monkeypatch.setattr(sdk, "ask", scripted)
    code, text = forge("council", "--resume", "COUNCIL-001")
    assert code == 0 and "complete)" in text and "Done." in text
    code, text = forge("council", "--resume", "COUNCIL-001")  # whole already: nothing asked
    assert code == 0 and "resumed     1 time(s)" in text


def test_the_cli_says_a_chairman_in_prose_is_kept_and_how_to_ask_again(project, monkeypatch):
    monkeypatch.setattr(sdk, "ask", chair_in_prose)
    code, text = forge("council", "SQLite or flat CSV files?")
    assert code == 2 and "FORGE_COUNCIL_NO_VERDICT" in text
    assert "Next: forge council --resume COUNCIL-001" in text


@pytest.mark.parametrize("words, expected", [
    (("--resume", "COUNCIL-042"), "there is no council COUNCIL-042"),
    (("--resume", "../../etc/passwd"), "is not a council id"),
    ((), "takes a question, or --resume"),
    (("Which layout?", "--resume", "COUNCIL-001"), "takes a question, or --resume"),
])
def test_resume_refuses_what_it_cannot_go_on_from(project, words, expected):
    code, text = forge("council", *words)
    assert code == 1 and expected in text and "Fix: forge council" in text


def test_damaged_council_data_is_an_error_not_a_traceback(project):
    held = convene.convene(project, "Which layout?", ask=failing_seat("scale"))
    data = project.root / ".forge/councils" / f"{held['id']}.json"
    for damage in ("{", "[]", json.dumps({"id": held["id"]}), "\x00\xff"):
        data.write_text(damage)
        code, text = forge("council", "--resume", held["id"])
        assert code == 1 and "FORGE_COUNCIL_DATA_INVALID" in text and "Traceback" not in text
