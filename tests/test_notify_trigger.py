"""Each end forge records, and each refusal that ends a goal with no record, sends one
message through the person's channels, once, from a sender the hook never waits for.

Goals run through forge's own event entry points (goal_support.Session), and the hooks
that must answer in time through the real launcher (`hooks/forge-hook`), as the host runs
them; every receiver is on 127.0.0.1 (hostkit/receiver.py), every sender a real process.
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest
from goal_support import Session, goal_project_fixture, started_goal
from notify_support import finished, guard_with_channels, wait_for, webhook

from forge_runtime.goal.events.replies import exhausted_hint
from forge_runtime.goal.rules import end_notes
from forge_runtime.goal.store import layout, sessions
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.hostkit.receiver import Receiver
from forge_runtime.notify import outbox, trigger

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "hooks" / "forge-hook"
OBJECTIVE = "the parser passes its tests"

project = goal_project_fixture()


@pytest.fixture
def receiver():
    with Receiver() as started:
        yield started


def _told(project, session, reply) -> list[dict]:
    """What this process noted, handed on as the hook's surface does; the senders'
    outbox records once they finished."""
    pids = trigger.after_event(project.root, session.event("Stop"), reply)
    wait_for(pids)
    return [outbox.read(outbox.path_of(project.ledger_root, record["key"]),
                        project.ledger_root) for record in outbox.records(project.ledger_root)]


def _lines(post: dict) -> list[str]:
    return post["body"].splitlines()


def test_a_spent_budget_sends_one_message_with_the_stops_own_way_on(project, receiver):
    guard_with_channels(project.root, webhook(f"{receiver.url}/goals"))
    session = started_goal(project, OBJECTIVE, 19)
    end_notes.take()  # its stuck warnings (test_the_stuck_warning_is_sent_once_a_tranche)
    reply = session.turn()
    assert reply["stopReason"].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: ")

    (record,) = _told(project, session, reply)
    (post,) = receiver.posts
    goal = Ledger(project.ledger_root, record["nonce"]).verified()
    assert post["headers"]["Title"] == "forge: goal exhausted (turns)"
    assert _lines(post)[:3] == [f"Goal: {OBJECTIVE}",
                                "Ended: exhausted at its turns ceiling "
                                "(FORGE_GOAL_BUDGET_EXHAUSTED)",
                                "Why: used 20 of 20 turns (1 x 20)"]
    assert _lines(post)[-3:] == exhausted_hint(goal).lines()
    assert reply["stopReason"].endswith(exhausted_hint(goal).render())
    assert record["status"] == "sent" and record["end"] == "exhausted"
    assert record["channels"] == [{"channel": f"webhook {receiver.url} (ntfy)",
                                   "status": "sent", "attempts": 1}]
    # a Stop the host repeats for the spent goal records nothing new: nothing more is sent
    assert _told(project, session, session.stop()) == [record]
    assert len(receiver.posts) == 1


def test_with_no_channel_nothing_is_written_or_started(project):
    session = started_goal(project, OBJECTIVE, 19)
    reply = session.turn()
    assert end_notes.NOTED  # the end was noted ...
    assert trigger.after_event(project.root, session.event("Stop"), reply) == []
    assert not os.path.exists(layout.outbox_dir(project.ledger_root))  # ... and dropped


def test_a_charge_that_ends_nothing_imports_nothing_of_notify(project, receiver,
                                                             monkeypatch):
    guard_with_channels(project.root, webhook(receiver.url))
    session = started_goal(project, OBJECTIVE, 2)
    for name in [name for name in sys.modules if name.startswith("forge_runtime.notify")]:
        monkeypatch.delitem(sys.modules, name)  # put back after the test
    assert session.turn() is None
    assert not [name for name in sys.modules if name.startswith("forge_runtime.notify")]


def test_a_tampered_ledger_is_told_once_however_often_its_stop_is_refused(project, receiver):
    guard_with_channels(project.root, webhook(receiver.url))
    session = started_goal(project, OBJECTIVE, 3)
    nonce = sessions.read_binding(project.ledger_root, session.id)["nonce"]
    third = Path(Ledger(project.ledger_root, nonce).records_dir) / "00000003.json"
    third.write_text(third.read_text().replace('"turn_count":2', '"turn_count":1'))
    first = session.turn()
    assert "FORGE_GOAL_LEDGER_TAMPERED" in first["stopReason"]
    (record,) = _told(project, session, first)
    again = session.turn()
    assert "FORGE_GOAL_LEDGER_TAMPERED" in again["stopReason"]
    assert len(_told(project, session, again)) == 1

    (post,) = receiver.posts
    assert post["headers"]["Title"] == "forge: goal ledger tampered"
    assert "Ended: tampered (FORGE_GOAL_LEDGER_TAMPERED)" in post["body"]
    assert _lines(post)[-1] == "Fix: forge goal verify"
    assert record["nonce"] == nonce


def test_the_stuck_warning_is_sent_once_a_tranche(project, receiver):
    guard_with_channels(project.root, webhook(receiver.url))
    session = Session(project)
    session.person_goal(OBJECTIVE)
    warned = []
    for _ in range(16):  # the session is warned at turns 5, 10 and 15
        reply = session.turn()
        if reply:
            warned.append(reply["systemMessage"])
            _told(project, session, reply)
    assert len(warned) == 3 and all("FORGE_GOAL_STUCK_WARNING" in text for text in warned)
    (post,) = receiver.posts
    assert post["headers"]["Title"] == "forge: goal stuck"
    assert post["headers"]["Priority"] == "default"
    assert _lines(post)[-2] == "Next: forge goal status"


def test_an_end_the_host_decides_is_sent_with_its_verdict(project, receiver):
    guard_with_channels(project.root, webhook(receiver.url))
    session = started_goal(project, OBJECTIVE, 2)
    session.verdict(met=False, failed=True, condition=OBJECTIVE, reason="cannot be done")
    reply = session.turn()
    _told(project, session, reply)
    (post,) = receiver.posts
    assert "Ended: impossible (the host's verdict)" in post["body"]
    assert post["headers"]["Priority"] == "default"


def _launch(project, event: dict, name: str, **env) -> tuple[dict | None, float]:
    """forge's launcher for `event` as the host runs it: its reply and how long it took."""
    started = time.monotonic()
    done = subprocess.run(
        [str(LAUNCHER), name], input=json.dumps(event).encode(), cwd=project.root,
        env={**os.environ, "FORGE_PYTHON": sys.executable, "CLAUDE_PROJECT_DIR":
             str(project.root), "CLAUDE_CODE_SESSION_ID": event["session_id"], **env},
        capture_output=True, timeout=30)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout or b"null"), time.monotonic() - started


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def test_the_stop_answers_at_once_whatever_the_receivers_do(project, receiver):
    """A receiver that never answers, one that answers 500 and a port nobody listens on:
    the Stop that ends the goal answers as fast as one that sends nothing, the sender
    tries each three times, and the one that works gets its message."""
    with Receiver("hang") as hanging, Receiver("error") as refusing:
        guard_with_channels(project.root, webhook(hanging.url, timeout=1),
                            webhook(refusing.url), webhook(f"http://127.0.0.1:{_closed_port()}"),
                            webhook(receiver.url, format="json"))
        session = started_goal(project, OBJECTIVE, 19)
        session.work()
        reply, took = _launch(project, session.event("Stop", stop_hook_active=True), "Stop")
        assert reply["stopReason"].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: ")
        assert took < 5, "the Stop waited on a receiver"
        (record,) = finished(project.ledger_root)
    by_channel = {channel["channel"].split(" (")[0]: channel for channel in record["channels"]}
    assert record["status"] == "failed"
    assert by_channel[f"webhook {hanging.url}"] == {
        "channel": f"webhook {hanging.url} (ntfy)", "status": "failed", "attempts": 3,
        "error": "no answer within 1 s"}
    assert by_channel[f"webhook {refusing.url}"]["error"] == "HTTP 500"
    assert len(hanging.posts) == len(refusing.posts) == 3
    assert json.loads(receiver.posts[0]["body"])["forge"]["code"] == \
        "FORGE_GOAL_BUDGET_EXHAUSTED"
    assert len(receiver.posts) == 1


def test_a_wedged_stop_is_told_when_forge_ends_the_goal_not_again_when_recorded(project,
                                                                              receiver):
    from test_hook_wedges import _HeldLock

    guard_with_channels(project.root, webhook(receiver.url))
    session = started_goal(project, OBJECTIVE, 1)
    holder = _HeldLock(project, session)
    try:
        session.work()
        reply, took = _launch(project, session.event("Stop", stop_hook_active=True), "Stop",
                              FORGE_HOOK_WATCHDOG="1")
    finally:
        holder.release()
    assert "FORGE_GOAL_WEDGED" in reply["stopReason"] and took < 5
    (record,) = finished(project.ledger_root)
    assert (record["end"], record["status"]) == ("wedged", "sent")
    (post,) = receiver.posts
    assert "Ended: wedged (FORGE_GOAL_WEDGED)" in post["body"]
    assert _lines(post)[-2] == "Fix: forge goal status"
    session.prompt("what happened?")  # records the end forge owed the ledger
    goal = Ledger(project.ledger_root, record["nonce"]).verified()
    assert (goal["status"], goal["ended"]) == ("cancelled", "wedged")
    assert trigger.after_event(project.root, session.event("UserPromptSubmit"), None) == []
    assert len(receiver.posts) == 1


def test_a_broken_channel_file_never_changes_the_stop_and_is_kept_as_the_failure(project):
    (project.root / ".forge" / "guard.yaml").write_text(
        "goal: {require_sandbox: false}\nnotify: {channels: [{type: pager}]}\n")
    session = started_goal(project, OBJECTIVE, 19)
    session.work()
    reply, _ = _launch(project, session.event("Stop", stop_hook_active=True), "Stop")
    assert reply["stopReason"].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: ")
    (record,) = finished(project.ledger_root)
    assert record["status"] == "failed"
    assert record["error"].startswith("Error: FORGE_NOTIFY_CONFIG_INVALID: notification "
                                      "settings ")
    assert record["error"].endswith("Fix: forge notify test\n  correct "
                                    f"{project.root}/.forge/guard.yaml:2, then run this to "
                                    "check it")


def test_an_end_whose_hook_died_before_telling_it_is_told_at_the_sessions_end(project,
                                                                            receiver):
    """`claude -p` ends the StopFailure hook (and what it started) as it exits: the end is
    on the ledger, its message nowhere; the session's end tells it, once."""
    guard_with_channels(project.root, webhook(receiver.url))
    session = started_goal(project, OBJECTIVE, 19)
    session.turn()
    end_notes.take()  # the hook died before its reply: nothing it noted was told
    for _ in range(2):
        _launch(project, session.event("SessionEnd", reason="other"), "SessionEnd")
    (record,) = finished(project.ledger_root)
    assert (record["end"], record["status"]) == ("exhausted", "sent")
    assert len(receiver.posts) == 1


def test_a_sender_killed_before_it_took_its_record_is_started_again_once(project, receiver):
    guard_with_channels(project.root, webhook(receiver.url))
    session = started_goal(project, OBJECTIVE, 19)
    session.turn()
    (note,) = [note for note in end_notes.take() if note["kind"] == end_notes.END]
    nonce, seq = note["record"]["goal"]["nonce"], note["record"]["seq"]
    outbox.create(project.ledger_root, f"{nonce}-{seq}", {"nonce": nonce, "end": "exhausted"})
    for _ in range(2):  # the record its hook made; no sender ever claimed it
        _launch(project, session.event("SessionEnd", reason="other"), "SessionEnd")
    (record,) = finished(project.ledger_root)
    assert record["status"] == "sent" and len(receiver.posts) == 1


def test_two_senders_of_one_record_send_it_once(project, receiver):
    from forge_runtime.notify import sender

    guard_with_channels(project.root, webhook(receiver.url))
    session = started_goal(project, OBJECTIVE, 19)
    session.turn()
    (note,) = [note for note in end_notes.take() if note["kind"] == end_notes.END]
    job = trigger._job(note, session.id)
    path = outbox.create(project.ledger_root, job["key"], {"nonce": job["nonce"],
                                                           "end": job["end"]})
    job = {**job, "project": str(project.root), "outbox": path, "replies": []}
    wait_for([sender.spawn(job), sender.spawn(job)])
    assert len(receiver.posts) == 1
    assert outbox.read(path, project.ledger_root)["status"] == "sent"


def test_a_moved_project_tells_its_goal_and_the_way_to_adopt_it(tmp_path, receiver):
    import shutil

    from goal_support import goal_projects

    from forge_runtime.hostkit.projects import init_git_project
    from forge_runtime.project import find_project

    old = init_git_project(tmp_path / "old")
    goal_projects(old)
    started_goal(find_project(old), OBJECTIVE, 2)
    new = tmp_path / "new"
    shutil.move(old, new)
    guard_with_channels(new, webhook(receiver.url))
    moved = find_project(new)
    session = Session(moved)
    session.person_goal(OBJECTIVE)
    reply = session.turn()
    assert "FORGE_GOAL_LEDGER_MOVED" in reply["stopReason"]
    _told(moved, session, reply)
    (post,) = receiver.posts
    assert post["headers"]["Title"] == "forge: goal ledger moved"
    assert _lines(post)[0] == f"Goal: {OBJECTIVE}"
    assert _lines(post)[-2] == "Fix: forge goal adopt"
    assert reply["stopReason"].splitlines()[-2:] == _lines(post)[-2:]
