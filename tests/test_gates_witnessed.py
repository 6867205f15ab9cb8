"""Hostile writes to a goal's gates record: an agent whose Bash reaches the ledger's
directory (an unsandboxed posture: a script the guard cannot read) edits, replaces or
deletes `<ledger root>/gates/<nonce>.json` to be called verified or continued uncharged.
Each is run for real through forge's hook entry points and CLI, and each fails closed."""

from __future__ import annotations

import json
import os

import pytest
from goal_support import Session, gates_project, running_goal
from goal_support import stop_turn as turn
from test_gates import forge, forge_json, write
from test_gates_goal import GATES, OBJECTIVE, held_goal, ledger_goal, model_context

from forge_runtime.hooks import session_end, stop, user_prompt_submit


@pytest.fixture
def project(tmp_path, monkeypatch):
    return gates_project(tmp_path, monkeypatch, GATES, "parse = None\n")

TAMPERED = "Error: FORGE_GOAL_LEDGER_TAMPERED: goal "
FIX = "Fix: forge goal verify-gates"


def record_path(project) -> str:
    return os.path.join(project.ledger_root, "gates", f"{ledger_goal(project)['nonce']}.json")


def edit_record(project, change) -> None:
    """What an agent's `python3 x.py` does to the record: forge is not involved."""
    path = record_path(project)
    with open(path, encoding="utf-8") as handle:
        record = json.load(handle)
    change(record)
    with open(path, "w", encoding="utf-8") as handle:
        json.dump(record, handle)


def ended_tampered(reply: dict | None) -> str:
    """The Stop reply ends autonomy, naming the tampering and the way on, one hint last."""
    assert reply is not None and reply["continue"] is False and "hookSpecificOutput" not in reply
    lines = reply["stopReason"].splitlines()
    assert lines[-2].startswith(TAMPERED) and "gates record" in lines[-2]
    assert lines[-1] == FIX
    return reply["stopReason"]


def test_a_forged_passing_run_of_forges_own_never_verifies_the_goal(project):
    session = held_goal(project)
    model_context(turn(session))  # forge's own run: unit-tests failed

    def passed(record):
        record["confirmed"]["passed"] = True
        for result in record["confirmed"]["results"].values():
            result["verdict"] = "passed"

    edit_record(project, passed)
    ended_tampered(turn(session))
    goal = ledger_goal(project)
    assert (goal["status"], goal["turn_count"]) == ("active", 3)  # charged, not completed
    code, text = forge("goal", "status")
    assert code == 2 and TAMPERED in text and text.rstrip().endswith(FIX)


def test_a_forged_verified_met_is_not_shown_as_verified(project):
    session = held_goal(project)
    model_context(turn(session))

    def verified(record):
        record["met"] = {"at": "2026-01-01T00:00:00Z", "verified": True, "why": "mine"}
        record["verified_at"] = "2026-01-01T00:00:00Z"

    edit_record(project, verified)
    # the prompt hook cannot tell who sent a prompt, so the held goal is not released there
    # (tests/test_gates_goal.py); the Stop of the turn the person's prompt started reads the
    # record to release it, and finds it forged
    user_prompt_submit.handle(session.event("UserPromptSubmit", prompt="stop"))
    session._append({"type": "user", "promptId": "typed", "promptSource": "typed",
                     "message": {"role": "user", "content": "stop"}})
    ended_tampered(turn(session))
    assert "verified at" not in forge("goal", "status")[1]
    assert session_end.handle(session.event("SessionEnd", reason="other")) is None

    code, text = forge("goal", "verify-gates")  # the person's way on: nothing of it kept
    assert code == 2 and "unit-tests failed (exit 1)" in text
    assert "verified at" not in forge("goal", "status")[1]
    write(project.root, "src/parser.py", "parse = 'good'\n")
    code, payload = forge_json("goal", "verify-gates")
    assert code == 0 and payload["dropped"] is None
    assert payload["gates"]["unit-tests"]["verdict"] == "passed"


@pytest.mark.parametrize("body", [
    None,  # deleted: its `continued_at` gone, a repeated Stop would be continued
    b"\xff\xfe not JSON, not UTF-8",
    b"[1, 2]",
    b'{"held": 5, "continued_at": "x", "confirmed": {"results": [1]}}',
    b'{"told": "' + b"x" * (4 << 20) + b'"}',
])
def test_a_record_replaced_deleted_or_garbled_ends_autonomy_with_the_way_on(project, body):
    session = held_goal(project)
    model_context(turn(session))
    path = record_path(project)
    if body is None:
        os.unlink(path)
    else:
        with open(path, "wb") as handle:
            handle.write(body)
    # a repeated Stop (no new turn) and a new turn alike: nothing continues the session
    ended_tampered(stop.handle(session.event("Stop", stop_hook_active=True)))
    ended_tampered(turn(session))
    assert ledger_goal(project)["status"] == "active"


def test_a_hook_killed_between_the_witness_and_the_record_leaves_a_readable_record(project):
    from forge_runtime.gates import witnessed
    from forge_runtime.gates.files import encode
    from forge_runtime.goal.sync.witness import Witness

    session = held_goal(project)
    model_context(turn(session))
    nonce = ledger_goal(project)["nonce"]
    with open(record_path(project), "rb") as handle:
        before = handle.read()
    # the witness took the next write's digest; the record was never replaced
    Witness(project).note_gates_record(nonce, {
        "sha256": witnessed.sha256_hex(encode({"told": []})),
        "previous": witnessed.sha256_hex(before)})
    assert "hookSpecificOutput" in turn(session)  # goes on as before, charged
    assert ledger_goal(project)["turn_count"] == 3


def test_verify_gates_drops_a_record_that_is_not_forges_and_the_goal_goes_on(project):
    session = held_goal(project)
    model_context(turn(session))
    edit_record(project, lambda record: record.pop("continued_at"))
    write(project.root, "src/parser.py", "parse = 'good'\n")
    code, text = forge("goal", "verify-gates")
    assert code == 0
    assert text.startswith(f"dropped: goal {ledger_goal(project)['nonce']}'s gates record is "
                           "not the one forge last wrote")
    assert "unit-tests  passed in" in text
    assert "Wait: the host's evaluator judges the goal met" in text
    # forge's record again, with nothing of the dropped one (its hold neither): the goal is
    # judged as a running one, each turn charged, until the receipts agree with forge's run
    assert "FORGE_GATES_NOT_FRESH" in turn(session)["hookSpecificOutput"]["additionalContext"]
    assert forge("gate", "run")[0] == 0
    assert "hookSpecificOutput" not in turn(session)
    assert ledger_goal(project)["turn_count"] == 4


def test_a_session_not_bound_gets_nothing_from_another_sessions_held_goal(project):
    held = held_goal(project)
    model_context(turn(held))
    with open(record_path(project), "rb") as handle:
        before = handle.read()
    other = Session(project)  # the model's own session, or a person's without a /goal
    other.verdict(met=True, condition=OBJECTIVE, iterations=1)
    assert stop.handle(other.event("Stop", stop_hook_active=False)) is None
    assert turn(other) is None  # stop_hook_active: a Stop hook keeps it going, not forge
    assert user_prompt_submit.handle(other.event("UserPromptSubmit", prompt="hi")) is None
    assert ledger_goal(project)["turn_count"] == 2
    with open(record_path(project), "rb") as handle:
        assert handle.read() == before


def test_a_copy_of_the_record_before_forges_last_write_put_back_is_not_forges(project,
                                                                             monkeypatch):
    from forge_runtime.gates import files

    session = held_goal(project)
    written = []  # what an agent watching the file saw: each of forge's writes of it
    real = files.write_bytes
    monkeypatch.setattr(files, "write_bytes",
                        lambda path, body: (written.append(body), real(path, body)))
    model_context(turn(session))
    assert len(written) >= 2
    with open(record_path(project), "wb") as handle:
        handle.write(written[-2])  # the one before forge's last: an older continued_at
    ended_tampered(stop.handle(session.event("Stop", stop_hook_active=True)))


@pytest.mark.parametrize("case", ["met, gates unrecorded", "impossible"])
def test_a_turn_forge_continued_past_a_verdict_that_ended_the_goal_is_charged(project, case):
    """The host writes a turn's verdict while its Stop hooks run, so forge's reply to that
    Stop may keep the session going one turn after the goal ended (a met forge does not
    hold: the goal recorded no gates; or the evaluator's impossible): forge caused that
    turn, so it is charged."""
    if case == "impossible":
        session = running_goal(project, OBJECTIVE)
    else:
        (project.root / ".forge/gates.yaml").unlink()
        session = running_goal(project, OBJECTIVE)
        assert turn(session) is None
        write(project.root, ".forge/gates.yaml", GATES)  # after the /goal: not recorded
    told = turn(session)["hookSpecificOutput"]["additionalContext"]
    assert ("FORGE_GATES_UNRECORDED" if case != "impossible" else "never-run") in told
    charged = ledger_goal(project)["turn_count"]
    session.verdict(met=False, failed=True, condition=OBJECTIVE) if case == "impossible" \
        else session.verdict(met=True, condition=OBJECTIVE, iterations=2)
    assert turn(session) is None  # the turn forge's context caused; the goal is over
    goal = ledger_goal(project)
    assert goal["status"] == ("cancelled" if case == "impossible" else "complete")
    assert goal["turn_count"] == charged + 1
