"""A turn a person's interrupt ended is charged, once, as a turn of its own.

An Esc during a tool call, or before the model answered, fires no Stop and writes no reply
that closes the turn: the host writes its own note (`[Request interrupted by user for tool
use]`, `rowSource: "harness"`), and Claude Code 2.1.337 fires the Interrupt hook, before
its TUI has written that note. The entries below are the ones both 2.1.332 and 2.1.337
wrote (tests/host/test_goal_interrupt_host.py runs the real host).
"""

from __future__ import annotations

import threading
import time

from goal_support import Session, goal_of, goal_project_fixture, started_goal

from forge_runtime.goal.hosts import transcript
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.hooks import interrupt

project = goal_project_fixture()
OBJECTIVE = "the parser passes its tests"
TOOL_USE = "[Request interrupted by user for tool use]"
NO_ANSWER = "[Request interrupted by user]"


def _charges(project) -> list[dict]:
    ledger = Ledger(project.ledger_root, goal_of(project)["nonce"])
    return [record for record in ledger.history() if record["kind"] == "charge"]


def _tool_call(session: Session) -> str:
    """The model asks for a tool; the person presses Esc while it runs: the host writes the
    rejected call's result (no note yet)."""
    asked = session._append({"type": "assistant", "message": {
        "role": "assistant", "stop_reason": "tool_use",
        "usage": {"input_tokens": 100, "output_tokens": 20},
        "content": [{"type": "tool_use", "id": "toolu_nap", "name": "Bash", "input": {}}]}})
    session._append({"type": "user", "promptId": session.prompt_id, "message": {
        "role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_nap",
                                     "content": "The user doesn't want to proceed with this "
                                                "tool use.", "is_error": True}]},
        "toolUseResult": "User rejected tool use", "toolDenialKind": "user-rejected"})
    return asked["uuid"]


def _note(session: Session, text: str = TOOL_USE) -> str:
    return session._append({"type": "user", "promptId": session.prompt_id,
                            "rowSource": "harness",
                            "message": {"role": "user",
                                        "content": [{"type": "text", "text": text}]}})["uuid"]


def _interrupt(session: Session) -> None:
    assert interrupt.handle(session.event("Interrupt", source="user", reason="stop",
                                          via="terminal")) is None


def test_the_interrupt_charges_the_interrupted_turn_at_once_not_late(project):
    session = started_goal(project, OBJECTIVE, 1)
    session.continuation()
    _tool_call(session)
    note = _note(session)
    _interrupt(session)
    charges = _charges(project)
    assert [record["turn"] for record in charges][-1] == note
    assert not charges[-1].get("late") and charges[-1]["usage"]["counted"] == 120
    assert goal_of(project)["turn_count"] == 2

    session.prompt("go on, please")  # the person's next prompt: nothing more to charge
    assert goal_of(project)["turn_count"] == 2
    assert session.turn() is None
    assert goal_of(project)["turn_count"] == 3  # the person's own turn, its own charge


def test_the_interrupt_waits_for_the_note_the_tui_writes_after_it(project, monkeypatch):
    """Measured (2.1.337, TUI): the Interrupt hook starts before the host has written the
    rejected call's result and its note (0-0.2 s later)."""
    monkeypatch.setattr(transcript, "FLUSH_WAIT", 2.0)  # the real wait, not the tests' own
    session = started_goal(project, OBJECTIVE, 1)
    session.continuation()
    _tool_call(session)
    late = threading.Timer(0.3, _note, (session,))
    late.start()
    started = time.monotonic()
    _interrupt(session)
    late.join()
    assert time.monotonic() - started < 1.0  # as soon as the note is there
    assert goal_of(project)["turn_count"] == 2
    assert not _charges(project)[-1].get("late")


def test_an_esc_before_any_answer_still_ends_a_turn_that_is_charged(project):
    session = started_goal(project, OBJECTIVE, 1)
    session.continuation()  # the goal loop's next request, which never got an answer
    note = _note(session, NO_ANSWER)
    _interrupt(session)
    assert [record["turn"] for record in _charges(project)][-1] == note
    assert goal_of(project)["turn_count"] == 2


def test_without_the_interrupt_hook_the_next_prompt_charges_the_turn_late(project):
    """A host that has no Interrupt event (2.1.332): the interrupted turn is still a turn
    of its own, charged late by the next event, never folded into the person's turn."""
    session = started_goal(project, OBJECTIVE, 1)
    session.continuation()
    _tool_call(session)
    note = _note(session)
    session.prompt("go on, please")
    charges = _charges(project)
    assert (charges[-1]["turn"], charges[-1].get("late")) == (note, True)
    assert charges[-1]["usage"]["counted"] == 120
    assert session.turn() is None
    assert goal_of(project)["turn_count"] == 3


def test_a_note_after_a_turn_its_reply_closed_closes_nothing_more(project):
    session = started_goal(project, OBJECTIVE, 1)
    session.continuation()
    session.work()  # the reply closed the turn; the person's Esc came after it
    _note(session, NO_ANSWER)
    assert session.stop() is None
    assert goal_of(project)["turn_count"] == 2
    _interrupt(session)
    session.prompt("go on, please")
    assert goal_of(project)["turn_count"] == 2


def test_an_esc_in_the_goals_first_turn_confirms_the_goal_and_charges_that_turn(project):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    _tool_call(session)
    note = _note(session)
    _interrupt(session)
    goal = goal_of(project)
    assert (goal["status"], goal["turn_count"]) == ("active", 1)
    assert [record["turn"] for record in _charges(project)] == [note]


def test_a_person_who_types_the_notes_words_writes_a_prompt_not_a_note(project):
    session = started_goal(project, OBJECTIVE, 1)
    session.continuation()
    session.prompt(TOOL_USE)  # typed: no `rowSource` of the host's
    chunk = transcript.read_since(str(session.transcript), 0)
    typed = chunk.entries[-1]
    assert not transcript.interruption_note(typed)
    assert transcript.prompt_origin(typed) == transcript.PERSON
    assert len(chunk.entries) - 1 not in [turn.index for turn in chunk.turns()]


def test_the_note_is_no_prompt_of_the_person(project):
    session = started_goal(project, OBJECTIVE, 1)
    session.continuation()
    _tool_call(session)
    _note(session)
    chunk = transcript.read_since(str(session.transcript), 0)
    assert transcript.interruption_note(chunk.entries[-1])
    assert transcript.prompt_origin(chunk.entries[-1]) is None
    origins, _ = chunk.turn_origins()
    # the goal loop's continuation of the person's /goal: its prompt's, as any continuation
    assert origins[chunk.entries[-1]["uuid"]] == transcript.PERSON


def test_an_interrupt_in_a_session_without_a_goal_writes_nothing(project):
    session = Session(project)
    session.prompt("tidy up the README")
    _tool_call(session)
    _note(session)
    before = sorted(project.root.rglob("*"))
    _interrupt(session)
    assert sorted(project.root.rglob("*")) == before
