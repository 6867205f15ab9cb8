"""The final gates of a running goal: every Stop tells the model which gates still need a
run (the person, when that changes); a goal the host judges met while a gate is stale or
failing goes on, each turn charged, until forge's own run passes (complete and verified),
the ceiling (unverified) or a person takes over (met but unverified)."""

from __future__ import annotations

from collections import Counter

import pytest
from goal_support import Session, gates_project, running_goal, stop_turn, two_gates
from test_gates import forge, forge_json, write

from forge_runtime.goal.store import state_file
from forge_runtime.hooks import session_end, stop

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


def model_context(reply: dict | None) -> str:
    """What the model's next request carries, with nothing shown to the person."""
    assert reply is not None and set(reply) == {"hookSpecificOutput"}, reply
    return reply["hookSpecificOutput"]["additionalContext"]


def test_the_model_hears_of_stale_gates_every_turn_and_the_person_when_that_changes(project):
    session = running_goal(project, OBJECTIVE)
    first = context(stop_turn(session))  # nothing has run yet
    assert "FORGE_GATES_NOT_FRESH" in first and "unit-tests never-run, docs never-run" in first
    assert first.endswith("Next: forge gate run unit-tests docs\n"
                          "  only these gates' receipts are out of date")
    assert model_context(stop_turn(session)) == first  # unchanged: the model again, not the person
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


# -- the host says met while a gate fails: forge keeps the goal going ---------------------

FIXABLE = GATES.replace("echo tests", "grep -q good src/parser.py")


def held_goal(project) -> Session:
    """A goal the host judged met at once, its Stop having told the model to run the gates;
    unit-tests fails until src/parser.py says `good`."""
    write(project.root, ".forge/gates.yaml", FIXABLE)
    session = running_goal(project, OBJECTIVE)
    assert "FORGE_GATES_NOT_FRESH" in context(stop_turn(session))
    session.verdict(met=True, condition=OBJECTIVE, reason="the model says it is done",
                    iterations=1)
    return session


def ledger_goal(project) -> dict:
    from forge_runtime.goal.store.ledger import Ledger

    nonce = state_file.read(project.state_path).goal["nonce"]
    return Ledger(project.ledger_root, nonce).current().goal


def test_a_met_verdict_while_a_gate_fails_keeps_the_goal_going_until_it_passes(project):
    from forge_runtime.gates.files import read_record

    session = held_goal(project)
    told = model_context(stop_turn(session))  # the Stop that sees the host's met
    assert "unit-tests never-run, docs never-run" in told
    goal = ledger_goal(project)
    assert (goal["status"], goal["turn_count"]) == ("active", 2)  # charged like any turn
    code, text = forge("goal", "status")
    assert "the host judged it met at" in text and "forge keeps it going" in text

    assert forge("gate", "run")[0] == 1  # unit-tests fails
    failing = context(stop_turn(session))  # changed: the person hears of it too
    assert "unit-tests failing" in failing
    assert failing.endswith("Next: forge gate run unit-tests\n  after fixing what "
                            ".forge/local/gates/unit-tests.log shows: nothing it covers "
                            "changed since it failed")
    write(project.root, "src/parser.py", "parse = 'good'\n")
    assert forge("gate", "run", "unit-tests")[0] == 0
    done = told_the_person(stop_turn(session))
    assert done.startswith("FORGE_GOAL_VERIFIED: goal ") and "\nDone." in done
    goal = ledger_goal(project)
    assert (goal["status"], goal["turn_count"]) == ("complete", 4)
    record = read_record(project, goal["nonce"])
    assert record["met"]["verified"] is True and record["verified_at"]
    receipt = record["met"]["receipts"]["unit-tests"]
    assert receipt["receipt"]["exit_code"] == 0 and receipt["receipt"]["output_sha256"]
    assert receipt["confirmed"]["verdict"] == "passed"
    assert "gates       verified at" in forge("goal", "status")[1]
    assert forge("goal", "verify-gates")[0] == 0
    after = stop_turn(session)  # a turn no person started, after the goal ended: stopped
    assert after["continue"] is False
    assert after["stopReason"].startswith("FORGE_GOAL_ENDED_TURN: ")


def test_a_gate_that_never_passes_ends_at_the_ceiling_unverified_with_every_turn_charged(
        project):
    session = held_goal(project)
    replies = [stop_turn(session) for _ in range(19)]
    assert all("hookSpecificOutput" in reply for reply in replies[:18])
    last = replies[-1]
    assert last["continue"] is False
    lines = last["stopReason"].splitlines()
    assert lines[0].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: goal ")
    assert "used 20 of 20 turns" in lines[0]
    assert lines[-4].startswith("FORGE_GOAL_UNVERIFIED: goal ")
    assert "the host judged it met, but forge's own run of its final gates never passed " \
           "(unit-tests never-run, docs never-run)" in lines[-4]
    assert lines[-3:] == [f"Next: /goal {OBJECTIVE}", "  adds one more tranche of 20 turns",
                          "Or: /goal clear"]
    goal = ledger_goal(project)
    assert (goal["status"], goal["turn_count"]) == ("exhausted", 20)
    assert "met by the host at" in forge("goal", "status")[1]


def test_a_stop_repeated_with_no_new_turn_is_never_continued(project):
    session = held_goal(project)
    assert model_context(stop_turn(session))
    assert stop.handle(session.event("Stop", stop_hook_active=True)) is None
    assert ledger_goal(project)["turn_count"] == 2


def test_a_persons_prompt_ends_a_held_goal_as_met_but_unverified(project):
    from forge_runtime.hooks import user_prompt_submit

    session = held_goal(project)
    assert model_context(stop_turn(session))
    session.prompt_id = "typed"
    user_prompt_submit.handle(session.event("UserPromptSubmit", prompt="stop, I'll look"))
    assert ledger_goal(project)["status"] == "active"  # the hook cannot tell who sent it
    session._append({"type": "user", "promptId": "typed", "promptSource": "typed",
                     "origin": {"kind": "human"},
                     "message": {"role": "user", "content": "stop, I'll look"}})
    assert stop_turn(session) is None  # nothing continues it past the person
    goal = ledger_goal(project)
    assert (goal["status"], goal["turn_count"]) == ("complete", 2)
    assert "met but unverified" in forge("goal", "status")[1]


def test_a_continued_turn_a_persons_esc_ended_is_charged_by_the_next_prompt(project):
    """Esc during the turn forge's reply started after the host's met fires no Stop (and,
    on a host that knows no Interrupt hook, nothing at all): the person's next prompt finds
    the verdict, the interrupted turn (closed by the host's note) and ends the goal; that
    turn ran because forge continued the session, so it is charged first."""
    from forge_runtime.hooks import user_prompt_submit

    session = held_goal(project)  # Stop 1 continued the goal; the met came after its read
    session._append({"type": "assistant", "message": {
        "role": "assistant", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_nap", "name": "Bash", "input": {}}]}})
    session._append({"type": "user", "promptId": session.prompt_id, "message": {
        "role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_nap",
                                     "content": "rejected", "is_error": True}]},
        "toolUseResult": "User rejected tool use"})
    note = session._append({"type": "user", "promptId": session.prompt_id,
                            "rowSource": "harness", "message": {"role": "user", "content": [
                                {"type": "text",
                                 "text": "[Request interrupted by user for tool use]"}]}})
    user_prompt_submit.handle(session.event("UserPromptSubmit", prompt="I will look myself"))
    goal = ledger_goal(project)
    assert (goal["status"], goal["turn_count"]) == ("complete", 2)
    from forge_runtime.goal.store.ledger import Ledger

    charges = [record for record in Ledger(project.ledger_root, goal["nonce"]).history()
               if record["kind"] == "charge"]
    assert (charges[-1]["turn"], charges[-1].get("late")) == (note["uuid"], True)


@pytest.mark.parametrize("sent", [
    {"isMeta": True, "promptSource": "system"},  # ScheduleWakeup, CronCreate (HOST.md)
    {"origin": {"kind": "task-notification"}},  # a background task's notice
    {"origin": {"kind": "task-notification", "subkind": "scheduled-trigger"},
     "promptSource": "typed"},
])
def test_a_prompt_the_host_sent_leaves_a_held_goal_held_and_its_turn_charged(project, sent):
    """Only a person's prompt (the host's record of who sent it) releases a held verdict;
    a scheduled one leaves it held, not ended met-but-unverified with charging stopped."""
    from forge_runtime.hooks import user_prompt_submit

    session = held_goal(project)
    assert model_context(stop_turn(session))
    session.prompt_id = "woken"
    user_prompt_submit.handle(session.event("UserPromptSubmit", prompt="wake up and go on"))
    session._append({"type": "user", "promptId": "woken", **sent,
                     "message": {"role": "user", "content": "wake up and go on"}})
    assert model_context(stop_turn(session))  # still held: forge keeps it going
    goal = ledger_goal(project)
    assert (goal["status"], goal["turn_count"]) == ("active", 3)  # its turn charged
    assert "forge keeps it going" in forge("goal", "status")[1]


def test_a_goal_cleared_while_held_is_cancelled_and_not_continued(project):
    session = held_goal(project)
    assert model_context(stop_turn(session))
    session.verdict(met=True, sentinel=True, condition=OBJECTIVE)  # the person's /goal clear
    assert stop_turn(session) is None
    assert ledger_goal(project)["status"] == "cancelled"


def test_a_goal_without_gates_met_by_the_host_ends_as_before(project):
    (project.root / ".forge/gates.yaml").unlink()
    session = running_goal(project, OBJECTIVE)
    assert stop_turn(session) is None
    session.verdict(met=True, condition=OBJECTIVE, iterations=1)
    after = stop_turn(session)  # a turn after the end that no person started: stopped
    assert after["stopReason"].startswith("FORGE_GOAL_ENDED_TURN: ")
    goal = ledger_goal(project)
    assert (goal["status"], goal["turn_count"], goal["overrun_count"]) == ("complete", 1, 1)


def test_a_gate_failing_the_same_way_for_five_turns_is_stuck_and_its_check_comes_first(
        project):
    session = held_goal(project)
    forge("gate", "run")
    replies = [stop_turn(session) for _ in range(5)]  # turns 2..6: unit-tests fails each time
    warned = [index for index, reply in enumerate(replies)
              if "FORGE_GOAL_STUCK_WARNING: final gate" in
              reply["hookSpecificOutput"]["additionalContext"]]
    assert warned == [4]
    text = replies[4]["hookSpecificOutput"]["additionalContext"]
    assert replies[4]["systemMessage"] == text  # the person hears of it too
    assert "unit-tests has failed the same way for 5 charged turns (6 of 20 used)" in text
    assert text.splitlines()[-3:] == [  # the gate's own check first, the checklist's second
        "Next: forge gate run unit-tests",
        "  after fixing what .forge/local/gates/unit-tests.log shows: nothing it covers "
        "changed since it failed", "Or: forge goal status"]
    write(project.root, "src/parser.py", "parse = 'still wrong'\n")
    forge("gate", "run", "unit-tests")  # fails again, but on other files: a new try
    assert "STUCK" not in model_context(stop_turn(session))


def test_a_held_goal_whose_gates_pass_forges_own_run_is_verified_with_stale_receipts(project):
    session = held_goal(project)
    write(project.root, "src/parser.py", "parse = 'good'\n")
    done = told_the_person(stop_turn(session))  # no receipt is fresh, but forge's own run passes
    assert done.startswith("FORGE_GOAL_VERIFIED: goal ")
    assert ledger_goal(project)["status"] == "complete"
    assert "gates       verified at" in forge("goal", "status")[1]


def test_a_held_goal_whose_recorded_gates_cannot_be_judged_ends_met_but_unverified(project):
    session = held_goal(project)
    write(project.root, ".forge/gates.yaml", FIXABLE.replace("echo docs", "echo other docs"))
    told = told_the_person(stop_turn(session))  # no model turn can fix a person's gates file
    assert "FORGE_GATES_CHANGED" in told and told.splitlines()[-2] == \
        "Fix: /goal the parser passes its tests"
    goal = ledger_goal(project)
    assert (goal["status"], goal["turn_count"]) == ("complete", 2)
    assert "met but unverified" in forge("goal", "status")[1]


def _counting(monkeypatch, *targets) -> Counter:
    """Count the calls of each (module, function name, label) of `targets` from now on."""
    calls: Counter[str] = Counter()
    for module, name, label in targets:
        real = getattr(module, name)

        def call(*args, _real=real, _label=label, **kwargs):
            calls[_label] += 1
            return _real(*args, **kwargs)

        monkeypatch.setattr(module, name, call)
    return calls


def test_a_stop_locates_its_project_and_reads_its_binding_once_and_hands_the_gates_its_goal(
        project, monkeypatch):
    """One pass per Stop: the charge's outcome (project, binding, the goal after the charge)
    goes to the killed-stops check and the final gates, so a Stop of a bound goal with a
    gates file locates the project once, reads the binding once and asks once whether the
    gates are in play, and the gates judge the goal as the charge left it. Fails where
    hooks/stop.py, the charge and gates/goal.after_stop each located the project (3 times),
    after_stop read the binding and the ledger head again and asked again about the gates."""
    from forge_runtime import gates
    from forge_runtime.gates import goal as gates_goal
    from forge_runtime.goal.store import sessions
    from forge_runtime.goal.store.ledger import Ledger

    session = running_goal(project, OBJECTIVE)
    context(stop_turn(session))  # the goal's first Stop: bound, and its gates told
    calls = _counting(monkeypatch, (sessions, "project_for", "locate"),
                      (sessions, "read_binding", "binding"), (gates, "in_play", "in play"))
    handed = []
    real_after_stop = gates_goal.after_stop

    def after_stop(event, outcome):
        handed.append(outcome)
        return real_after_stop(event, outcome)

    monkeypatch.setattr(gates_goal, "after_stop", after_stop)
    assert "FORGE_GATES_NOT_FRESH" in model_context(stop_turn(session))
    assert (calls["locate"], calls["binding"], calls["in play"]) == (1, 1, 1)
    monkeypatch.undo()
    nonce = sessions.read_binding(project.ledger_root, session.id)["nonce"]
    after = Ledger(project.ledger_root, nonce).current().goal
    assert after["turn_count"] == 2
    assert [outcome.goal for outcome in handed] == [after]


def test_a_session_end_locates_its_project_and_reads_its_binding_once(project, monkeypatch):
    """One pass per SessionEnd: the catch-up hands its project and binding to the missed
    notices and the final gates, so the project is located once and the session's binding
    read once, beside the read of every binding of the goal that finds the sessions whose
    turns are owed (`catch_up_sessions`). Fails where the catch-up, tell_missed, the hook and
    note_if_met each located the project (4 times) and read the binding (5 reads in all)."""
    from forge_runtime.goal.store import sessions

    session = running_goal(project, OBJECTIVE)
    context(stop_turn(session))
    calls = _counting(monkeypatch, (sessions, "project_for", "locate"),
                      (sessions, "read_binding", "binding"))
    assert session_end.handle(session.event("SessionEnd", reason="other")) is None
    assert (calls["locate"], calls["binding"]) == (1, 2)
