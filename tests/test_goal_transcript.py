"""What forge reads from the host transcript: a person's /goal, verdicts, turns, offsets."""

from __future__ import annotations

import json

from forge_runtime.goal import transcript


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
                                                 "impossible": True, "condition": "c"}})
    chunk = transcript.read_since(path)
    assert chunk.last_turn == "a1"
    assert [(v.outcome, v.after_last_turn) for v in chunk.verdicts()] == [
        ("met", False), ("cleared", True), ("impossible", True)]


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
    from forge_runtime.goal.native import running_goal

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
                                           "impossible": True}}, partial='{"goal_status"')
    assert running_goal(path) is None  # judged impossible; a half-written line is skipped
