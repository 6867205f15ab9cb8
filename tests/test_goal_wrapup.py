"""The wrap-up turn (goal/views/wrapup.py): the model hears FORGE_GOAL_LAST_TURN before it works
a tranche's last turn, by the turn ceiling or by a ceiling its pace reaches within the
turn, and at no other turn. tests/host/test_goal_wrapup_host.py checks the same against
the real Claude Code's model requests."""

from __future__ import annotations

from goal_support import Session, goal_again, goal_of, goal_project_fixture

from forge_runtime.goal.store import sessions
from forge_runtime.goal.store.ledger import Ledger

OBJECTIVE = "the CSV importer handles quoted commas"
LAST = "FORGE_GOAL_LAST_TURN: this is the last turn of the tranche of goal "
WRAP_UP = (". Leave .forge/local/state.md's checklist and a note of where you stopped, "
           "commit nothing half-done.\nNext: forge goal status\n"
           "  the budget left and when it runs out at this pace")

project = goal_project_fixture()


def _told(reply: dict | None) -> str | None:
    """The last-turn notice a Stop's reply gives the model, checked to be what the person
    sees too."""
    context = ((reply or {}).get("hookSpecificOutput") or {}).get("additionalContext") or ""
    if "FORGE_GOAL_LAST_TURN" not in context:
        return None
    assert reply["systemMessage"] == context and "continue" not in reply
    return context


def _guard(project, tranche_yaml: str) -> None:
    (project.root / ".forge" / "guard.yaml").write_text(
        f"goal: {{require_sandbox: false, tranche: {tranche_yaml}}}\n")


def _spending_turn(session: Session, tokens: int) -> dict | None:
    """A turn whose one response spent `tokens` input tokens, and its Stop."""
    session._append({"type": "assistant", "message": {
        "id": f"msg_{session.last_uuid}", "model": "claude-test", "role": "assistant",
        "stop_reason": "end_turn", "usage": {"input_tokens": tokens},
        "content": [{"type": "text", "text": "working"}]}})
    return session.stop()


def test_only_the_stop_before_the_tranches_last_turn_tells_the_model(project):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    replies = [session.turn() for _ in range(20)]
    told = [index for index, reply in enumerate(replies) if _told(reply)]
    assert told == [18]  # the Stop charging turn 19: its context reaches turn 20's request
    nonce = goal_of(project)["nonce"]
    assert _told(replies[18]) == f"{LAST}{nonce}: it is turn 20 of 20{WRAP_UP}"
    assert replies[19]["continue"] is False  # the budget ends it, whatever the model did


def test_a_second_tranche_tells_before_its_own_last_turn(project):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    for _ in range(20):
        session.turn()
    goal_again(session, OBJECTIVE)  # charges turn 21
    replies = [session.turn() for _ in range(19)]
    assert [21 + index + 1 for index, reply in enumerate(replies) if _told(reply)] == [39]
    assert "it is turn 40 of 40" in _told(replies[-2])


def test_a_repeated_stop_says_nothing_more(project):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    for _ in range(18):
        session.turn()
    assert _told(session.turn())
    assert session.stop() is None  # the host answers model context with another request


def test_a_token_ceiling_reached_within_one_turn_at_pace_makes_it_the_last(project):
    _guard(project, "{tokens: 3500}")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    # 1,000 tokens a turn: 2,500 and 1,500 left are more than a turn's; 500 is not
    assert [_told(_spending_turn(session, 1000)) for _ in range(2)] == [None, None]
    told = _told(_spending_turn(session, 1000))
    assert told == (f"{LAST}{goal_of(project)['nonce']}: at this goal's pace (about 1k tokens "
                    "a turn) its token ceiling (3k of 3.5k used) is reached within it"
                    f"{WRAP_UP}")
    assert _spending_turn(session, 1000)["continue"] is False


def test_a_persons_prompt_that_starts_the_last_turn_carries_the_notice(project):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    for _ in range(9):
        session.turn()
    assert session.prompt("how is it going?") is None  # it starts turn 10
    for _ in range(10):
        session.turn()
    reply = session.prompt("wrap up cleanly please")
    context = reply["hookSpecificOutput"]
    assert context["hookEventName"] == "UserPromptSubmit"
    assert context["additionalContext"].startswith(LAST)
    assert "it is turn 20 of 20" in context["additionalContext"]


def test_the_stuck_warning_and_the_notice_come_as_one_message_with_one_hint(project):
    _guard(project, "{tokens: 11500}")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    replies = [_spending_turn(session, 1000) for _ in range(11)]
    told = _told(replies[10])  # 10 turns unchanged, and 500 tokens left at 1k a turn
    assert told.startswith("FORGE_GOAL_STUCK_WARNING: the checklist and next step")
    lines = told.splitlines()
    assert lines[1].startswith(LAST)
    assert [line for line in lines if line.startswith(("Next:", "Or:"))] == \
        ["Next: forge goal status"]
    assert not any(_told(reply) for reply in replies[:10])


def test_the_session_notes_where_the_tranche_starts_once(project, monkeypatch):
    from forge_runtime.goal.views import tranche

    session = Session(project)
    session.person_goal(OBJECTIVE)
    for _ in range(3):
        session.turn()
    binding = sessions.read_binding(project.ledger_root, session.id)
    ledger = Ledger(project.ledger_root, goal_of(project)["nonce"])
    assert ledger.record_at(binding[tranche.SEQ_KEY])["kind"] == "activate"
    walked = []
    real = Ledger.previous
    monkeypatch.setattr(Ledger, "previous",
                        lambda self, record: walked.append(record["seq"]) or real(self, record))
    session.turn()
    assert walked == []  # the noted start is read, not walked to


def test_what_a_stop_says_after_its_charge_reads_no_head_again(project, monkeypatch):
    """The last-turn check takes the head the Stop's charge left instead of reading the
    ledger again (its lock, pointer, last record and audit link), and the notice still
    comes at turn 19's Stop. Fails where wrapup.closing read `Ledger.current()` after the
    charge."""
    session = Session(project)
    session.person_goal(OBJECTIVE)
    for _ in range(18):
        session.turn()
    steps = []
    real_head, real_append = Ledger.head, Ledger.append

    def head(ledger):
        steps.append("head")
        return real_head(ledger)

    def append(ledger, *args, **kwargs):
        steps.append("append")
        return real_append(ledger, *args, **kwargs)

    monkeypatch.setattr(Ledger, "head", head)
    monkeypatch.setattr(Ledger, "append", append)
    assert _told(session.turn()) is not None  # turn 19's Stop: the wrap-up notice, as before
    assert steps[-1] == "append" and "head" in steps
