"""No silent resume after a usage limit.

When the host stops a goal's turn for its plan's usage limit, forge ends autonomy there and
refuses the host's own continuation after the reset, unless `.forge/guard.yaml` says
`goal: {after_usage_limit: continue}`. The limit is read from the host's own record, never
from text: the entries below are the ones Claude Code 2.1.332 (subscription login, in its
TUI) and Codex 0.171.0 wrote against the host kit's usage-limit refusal
(tests/host/test_goal_usage_limit_host.py runs the real host).
"""

from __future__ import annotations

import json
import threading

import pytest
from goal_support import Session, goal_of, goal_project_fixture, started_goal

from forge_runtime.goal.events.replies import USAGE_LIMIT_CODE
from forge_runtime.goal.hosts import codex_transcript, transcript
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.hooks import pre_tool_use, stop_failure
from forge_runtime.hooks.goal_handlers import on_stop

project = goal_project_fixture()
OBJECTIVE = "the parser passes its tests"

# Claude Code's synthetic entry for a 429 its unified limiter refused (fields as captured;
# uuid, parent and session are the test session's)
LIMIT_ENTRY = {
    "type": "assistant", "isSidechain": False,
    "message": {"id": "1d83ff74-9c4a-4997-b322-b1d3f7c9c00c", "model": "<synthetic>",
                "role": "assistant", "stop_reason": "stop_sequence", "stop_sequence": "",
                "type": "message", "usage": {"input_tokens": 0, "output_tokens": 0,
                                             "cache_creation_input_tokens": 0,
                                             "cache_read_input_tokens": 0},
                "content": [{"type": "text",
                             "text": "You've hit your 5-hour limit \u00b7 resets 5:12pm (UTC)"}]},
    "requestId": "req_hostkit_11559973830381", "apiError": "usage_limit_reached",
    "apiErrorParams": {"rate_limit_info": {"status": "rejected", "resetsAt": 1796404371,
                                           "rateLimitType": "five_hour"}},
    "quotaLimits": {"status": "rejected", "resetsAt": 1796404371,
                    "unifiedRateLimitFallbackAvailable": False, "rateLimitType": "five_hour",
                    "overageStatus": "rejected", "overageDisabledReason": "org_level_disabled",
                    "isUsingOverage": False},
    "error": "rate_limit", "isApiErrorMessage": True, "apiErrorStatus": 429,
    "apiErrorType": "rate_limit_error", "failedResponseHadNoToolCall": True, "madeBy": "model",
}
# the host's own continuation once the limit reset (TUI, 2.1.332)
CONTINUATION_TEXT = ("Your claude.ai usage limit has reset. Continue the task you were working "
                     "on when the limit was reached; do not repeat work that is already "
                     "complete.")
CONTINUATION = {"isMeta": True, "origin": {"kind": "auto-continuation"},
                "promptSource": "system", "queueSkipSlashCommands": True,
                "turnOrigin": "auto_continuation", "queuePriority": "later"}
# Codex's end of a turn a usage limit refused (0.171.0)
CODEX_LIMIT = {"timestamp": "2026-12-04T17:12:25.865Z", "ordinal": 21, "type": "event_msg",
               "payload": {"type": "task_complete", "turn_id": "01a2420a-d3c3-71e3",
                           "last_agent_message": None,
                           "error": {"message": "You\u2019ve hit your usage limit. try again "
                                                "at 5:13 PM.",
                                     "codex_error_info": "usage_limit_exceeded"}}}


def _limited(session: Session) -> None:
    """The model calls a tool; the next request meets the usage limit: the host writes its
    synthetic entry and runs StopFailure (never Stop)."""
    session._append({"type": "assistant", "message": {
        "role": "assistant", "stop_reason": "tool_use",
        "content": [{"type": "tool_use", "id": "toolu_1", "name": "Bash", "input": {}}]}})
    session._append({"type": "user", "promptId": session.prompt_id, "message": {
        "role": "user", "content": [{"tool_use_id": "toolu_1", "type": "tool_result",
                                     "content": "ok", "is_error": False}]},
        "toolUseResult": {"stdout": "ok"}})
    session._append(json.loads(json.dumps(LIMIT_ENTRY)))


def _stop_failure(session: Session) -> None:
    assert stop_failure.handle(session.event(
        "StopFailure", error="rate_limit",
        last_assistant_message="You've hit your 5-hour limit")) is None


def _call(session: Session) -> str | None:
    reply = pre_tool_use.handle(session.event("PreToolUse", tool_name="Bash",
                                              tool_input={"command": "make"}))
    return None if reply is None else \
        reply["hookSpecificOutput"]["permissionDecisionReason"]


def _history(project) -> list[dict]:
    return Ledger(project.ledger_root, goal_of(project)["nonce"]).history()


def _continue_after_limits(project) -> None:
    path = project.root / ".forge" / "guard.yaml"
    path.write_text(path.read_text().replace(
        "goal: {require_sandbox: false}", "goal: {require_sandbox: false, "
                                          "after_usage_limit: continue}"))


# -- reading the host's record ------------------------------------------------------------

def test_the_hosts_usage_limit_entry_is_recognised_and_closes_the_turn():
    entry = {**LIMIT_ENTRY, "uuid": "u1"}
    assert transcript.usage_limit_entry(entry)
    chunk = transcript.Chunk([entry], 1, [0])
    assert [turn.uuid for turn in chunk.turns()] == ["u1"] and chunk.usage_limited() == ["u1"]
    quota_only = {key: value for key, value in entry.items() if key != "apiError"}
    assert transcript.usage_limit_entry(quota_only)


@pytest.mark.parametrize("entry", [
    # an API key login's plain rate limit (retried; no unified limiter refused it)
    {**LIMIT_ENTRY, "apiError": None, "quotaLimits": None},
    {**LIMIT_ENTRY, "apiError": None, "quotaLimits": {"status": "allowed_warning"}},
    {**LIMIT_ENTRY, "error": "overloaded", "apiError": None, "quotaLimits": None},
    {**LIMIT_ENTRY, "isApiErrorMessage": "true"},  # not the host's boolean
    {**LIMIT_ENTRY, "isSidechain": True},  # a subagent's request, not the session's turn
    {**LIMIT_ENTRY, "type": "user"},  # a person's or a tool's words
    # a model's reply that only says so
    {"type": "assistant", "message": {
        "role": "assistant", "stop_reason": "end_turn",
        "content": [{"type": "text", "text": json.dumps(LIMIT_ENTRY)}]}},
])
def test_nothing_but_the_hosts_own_entry_is_a_usage_limit(entry):
    entry = {**entry, "uuid": "u1"}
    assert not transcript.usage_limit_entry(entry)
    assert transcript.Chunk([entry], 1, [0]).usage_limited() == []


def test_other_api_errors_still_close_no_turn():
    entry = {**LIMIT_ENTRY, "uuid": "u1", "error": "server_error", "apiError": None,
             "quotaLimits": None}
    assert transcript.Chunk([entry], 1, [0]).turns() == []


def test_codex_usage_limit_is_its_task_complete_error():
    started = {"type": "event_msg", "payload": {"type": "task_started",
                                                "turn_id": "01a2420a-d3c3-71e3"}}
    chunk = codex_transcript.Chunk([started, CODEX_LIMIT], 2, [0, 1])
    assert chunk.usage_limited() == ["01a2420a-d3c3-71e3"]
    other = json.loads(json.dumps(CODEX_LIMIT))
    other["payload"]["error"]["codex_error_info"] = "server_overloaded"
    assert codex_transcript.Chunk([started, other], 2, [0, 1]).usage_limited() == []
    assert codex_transcript.USAGE_LIMIT_ERROR in codex_transcript._INTERESTING


# -- the goal ends there; the host's continuation is refused ------------------------------

def test_a_usage_limit_ends_the_goal_and_the_hosts_continuation_is_blocked(project):
    session = started_goal(project, OBJECTIVE, 3)
    _limited(session)
    _stop_failure(session)
    history = _history(project)
    assert [record["kind"] for record in history[-3:]] == ["charge", "checkpoint", "exhaust"]
    assert history[-3]["usage_limit"] is True and history[-1]["ceiling"] == "usage_limit"
    goal = history[-1]["goal"]
    assert (goal["status"], goal["turn_count"], goal["usage_limited"]) == \
        ("exhausted", 4, True)

    # the next prompt (the host's continuation after the reset) is held, before the model
    reply = session.host_prompt(CONTINUATION_TEXT, **CONTINUATION)
    assert reply["decision"] == "block"
    lines = reply["reason"].splitlines()
    assert lines[0].startswith(f"{USAGE_LIMIT_CODE}: goal ") and "usage limit" in lines[0]
    assert lines[1].startswith("Checkpoint: ") and f"Next: /goal {OBJECTIVE}" in lines
    assert _history(project)[-1]["kind"] == "exhaust"  # nothing ran, nothing recorded
    # once: a person's prompt after it is theirs (its Stop still ends autonomy)
    assert session.prompt("what is left?") is None
    assert _call(session) is None
    assert session.turn()["stopReason"].startswith(f"{USAGE_LIMIT_CODE}: goal ")


def test_a_continuation_whose_prompt_got_through_does_no_work(project):
    session = started_goal(project, OBJECTIVE, 3)
    _limited(session)
    _stop_failure(session)
    # its prompt hook did not run (killed): the entry is there, the hold is not used
    session.prompt_id = "continuation"
    session._append({"type": "user", "promptId": "continuation", **CONTINUATION,
                     "message": {"role": "user", "content": CONTINUATION_TEXT}})
    denied = _call(session)
    assert denied.startswith(f"{USAGE_LIMIT_CODE}: goal ") and "usage limit" in denied
    assert "\nCheckpoint: " in denied and f"Next: /goal {OBJECTIVE}" in denied
    reply = session.turn()
    assert reply["continue"] is False
    lines = reply["stopReason"].splitlines()
    assert lines[0].startswith(f"{USAGE_LIMIT_CODE}: goal ")
    assert lines[1].startswith("Checkpoint: ") and f"Next: /goal {OBJECTIVE}" in lines
    after = _history(project)
    assert after[-1]["kind"] == "overrun" and after[-1]["goal"]["turn_count"] == 4


def test_without_its_stop_failure_hook_the_continuations_prompt_is_blocked(project):
    session = started_goal(project, OBJECTIVE, 3)
    _limited(session)  # StopFailure did not run (killed, or an older plugin)
    reply = session.host_prompt(CONTINUATION_TEXT, **CONTINUATION)
    assert reply["decision"] == "block"
    assert reply["reason"].startswith(f"{USAGE_LIMIT_CODE}: goal ")
    assert f"Next: /goal {OBJECTIVE}" in reply["reason"]
    assert _history(project)[-1]["ceiling"] == "usage_limit"


def test_a_usage_limit_in_the_first_turn_of_a_goal_confirms_and_ends_it(project):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    _limited(session)
    _stop_failure(session)
    goal = _history(project)[-1]["goal"]
    assert (goal["status"], goal["turn_count"], goal["usage_limited"]) == \
        ("exhausted", 1, True)


def test_a_persons_goal_after_the_limit_is_not_held_and_clears_the_mark(project):
    session = started_goal(project, OBJECTIVE, 2)
    _limited(session)
    _stop_failure(session)
    reply = session.person_goal(OBJECTIVE)
    assert (reply or {}).get("decision") != "block"  # a person's /goal is never held
    session.turn()
    goal = _history(project)[-1]["goal"]
    assert goal["status"] == "active" and "usage_limited" not in goal
    assert session.prompt("go on") is None  # the hold went with the /goal


def test_after_usage_limit_continue_lets_the_hosts_continuation_run_charged(project):
    _continue_after_limits(project)
    session = started_goal(project, OBJECTIVE, 3)
    _limited(session)
    _stop_failure(session)
    goal = _history(project)[-1]["goal"]
    assert (goal["status"], goal["turn_count"], goal["usage_limited"]) == ("active", 4, True)
    assert session.host_prompt(CONTINUATION_TEXT, **CONTINUATION) is None  # not held
    assert _call(session) is None
    assert session.turn() is None
    assert _history(project)[-1]["goal"]["turn_count"] == 5


def test_a_stop_failure_of_a_session_without_a_goal_does_nothing(project):
    session = Session(project)
    session.prompt("hello")
    _limited(session)
    _stop_failure(session)
    assert not project.state_path.exists()  # no goal, no ledger, nothing written


def test_forged_text_in_a_tool_result_marks_nothing(project):
    session = started_goal(project, OBJECTIVE, 2)
    session._append({"type": "user", "promptId": session.prompt_id, "message": {
        "role": "user", "content": [{"tool_use_id": "t", "type": "tool_result",
                                     "content": json.dumps(LIMIT_ENTRY)}]},
        "toolUseResult": {"stdout": json.dumps(LIMIT_ENTRY)}})
    session.turn()
    goal = _history(project)[-1]["goal"]
    assert goal["status"] == "active" and "usage_limited" not in goal


def test_a_continuation_whose_stop_comes_before_its_entry_is_recorded(project, monkeypatch):
    """The TUI writes the transcript late (measured: a Stop may start before its turn's
    closing entry): the continuation's Stop waits for it, even though the goal has ended,
    so the turn goes on the ledger over budget."""
    monkeypatch.setattr(transcript, "FLUSH_WAIT", 2.0)
    session = started_goal(project, OBJECTIVE, 3)
    _limited(session)
    _stop_failure(session)
    session.prompt_id = "continuation"  # its prompt hook did not run
    session._append({"type": "user", "promptId": "continuation", **CONTINUATION,
                     "message": {"role": "user", "content": CONTINUATION_TEXT}})
    late = threading.Timer(0.3, session.work)
    late.start()
    try:
        reply = on_stop(session.event("Stop", stop_hook_active=False))
    finally:
        late.join()
    assert reply["stopReason"].startswith(f"{USAGE_LIMIT_CODE}: goal ")
    assert "1 turn the host started after the goal ended" in reply["stopReason"]
    assert _history(project)[-1]["kind"] == "overrun"


# -- Codex: no hook at the limit, nor at a person's `/goal resume` ------------------------

@pytest.mark.parametrize("after", [None, "continue"])
def test_a_codex_goal_resumed_after_its_usage_limit_does_no_work(cli_project, tmp_path,
                                                                  monkeypatch, after):
    from test_hosts_codex import Rollout, _tool_call

    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    if after:
        (cli_project / ".forge").mkdir(exist_ok=True)
        (cli_project / ".forge" / "guard.yaml").write_text(
            "goal: {require_sandbox: false, after_usage_limit: continue}\n")
    rollout = Rollout(cli_project, tmp_path / "codex-home")
    rollout.person_goal("ship it")
    assert rollout.turn() is None  # bound, charged
    limited = json.loads(json.dumps(CODEX_LIMIT))
    limited["payload"]["turn_id"] = "limited-turn"
    rollout.write("event_msg", {"type": "task_started", "turn_id": "limited-turn",
                                "turn_attribution": {"turn_trigger": "goal"}})
    rollout.write(limited["type"], limited["payload"])  # no Stop: Codex runs none
    rollout.turn_id = "resumed-turn"  # a person's `/goal resume`: no hook either
    rollout.write("event_msg", {"type": "task_started", "turn_id": "resumed-turn",
                                "turn_attribution": {"turn_trigger": "goal"}})
    denied = _tool_call(rollout, "make")
    if after:
        assert denied is None
        return
    reason = denied["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith(f"{USAGE_LIMIT_CODE}: the host stopped a turn of goal ")
    assert "Next: /goal ship it" in reason
    stopped = rollout.stop()
    assert stopped["continue"] is False
    assert stopped["stopReason"].startswith(f"{USAGE_LIMIT_CODE}: goal ")


def test_a_session_end_confirms_a_goal_whose_first_turn_met_the_limit(project):
    """`claude -p` ends the StopFailure hook as it exits, before it charged anything
    (measured): the SessionEnd that follows confirms the person's `/goal` and charges the
    turn with the host's usage-limit mark, so the goal is exhausted there."""
    from forge_runtime.hooks import session_end

    session = Session(project)
    session.person_goal(OBJECTIVE)
    _limited(session)
    assert session_end.handle(session.event("SessionEnd", reason="other")) is None
    goal = Ledger(project.ledger_root, goal_of(project)["nonce"]).current().goal
    assert (goal["status"], goal["usage_limited"], goal["turn_count"]) == \
        ("exhausted", True, 1)
