"""What was sent and what failed is kept beside the ledger, told once per key, and shown
where a person looks: `forge goal status` (the goal's), `forge doctor` (until a message
reaches every channel again). `forge notify test` sends a sample through each channel."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from goal_support import goal_project_fixture, run_cli, started_goal
from notify_support import guard_with_channels, wait_for, webhook

from forge_runtime.hint_audit import output_problems
from forge_runtime.hostkit.receiver import Receiver
from forge_runtime.notify import outbox, trigger

project = goal_project_fixture(cli=True)
OBJECTIVE = "the exporter writes CSV"


def test_a_key_is_told_once(tmp_path):
    root = tmp_path / "ledger"
    path = outbox.create(root, "n-7", {"nonce": "n", "end": "exhausted"})
    assert path is not None and outbox.create(root, "n-7", {"nonce": "n"}) is None
    outbox.finish(path, root, outbox.FAILED, [{"channel": "desktop", "status": "failed",
                                               "error": "no notify-send"}])
    (record,) = outbox.failed(root, "n")
    assert outbox.failure_words(record).endswith("exhausted: desktop: no notify-send")
    assert outbox.failed(root, "other") == []


def test_a_sender_that_never_finished_counts_as_failed(tmp_path):
    root = tmp_path / "ledger"
    path = outbox.create(root, "n-8", {"nonce": "n", "end": "tampered"})
    assert outbox.failed(root) == []  # still sending
    _dated(path, "2020-01-01T00:00:00Z")
    (failed,) = outbox.failed(root)
    assert failed["error"].startswith("the sender never finished")


def _dated(path: str, at: str) -> None:
    record = json.loads(Path(path).read_text())
    Path(path).write_text(json.dumps({**record, "at": at}))


def test_doctor_reports_failures_until_a_message_reaches_every_channel(tmp_path):
    root = tmp_path / "ledger"
    first = outbox.create(root, "a-1", {"nonce": "a", "end": "exhausted"})
    outbox.finish(first, root, outbox.FAILED, [], "HTTP 500")
    assert [record["key"] for record in outbox.unanswered(root)] == ["a-1"]
    sent = outbox.create(root, "sample-1", {"nonce": None, "end": "sample"})
    _dated(sent, "2999-01-01T00:00:00Z")  # after the failure
    outbox.finish(sent, root, outbox.SENT, [])
    assert outbox.unanswered(root) == []
    assert [record["key"] for record in outbox.failed(root)] == ["a-1"]  # kept


def _spent_goal_told(project, *channels) -> dict:
    guard_with_channels(project.root, *channels)
    session = started_goal(project, OBJECTIVE, 19)
    reply = session.turn()
    wait_for(trigger.after_event(project.root, session.event("Stop"), reply))
    return next(record for record in outbox.records(project.ledger_root)
                if record["end"] == "exhausted")


def test_goal_status_and_doctor_show_a_message_that_did_not_go_out(project, capsys):
    with Receiver("error") as refusing:
        record = _spent_goal_told(project, webhook(refusing.url, timeout=1))
    assert record["status"] == "failed"
    code, out = run_cli(capsys, "goal", "status")
    (line,) = [line for line in out.splitlines() if line.startswith("notify ")]
    assert line == (f"notify      not sent: {record['at']} exhausted: webhook {refusing.url} "
                    "(ntfy): HTTP 500 (2 failed; forge doctor lists them)")  # and stuck
    code, out = run_cli(capsys, "doctor")
    (line,) = [line for line in out.splitlines() if "notify" in line and "FAIL" in line]
    assert "did not reach every channel since the last that did" in line
    assert "fix: forge notify test" in out


def test_notify_test_sends_a_sample_through_every_channel_and_says_done(project, capsys):
    with Receiver() as receiver:
        guard_with_channels(project.root, webhook(receiver.url),
                            webhook(receiver.url + "/json", format="json"))
        code, out = run_cli(capsys, "notify", "test")
    assert code == 0 and output_problems(out) == []
    assert out.splitlines() == [f"sent    webhook {receiver.url} (ntfy)",
                                f"sent    webhook {receiver.url} (json)",
                                "Done.", "  all 2 channel(s) took the sample"]
    code, out = run_cli(capsys, "doctor")
    assert f"ok    notify       a goal's end is sent to webhook {receiver.url} (ntfy), webhook " \
           f"{receiver.url} (json)" in out.splitlines()
    (ntfy,) = [post for post in receiver.posts if post["path"] == "/"]
    assert ntfy["headers"]["Title"] == "forge: a sample notification (forge notify test)"
    assert "Goal: (a sample) the file done.txt exists" in ntfy["body"]


def test_notify_test_names_a_channel_that_fails_with_error_and_fix(project, capsys):
    with Receiver("error") as refusing:
        guard_with_channels(project.root, webhook(refusing.url))
        code, out = run_cli(capsys, "notify", "test", "--json")
    payload = json.loads(out)
    assert code == 2 and payload["_next_action"] == "forge notify test"
    assert payload["_hint"]["error"] == (f"1 of 1 channel(s) did not take the sample: "
                                         f"webhook {refusing.url} (ntfy)")
    assert payload["channels"][0]["error"] == "HTTP 500"
    assert len(refusing.posts) == 1  # a test tries once


@pytest.mark.parametrize("text", ["notify: {channels: [{type: webhook}]}\n",
                                  "notify: [not, a, mapping]\n"])
def test_notify_test_and_doctor_give_a_broken_file_as_error_and_fix(project, capsys, text):
    (project.root / ".forge" / "guard.yaml").write_text(text)
    code, out = run_cli(capsys, "notify", "test")
    assert code == 2 and output_problems(out) == [] and "Traceback" not in out
    assert "Error: FORGE_NOTIFY_CONFIG_INVALID: notification settings " in out
    assert out.rstrip().splitlines()[-2] == "Fix: forge notify test"
    code, out = run_cli(capsys, "doctor")
    assert any(line.startswith("FAIL  notify") for line in out.splitlines())


def test_notify_test_with_no_channel_says_where_a_person_adds_one(project, capsys):
    code, out = run_cli(capsys, "notify", "test")
    assert code == 0 and output_problems(out) == []
    assert out.splitlines()[0] == "no notification channel is configured"
    assert out.splitlines()[1].startswith("Wait: a person lists channels under notify: in "
                                          ".forge/guard.yaml")
