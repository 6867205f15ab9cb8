"""What forge reads from the host transcript: a person's /goal, verdicts, turns, offsets."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_runtime.goal.hosts import transcript


def _write(path, *entries, partial: str = ""):
    with path.open("a", encoding="utf-8") as handle:
        for entry in entries:
            handle.write(json.dumps(entry) + "\n")
        handle.write(partial)


def _person_goal(prompt_id: str, objective: str) -> list[dict]:
    return [
        {"type": "user", "uuid": "u1", "promptId": prompt_id, "message": {
            "role": "user", "content": "<command-name>/goal</command-name>\n"
            f"  <command-message>goal</command-message>\n  <command-args>{objective}"
            "</command-args>"}},
        {"type": "system", "subtype": "local_command", "uuid": "s1", "parentUuid": "u1",
         "content": f"<local-command-stdout>Goal set: {objective}</local-command-stdout>"},
    ]


def test_a_persons_goal_is_confirmed_for_its_prompt_only(tmp_path):
    path = tmp_path / "t.jsonl"
    _write(path, *_person_goal("p1", "ship  it"))
    chunk = transcript.read_since(path)
    assert chunk.person_set_goal("p1", "ship it") == 1
    assert chunk.person_set_goal("p2", "ship it") is None
    assert chunk.person_set_goal("p1", "ship something else") is None


def test_the_interactive_tuis_goal_set_reply_is_a_user_entry(tmp_path):
    path = tmp_path / "t.jsonl"
    command, _ = _person_goal("p1", "ship it")
    _write(path, command, {"type": "user", "uuid": "u2", "parentUuid": "u1", "promptId": "p1",
                           "message": {"role": "user", "content": "<local-command-stdout>"
                                       "Goal set: ship it</local-command-stdout>"}})
    assert transcript.read_since(path).person_set_goal("p1", "ship it") == 1


def test_a_model_caused_goal_prompt_is_never_a_persons(tmp_path):
    path = tmp_path / "t.jsonl"
    entries = _person_goal("p1", "ship it")
    entries[0].update(isMeta=True, promptSource="system")
    _write(path, *entries)
    assert transcript.read_since(path).person_set_goal("p1", "ship it") is None


def test_the_model_scheduled_prompt_as_the_real_host_writes_it_is_not_a_persons(tmp_path):
    # captured from Claude Code 2.1.332 after a ScheduleWakeup with prompt "/goal ..."
    path = tmp_path / "t.jsonl"
    _write(path, {"parentUuid": "b400", "isSidechain": False, "promptId": "p1", "type": "user",
                  "message": {"role": "user", "content": "/goal model-made goal"},
                  "isMeta": True, "uuid": "8090", "permissionMode": "default",
                  "promptSource": "system", "queueSkipSlashCommands": True})
    assert transcript.read_since(path).person_set_goal("p1", "model-made goal") is None


def test_a_goal_set_without_the_command_entry_is_not_confirmed(tmp_path):
    path = tmp_path / "t.jsonl"
    _write(path, _person_goal("p1", "ship it")[1])
    assert transcript.read_since(path).person_set_goal("p1", "ship it") is None


def test_verdicts_are_read_and_placed_around_the_last_turn(tmp_path):
    path = tmp_path / "t.jsonl"
    _write(path,
           {"type": "attachment", "attachment": {"type": "goal_status", "met": False,
                                                 "sentinel": True, "condition": "c"}},
           {"type": "attachment", "attachment": {"type": "goal_status", "met": True,
                                                 "condition": "c"}},
           {"type": "assistant", "uuid": "a1", "message": {}},
           {"type": "attachment", "attachment": {"type": "goal_status", "met": True,
                                                 "sentinel": True}},
           {"type": "attachment", "attachment": {"type": "goal_status", "met": False,
                                                 "failed": True, "condition": "c"}})
    chunk = transcript.read_since(path)
    assert chunk.last_turn == "a1"
    assert [(v.outcome, v.index) for v in chunk.verdicts()] == [
        ("met", 1), ("cleared", 3), ("impossible", 4)]


def test_each_turn_closes_at_an_entry_that_calls_no_tool(tmp_path):
    """As Claude Code 2.1.332 writes a turn with a tool call: the text and tool_use blocks of
    one reply are entries with stop_reason tool_use, the closing reply says end_turn."""
    path = tmp_path / "t.jsonl"
    reply = {"role": "assistant", "stop_reason": "tool_use"}
    _write(path,
           {"type": "assistant", "uuid": "a1", "message": {**reply, "content": [
               {"type": "text", "text": "Let me look."}]}},
           {"type": "assistant", "uuid": "a2", "message": {**reply, "content": [
               {"type": "tool_use", "id": "t1", "name": "Bash", "input": {}}]}},
           {"type": "assistant", "uuid": "a3", "message": {
               "role": "assistant", "stop_reason": "end_turn", "content": [
                   {"type": "text", "text": "Done a step."}]}},
           {"type": "assistant", "uuid": "s1", "isSidechain": True, "message": {}},
           {"type": "assistant", "uuid": "e1", "isApiErrorMessage": True, "message": {}},
           {"type": "assistant", "uuid": "b1", "message": {"content": [
               {"type": "tool_use", "id": "t2", "name": "Bash", "input": {}}]}},
           {"type": "assistant", "uuid": "b2", "message": {"content": [
               {"type": "text", "text": "no stop reason, no tool: closes a turn"}]}})
    assert [(turn.uuid, turn.index) for turn in transcript.read_since(path).turns()] == [
        ("a3", 2), ("b2", 6)]


def test_an_anchor_finds_a_transcript_cut_rewritten_or_gone(tmp_path):
    path = tmp_path / "t.jsonl"
    _write(path, {"type": "assistant", "uuid": "a1", "message": {}},
           {"type": "assistant", "uuid": "a2", "message": {}})
    first = transcript.read_since(path)
    mark = transcript.anchor(path, first.starts[1], first.end_offset)
    _write(path, {"type": "assistant", "uuid": "a3", "message": {}})
    assert [turn.uuid for turn in transcript.read_anchored(path, mark).turns()] == ["a3"]
    original = path.read_bytes()
    path.write_bytes(original.replace(b'"a2"', b'"a9"'))  # a charged turn rewritten
    with pytest.raises(transcript.Unattributable, match="rewritten"):
        transcript.read_anchored(path, mark)
    path.write_bytes(original[:first.end_offset - 5])  # cut inside what forge read
    with pytest.raises(transcript.Unattributable, match="shorter"):
        transcript.read_anchored(path, mark)
    path.unlink()
    with pytest.raises(transcript.Unattributable, match="missing"):
        transcript.read_anchored(path, mark)


def test_reading_resumes_at_the_offset_and_leaves_a_partial_line(tmp_path):
    path = tmp_path / "t.jsonl"
    _write(path, {"type": "assistant", "uuid": "a1", "message": {}})
    first = transcript.read_since(path)
    _write(path, {"type": "assistant", "uuid": "a2", "message": {}},
           partial='{"type": "assistant", "uuid": "a3"')
    second = transcript.read_since(path, first.end_offset)
    assert [e["uuid"] for e in second.entries] == ["a2"]
    assert second.last_turn == "a2"
    assert transcript.read_since(path, second.end_offset).entries == []


def test_a_missing_transcript_reads_as_nothing(tmp_path):
    chunk = transcript.read_since(tmp_path / "absent.jsonl", 0)
    assert chunk.entries == [] and chunk.last_turn is None


def test_an_objective_holding_the_hosts_own_markup_is_still_a_persons_goal(tmp_path):
    # measured: the host writes the arguments raw between its tags, without escaping
    objective = "make a < b && c > \"d\" & 'e' <command-args>x</command-args> done"
    path = tmp_path / "t.jsonl"
    _write(path, *_person_goal("p1", objective))
    assert transcript.read_since(path).person_set_goal("p1", objective) == 1


def test_the_native_goal_runs_while_its_newest_verdict_says_not_met(tmp_path):
    from forge_runtime.goal.hosts.native_goal import running_goal

    path = tmp_path / "t.jsonl"
    assert running_goal(path) is None  # no transcript yet
    status = {"type": "attachment", "attachment": {"type": "goal_status", "condition": "x"}}
    _write(path, {"type": "user", "message": {"content": 'says "goal_status" in text'}})
    assert running_goal(path) is None
    _write(path, {**status, "attachment": {**status["attachment"], "met": False,
                                           "sentinel": True}})
    assert running_goal(path) == "x"  # set
    _write(path, {"type": "assistant", "message": {"content": "goal_status" * 10}})
    assert running_goal(path) == "x"  # the newest verdict still counts
    _write(path, {**status, "attachment": {**status["attachment"], "met": True}})
    assert running_goal(path) is None  # met
    _write(path, {**status, "attachment": {**status["attachment"], "met": False,
                                           "failed": True}}, partial='{"goal_status"')
    assert running_goal(path) is None  # judged impossible; a half-written line is skipped
    unknown = tmp_path / "u.jsonl"
    _write(unknown, {**status, "attachment": {**status["attachment"], "met": False,
                                              "impossible": True}})
    assert running_goal(unknown) == "x"  # a shape forge does not know: it may run


TAG_PARTS = st.sampled_from(["<command-args>", "</command-args>", "<command-args", "args>",
                             "x", "\n", " ", "</command-name>", "é"])


@given(st.lists(TAG_PARTS, max_size=8).map("".join))
def test_command_args_are_what_the_regular_expression_found(content):
    """The greedy pattern forge used before it searched by hand (transcript.command_args)."""
    import re

    match = re.search(r"<command-args>(.*)</command-args>", content, re.S)
    assert transcript.command_args(content) == (match.group(1) if match else None)


def test_command_args_keep_a_closing_tag_inside_the_objective():
    content = "<command-name>/goal</command-name><command-args>say </command-args> x" \
              "</command-args>"
    assert transcript.command_args(content) == "say </command-args> x"
