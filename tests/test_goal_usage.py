"""What each goal turn spent, from transcripts Claude Code 2.1.332 wrote (tests/data), and
the token and time ceilings of `.forge/guard.yaml` (usage.py, charging.py, ledger.py)."""

from __future__ import annotations

import json
import shutil
import threading
from pathlib import Path

import pytest
from goal_support import (
    Session,
    assert_transition,
    crossing_in_two_turns,
    goal_again,
    goal_project_fixture,
    running_goal,
)

from forge_runtime.goal.budget import usage
from forge_runtime.goal.budget.ceilings import epoch
from forge_runtime.goal.events.catch_up import tokens_of_turns
from forge_runtime.goal.hosts import transcript
from forge_runtime.goal.rules import activation
from forge_runtime.goal.store import layout, sessions, state_file
from forge_runtime.goal.store.ledger import TAMPERED, Ledger, check_transition
from forge_runtime.goal.views import gauge

DATA = Path(__file__).parent / "data"
SESSION = DATA / "claude-code-2.1.332-agent-session.jsonl"
OBJECTIVE = "the parser passes its tests"
# the host test's scripted model (tests/host/test_goal_tokens.py): per turn, the main
# session's two responses and its subagent's two
MAIN_TURN = {"input": 500, "output": 50, "cache_creation": 27, "cache_read": 1500}
SUBAGENT = {"input": 9000, "output": 90, "cache_creation": 23, "cache_read": 17000}


def _entries(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def test_one_response_split_over_entries_is_counted_once():
    entries = _entries(SESSION)
    split = [entry for entry in entries if entry["type"] == "assistant"]
    assert len(split) == 9 and len({entry["message"]["id"] for entry in split}) == 6
    tally = usage.Tally()
    for entry in entries:
        tally.add_entry(entry)
    assert tally.by_model == {"claude-opus-5-5": {key: 3 * value
                                                  for key, value in MAIN_TURN.items()}}


def test_cache_reads_count_a_tenth():
    assert usage.counted({"m": {"input": 10, "output": 5, "cache_creation": 3,
                                "cache_read": 1009}}) == 10 + 5 + 3 + 100
    assert usage.counted({"a": {"input": 1}, "b": {"output": 2}}) == 3


def test_each_turn_gets_the_responses_since_the_turn_before():
    chunk = transcript.read_since(SESSION)
    tally, spent = usage.Tally(), []
    closing = {turn.index for turn in chunk.turns()}
    for index, entry in enumerate(chunk.entries):
        tally.add_entry(entry)
        if index in closing:
            spent.append(tally.take())
    assert [record["by_model"]["claude-opus-5-5"] for record in spent] == [MAIN_TURN] * 3


def test_a_tally_carried_across_reads_counts_a_half_read_response_once():
    entry = next(entry for entry in _entries(SESSION) if entry["type"] == "assistant")
    first = usage.Tally()
    first.add_entry(entry)
    later = usage.Tally(json.loads(json.dumps(first.state())))  # as the binding keeps it
    later.add_entry(entry)  # the same response's next entry, read at the next event
    assert later.by_model == first.by_model


@pytest.fixture
def helpers(tmp_path) -> Path:
    """A copy of the session's transcript and its subagents' (the host's layout)."""
    main = tmp_path / SESSION.name
    shutil.copy(SESSION, main)
    shutil.copytree(DATA / SESSION.stem, tmp_path / SESSION.stem)
    return main


def test_subagent_transcripts_are_read_once_each_and_their_growth_after(helpers):
    tally, marks = transcript.read_subagents(str(helpers), {})
    assert len(marks) == 3
    assert tally.by_model == {"claude-opus-5-5": {key: 3 * value
                                                  for key, value in SUBAGENT.items()}}
    again, same = transcript.read_subagents(str(helpers), marks)
    assert not again and same == marks
    helper = sorted(Path(usage.subagent_dir(str(helpers))).glob("*.jsonl"))[0]
    response = next(entry for entry in _entries(helper) if entry["type"] == "assistant")
    response["message"]["id"] = "msg_new"
    with helper.open("a") as handle:
        handle.write(json.dumps(response) + "\n")
    grown, _ = transcript.read_subagents(str(helpers), marks)
    assert usage.counted(grown.by_model) == usage.counted(
        {"m": usage.response(response)[2]}) > 0


def test_a_deleted_or_rewritten_subagent_transcript_is_unattributable(helpers):
    _, marks = transcript.read_subagents(str(helpers), {})
    helper = sorted(Path(usage.subagent_dir(str(helpers))).glob("*.jsonl"))[0]
    text = helper.read_text()
    helper.write_text(text.replace('"output_tokens":50', '"output_tokens":40'))
    with pytest.raises(transcript.Unattributable, match="agent-.*: the transcript was rewri"):
        transcript.read_subagents(str(helpers), marks)
    helper.unlink()
    with pytest.raises(transcript.Unattributable, match="missing"):
        transcript.read_subagents(str(helpers), marks)


# -- through the hooks ------------------------------------------------------------------

project = goal_project_fixture()


def _guard(project, text: str) -> None:
    (project.root / ".forge").mkdir(exist_ok=True)
    (project.root / ".forge" / "guard.yaml").write_text(text)


def _spend(session: Session, message_id: str, **tokens) -> None:
    """One response of the model, split over two entries as the host writes it."""
    api = {"input_tokens": tokens.get("input", 0), "output_tokens": tokens.get("output", 0),
           "cache_creation_input_tokens": tokens.get("cache_creation", 0),
           "cache_read_input_tokens": tokens.get("cache_read", 0)}
    for block in ({"type": "text", "text": "working"}, {"type": "tool_use", "id": "t",
                                                        "name": "Bash", "input": {}}):
        session._append({"type": "assistant", "message": {
            "id": message_id, "model": "claude-test", "role": "assistant",
            "stop_reason": "tool_use", "usage": api, "content": [block]}})


def _ledger(project) -> Ledger:
    return Ledger(project.ledger_root, state_file.read(project.state_path).goal["nonce"])


def test_every_charge_carries_its_turns_tokens_and_the_goal_their_sum(project):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    _spend(session, "msg_1", input=1000, output=100, cache_read=5000)
    assert session.turn() is None
    _spend(session, "msg_2", input=10, output=1)
    assert session.turn() is None
    charges = [record for record in _ledger(project).history() if record["kind"] == "charge"]
    assert [record["usage"]["counted"] for record in charges] == [1600, 11]
    assert charges[0]["usage"]["by_model"]["claude-test"]["cache_read"] == 5000
    assert _ledger(project).current().goal["token_count"] == 1611


def test_a_token_ceiling_exhausts_the_tranche_and_a_new_goal_adds_one_more(project):
    _guard(project, "goal: {require_sandbox: false, tranche: {tokens: 1500}}\n")
    session = running_goal(project, OBJECTIVE)
    text = crossing_in_two_turns(session, _spend, {"input": 1000}, {"input": 600})
    assert "used 1.6k of 1.5k tokens (the token ceiling) in 2 turns" in text
    assert "adds one more tranche of 20 turns and 1.5k tokens" in text
    assert session.turn()["continue"] is False  # every later Stop is refused
    assert [r.get("ceiling") for r in _ledger(project).history()
            if r["kind"] == "exhaust"] == ["tokens"]
    goal = goal_again(session, OBJECTIVE)
    assert (goal["status"], goal["token_ceiling"], goal["activation_count"]) == \
        ("active", 3000, 2)


def test_a_time_ceiling_exhausts_the_tranche_at_the_next_charge(project, monkeypatch):
    _guard(project, "goal: {require_sandbox: false, tranche: {minutes: 30}}\n")
    monkeypatch.setattr(activation, "now", lambda: "2020-01-01T00:00:00Z")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    reply = session.turn()
    assert reply["continue"] is False
    assert "of 30 minutes (the time ceiling) of this tranche in 1 turns" in reply["stopReason"]
    assert _ledger(project).history()[-1]["ceiling"] == "minutes"


def test_without_ceilings_usage_is_recorded_and_shown_and_nothing_stops(project):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    for turn in range(3):
        _spend(session, f"msg_{turn}", input=2_000_000)
        assert session.turn() is None
    goal = _ledger(project).current().goal
    assert goal["token_ceiling"] is None and goal["token_count"] == 6_000_000
    # the project opts out of the kernel layer (goal_support): the line says so
    assert gauge.line(goal) == "forge ▰▱▱▱▱▱▱▱▱▱ 3/20 · 6M tok · unsandboxed"


def test_a_deleted_subagent_transcript_stops_the_session_as_tampering(project):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    helpers = Path(usage.subagent_dir(str(session.transcript)))
    helpers.mkdir(parents=True)
    shutil.copy(sorted((DATA / SESSION.stem / "subagents").glob("*.jsonl"))[0],
                helpers / "agent-a1.jsonl")
    assert session.turn() is None
    assert _ledger(project).current().goal["token_count"] == usage.counted({"m": SUBAGENT})
    (helpers / "agent-a1.jsonl").unlink()
    reply = session.turn()
    assert reply["continue"] is False and TAMPERED in reply["stopReason"]
    assert "subagent transcript agent-a1.jsonl is missing" in reply["stopReason"]


# -- the ledger's rules -----------------------------------------------------------------

def _goal(**fields) -> dict:
    return {"nonce": "n" * 32, "objective": "o", "objective_hash": "a" * 64,
            "activation_id": "a1", "activation_count": 1, "turn_count": 0, "turn_ceiling": 20,
            "status": "active", "repository": "r" * 32, "token_count": 0,
            "token_ceiling": 1000, "tranche_tokens": 1000, "minute_ceiling": 60,
            "tranche_started": "2026-01-01T00:00:00Z", **fields}


def _record(kind: str, goal: dict, **fields) -> dict:
    return {"seq": 2, "kind": kind, "at": "2026-01-01T00:10:00Z", "goal": goal, **fields}


BEFORE = {"seq": 1, "kind": "activate", "goal": _goal()}
SPENT = {"by_model": {"m": {"input": 900, "output": 0, "cache_creation": 0,
                            "cache_read": 1000}}, "counted": 1000}


@pytest.mark.parametrize(("record", "why"), [
    (_record("charge", _goal(turn_count=1, token_count=10), turn="t", usage=SPENT),
     "token count"),
    (_record("charge", _goal(turn_count=1, token_count=5),
             turn="t", usage={**SPENT, "counted": 5}), "does not add up"),
    (_record("charge", _goal(turn_count=1), turn="t"), None),
    (_record("bind", _goal(token_ceiling=10**9)), "outside an activation"),
    (_record("bind", _goal(tranche_started="2026-06-01T00:00:00Z")), "outside an activation"),
    (_record("exhaust", _goal(status="exhausted"), ceiling="tokens"), "not a valid step"),
    (_record("exhaust", _goal(status="exhausted"), ceiling="minutes"), "not a valid step"),
    (_record("exhaust", _goal(status="exhausted", token_count=0), ceiling="turns"),
     "not a valid step"),
])
def test_a_record_cannot_forge_spent_tokens_or_move_a_ceiling(record, why):
    assert_transition(BEFORE, record, why)


def test_an_exhaustion_is_valid_only_once_its_ceiling_is_reached():
    at_tokens = {**BEFORE, "goal": _goal(turn_count=3, token_count=1000)}
    check_transition(at_tokens, _record("exhaust", _goal(status="exhausted", turn_count=3,
                                                         token_count=1000), ceiling="tokens"),
                     "n" * 32)
    late = {**_record("exhaust", _goal(status="exhausted"), ceiling="minutes"),
            "at": "2026-01-01T01:00:00Z"}
    check_transition(BEFORE, late, "n" * 32)


def test_record_times_read_without_strptime():
    assert epoch("1970-01-02T00:00:01Z") == 86401
    assert epoch("2024-03-01T00:00:00Z") - epoch("2024-02-28T00:00:00Z") == 2 * 86400


# -- mid-turn: PreToolUse ---------------------------------------------------------------

def _tool_call(session: Session) -> dict | None:
    from forge_runtime.hooks import pre_tool_use

    return pre_tool_use.handle(session.event("PreToolUse", tool_name="Read",
                                             tool_input={"file_path": "a"}))


def test_a_turn_past_the_token_ceiling_is_denied_its_next_tool_call(project):
    _guard(project, "goal: {require_sandbox: false, tranche: {tokens: 1000}}\n")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    _spend(session, "msg_1", input=400)
    assert session.turn() is None  # 400 charged
    _spend(session, "msg_2", input=300)
    assert _tool_call(session) is None  # 700: the call runs
    assert _tool_call(session) is None  # the same bytes are not counted twice
    _spend(session, "msg_3", output=300)
    reply = _tool_call(session)["hookSpecificOutput"]
    assert reply["permissionDecision"] == "deny"
    reason = reply["permissionDecisionReason"]
    assert reason.startswith("FORGE_GOAL_BUDGET_EXHAUSTED: ")
    assert "used 1k of 1k tokens (the token ceiling)" in reason
    assert "forge denies this tool call so the turn ends" in reason
    assert reason.splitlines()[1].startswith("Checkpoint: ")
    # the turn ends; its Stop charges it and ends autonomy
    session._append({"type": "assistant", "message": {"role": "assistant",
                                                      "stop_reason": "end_turn", "content": []}})
    assert session.stop()["continue"] is False
    assert _ledger(project).current().goal["token_count"] == 1000
    assert _tool_call(session) is not None  # nothing more in the turn no person started
    session.prompt("show me the diff")
    assert _tool_call(session) is None  # a person's later work in the session is theirs


def _asking(session: Session, message_id: str, tokens: int, *tool_ids: str) -> dict:
    """One response of `tokens` input tokens asking for the tool calls `tool_ids`."""
    return {"type": "assistant", "message": {
        "id": message_id, "model": "claude-test", "role": "assistant",
        "stop_reason": "tool_use", "content": [
            {"type": "tool_use", "id": ident, "name": "Read", "input": {}} for ident in tool_ids],
        "usage": {"input_tokens": tokens, "output_tokens": 0,
                  "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}}}


def _asked_call(session: Session, tool_use_id: str) -> dict | None:
    from forge_runtime.hooks import pre_tool_use

    return pre_tool_use.handle(session.event("PreToolUse", tool_name="Read",
                                             tool_input={"file_path": "a"},
                                             tool_use_id=tool_use_id))


def test_a_call_whose_response_the_host_writes_late_is_held_to_that_response(project):
    """Measured on Claude Code: PreToolUse starts before the host has written the response
    that asked for the call (two responses late on a loaded machine). The call waits for
    it, so the response that crosses the ceiling stops its own call, not a later one."""
    _guard(project, "goal: {require_sandbox: false, tranche: {tokens: 1000}}\n")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    _spend(session, "msg_1", input=400)
    assert session.turn() is None  # 400 charged
    session._append(_asking(session, "msg_2", 300, "toolu_a", "toolu_b"))
    assert _asked_call(session, "toolu_a") is None  # 700
    assert _asked_call(session, "toolu_b") is None  # its response was read already
    late = threading.Timer(0.2, session._append,
                           args=(_asking(session, "msg_3", 300, "toolu_c"),))
    late.start()
    try:
        reply = _asked_call(session, "toolu_c")
    finally:
        late.join()
    assert reply is not None, "the call ran before the response that crossed was counted"
    assert "used 1k of 1k tokens" in reply["hookSpecificOutput"]["permissionDecisionReason"]


def test_a_subagents_tokens_count_mid_turn_too(project):
    _guard(project, "goal: {require_sandbox: false, tranche: {tokens: 5000}}\n")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    assert session.turn() is None
    assert _tool_call(session) is None
    helpers = Path(usage.subagent_dir(str(session.transcript)))
    helpers.mkdir(parents=True)
    shutil.copy(sorted((DATA / SESSION.stem / "subagents").glob("*.jsonl"))[0],
                helpers / "agent-a1.jsonl")
    reason = _tool_call(session)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "of 5k tokens (the token ceiling)" in reason


def test_a_tranche_out_of_time_is_denied_its_next_tool_call(project, monkeypatch):
    _guard(project, "goal: {require_sandbox: false, tranche: {minutes: 30}}\n")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    assert session.turn() is None
    assert _tool_call(session) is None
    from forge_runtime.goal.budget import ceilings

    monkeypatch.setattr(ceilings, "now", lambda: "2999-01-01T00:00:00Z")
    reason = _tool_call(session)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "minutes (the time ceiling) of this tranche" in reason


def test_without_ceilings_no_tool_call_is_counted_or_denied(project):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    assert session.turn() is None
    _spend(session, "msg_1", input=10**9)
    assert _tool_call(session) is None
    assert sessions_cursor(project, session) is None


def sessions_cursor(project, session):
    from forge_runtime.goal.store import sessions

    return sessions.read_cursor(project.ledger_root, session.id)


# -- Codex: rollout token_count events --------------------------------------------------

CODEX_ROLLOUT = DATA / "codex-0.171.0-goal-rollout.jsonl"


def test_codex_token_count_events_are_each_turns_responses():
    from forge_runtime.goal.hosts import codex_transcript

    chunk = codex_transcript.read_since(CODEX_ROLLOUT)
    found = chunk.responses()
    assert len(found) == len(chunk.turns()) == 20
    assert {model for _, _, model, _ in found} == {"gpt-6.1-sol"}
    assert all(spent == {"input": 100, "output": 20, "cache_creation": 0, "cache_read": 0}
               for _, _, _, spent in found)
    binding: dict = {}
    turns = [turn.uuid for turn in chunk.turns()]
    spent = tokens_of_turns(str(CODEX_ROLLOUT), binding, chunk, turns)
    assert [spent[turn]["counted"] for turn in turns] == [120] * 20


def test_codex_input_includes_its_cached_tokens_and_a_repeated_event_counts_once():
    from forge_runtime.goal.hosts import codex_transcript

    event = {"type": "event_msg", "payload": {"type": "token_count", "info": {
        "total_token_usage": {"input_tokens": 5000},
        "last_token_usage": {"input_tokens": 1000, "cached_input_tokens": 800,
                             "cache_write_input_tokens": 0, "output_tokens": 30,
                             "reasoning_output_tokens": 10}}}}
    ident, spent = codex_transcript.spent_tokens(event)
    assert spent == {"input": 200, "output": 30, "cache_creation": 0, "cache_read": 800}
    tally = usage.Tally()
    tally.add_response(ident, "gpt", spent)
    again = codex_transcript.spent_tokens(json.loads(json.dumps(event)))
    tally.add_response(again[0], "gpt", again[1])
    assert usage.counted(tally.by_model) == 200 + 30 + 80
    assert codex_transcript.spent_tokens({"type": "event_msg", "payload": {
        "type": "token_count", "info": None}}) is None


def test_a_rewritten_usage_entry_in_the_main_transcript_fails_closed(project):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    _spend(session, "msg_1", input=1000)
    session._append({"type": "assistant", "message": {
        "id": "msg_2", "model": "claude-test", "role": "assistant", "stop_reason": "end_turn",
        "usage": {"input_tokens": 4000}, "content": [{"type": "text", "text": "done"}]}})
    assert session.stop() is None
    assert _ledger(project).current().goal["token_count"] == 5000
    text = session.transcript.read_text()
    session.transcript.write_text(text.replace('"input_tokens": 4000', '"input_tokens": 1000'))
    reply = session.turn()
    assert reply["continue"] is False and TAMPERED in reply["stopReason"]
    assert "rewritten" in reply["stopReason"]
    assert _ledger(project).current().goal["token_count"] == 5000


def _closing_turn(session: Session, message_id: str, tokens: int) -> None:
    """A whole turn whose one response spent `tokens` input tokens; no Stop of forge's."""
    session._append({"type": "assistant", "message": {
        "id": message_id, "model": "claude-test", "role": "assistant", "stop_reason": "end_turn",
        "usage": {"input_tokens": tokens}, "content": [{"type": "text", "text": "done"}]}})


def test_turns_owed_past_the_ceiling_bring_their_tokens_to_the_next_tranche(project):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    for _ in range(19):
        reply = session.turn()
        assert reply is None or "continue" not in reply  # a stuck warning at most
    for number, tokens in enumerate((10, 200, 3000)):
        _closing_turn(session, f"msg_{number}", tokens)
    reply = session.stop()
    assert reply["continue"] is False and "2 more ran past the ceiling" in reply["stopReason"]
    assert _ledger(project).current().goal["token_count"] == 10
    session.person_goal(OBJECTIVE)
    session.turn()
    charges = [record for record in _ledger(project).history() if record["kind"] == "charge"]
    assert [record["usage"]["counted"] for record in charges[-3:]] == [200, 3000, 0]
    assert _ledger(project).current().goal["token_count"] == 3210


def test_the_mid_turn_check_sees_a_tranche_another_session_added(project):
    _guard(project, "goal: {require_sandbox: false, tranche: {tokens: 1000}}\n")
    first, second = Session(project), Session(project)
    first.person_goal(OBJECTIVE)
    _closing_turn(first, "msg_a", 100)
    assert first.stop() is None
    second.person_goal(OBJECTIVE)
    _closing_turn(second, "msg_b", 900)
    assert second.stop()["continue"] is False  # 1,000 of 1,000
    second.person_goal(OBJECTIVE)  # a person adds a tranche there: 2,000
    _closing_turn(second, "msg_c", 0)
    assert second.stop() is None
    _spend(first, "msg_d", input=950)  # 1,950 of 2,000 (the first session's binding: 100)
    assert _tool_call(first) is None
    _spend(first, "msg_e", input=50)
    assert "used 2k of 2k tokens" in \
        _tool_call(first)["hookSpecificOutput"]["permissionDecisionReason"]


def test_a_worktree_continues_the_goals_token_count(tmp_path, project):
    """The ledger is one per repository (its git common dir), so a linked work tree's
    session of the same goal starts from the tokens already spent, never from zero."""
    from goal_support import goal_projects

    from forge_runtime.hostkit.projects import add_worktree, init_git_project

    main = init_git_project(tmp_path / "main")
    add_worktree(main, tmp_path / "other")
    here, there = goal_projects(main, tmp_path / "other")
    first = Session(here)
    first.person_goal(OBJECTIVE)
    _spend(first, "msg_here", input=4000, output=100)
    assert first.turn() is None
    second = Session(there)
    second.person_goal(OBJECTIVE)  # the same goal, from the other work tree
    _spend(second, "msg_there", input=1000)
    assert second.turn() is None
    goal = _ledger(there).current().goal
    assert goal["nonce"] == _ledger(here).current().goal["nonce"]
    assert goal["token_count"] == 4100 + 1000


# -- the first turn: ceilings before any Stop confirmed the goal ----------------------------

def test_the_first_turn_is_held_to_the_token_ceiling_before_its_stop(project):
    _guard(project, "goal: {require_sandbox: false, tranche: {tokens: 1000}}\n")
    session = Session(project)
    session._append({"type": "assistant", "message": {  # before the /goal: not its tokens
        "id": "msg_0", "model": "claude-test", "role": "assistant", "stop_reason": "end_turn",
        "usage": {"input_tokens": 5000, "output_tokens": 0}, "content": []}})
    session.person_goal(OBJECTIVE)
    _spend(session, "msg_1", input=600)
    assert _tool_call(session) is None  # 600 of 1,000: the call runs
    _spend(session, "msg_2", input=400)
    reason = _tool_call(session)["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith(f"FORGE_GOAL_BUDGET_EXHAUSTED: the first turn of /goal "
                             f"{OBJECTIVE} used 1k of 1k tokens (the token ceiling) before any "
                             "Stop confirmed the goal")
    assert f"\nNext: /goal {OBJECTIVE}" in reason
    # its Stop activates the goal and charges the whole first turn, which ends it
    session._append({"type": "assistant", "message": {"role": "assistant",
                                                      "stop_reason": "end_turn", "content": []}})
    assert session.stop()["continue"] is False
    goal = _ledger(project).current().goal
    assert (goal["turn_count"], goal["token_count"], goal["status"]) == (1, 1000, "exhausted")


def test_the_first_turn_of_a_new_tranche_is_held_to_what_that_tranche_adds(project):
    _guard(project, "goal: {require_sandbox: false, tranche: {tokens: 1000}}\n")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    _closing_turn(session, "msg_1", 1200)
    assert session.stop()["continue"] is False
    assert _ledger(project).current().goal["status"] == "exhausted"  # 1,200 of 1,000
    session.person_goal(OBJECTIVE)  # one more tranche: the ceiling becomes 2,000
    _spend(session, "msg_2", input=700)
    assert _tool_call(session) is None  # 1,900 of 2,000
    _spend(session, "msg_3", input=100)
    reason = _tool_call(session)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "used 2k of 2k tokens (the token ceiling)" in reason


def test_the_first_turns_clock_starts_at_the_prompt(project, monkeypatch):
    from forge_runtime.goal.budget import ceilings

    _guard(project, "goal: {require_sandbox: false, tranche: {minutes: 30}}\n")
    monkeypatch.setattr(ceilings, "now", lambda: "2026-01-01T10:00:00Z")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    monkeypatch.setattr(ceilings, "now", lambda: "2026-01-01T10:29:59Z")
    assert _tool_call(session) is None
    monkeypatch.setattr(ceilings, "now", lambda: "2026-01-01T10:30:00Z")
    reason = _tool_call(session)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "the first turn of /goal" in reason and "ran 30 of 30 minutes" in reason


def test_a_model_scheduled_goal_leaves_no_restriction_after_its_stop(project):
    _guard(project, "goal: {require_sandbox: false, tranche: {tokens: 1000}}\n")
    session = Session(project)
    session.model_goal("model-made goal")
    _spend(session, "msg_1", input=1500)
    assert _tool_call(session) is not None  # held while pending: it grants nothing
    assert session.turn() is None  # its Stop finds no person's /goal: nothing activates
    _spend(session, "msg_2", input=5000)
    assert _tool_call(session) is None
    assert sessions.involvement(project.ledger_root, session.id) == set()
    left = Path(project.ledger_root) / layout.SESSIONS_DIR
    assert not list(left.glob(f"{session.id}*")), "its notes went with it"


def test_a_pending_note_in_the_tranche_clock_cannot_start_it_later(project):
    later = "2999-01-01T00:00:00Z"
    assert activation.clock_start(later) is None
    assert activation.clock_start("not a time at all!!") is None
    assert activation.clock_start("2020-01-01T00:00:00Z") == "2020-01-01T00:00:00Z"
