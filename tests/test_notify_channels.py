"""Each channel delivers the message as its kind of receiver expects, within its timeout, and
says why when it cannot. Every receiver here is on 127.0.0.1."""

from __future__ import annotations

import json
import socket
import sys
import time

import pytest

from forge_runtime.hostkit.receiver import Receiver
from forge_runtime.notify.channels import Unavailable, send
from forge_runtime.notify.config import Channel
from forge_runtime.notify.message import build
from forge_runtime.notify.sender import attempt

GOAL = {"nonce": "b" * 32, "objective": "ship the exporter", "turn_count": 20,
        "turn_ceiling": 20, "activation_count": 1}
MESSAGE = build({"end": "exhausted", "goal": GOAL, "nonce": GOAL["nonce"], "ceiling": "turns",
                 "project": "/srv/acme"})


def _webhook(url: str, **settings) -> Channel:
    return Channel("webhook", "test", {"type": "webhook", "url": url, **settings})


def test_an_ntfy_webhook_gets_the_text_with_title_priority_and_tags():
    with Receiver() as receiver:
        assert send(_webhook(f"{receiver.url}/forge-goals",
                             headers={"Authorization": "Bearer tk_1"}), MESSAGE) is None
    (post,) = receiver.posts
    assert post["path"] == "/forge-goals" and post["body"] == MESSAGE.text
    headers = post["headers"]
    assert headers["User-Agent"] == "forge-notify"
    assert (headers["Title"], headers["Priority"], headers["Tags"]) == (
        "forge: goal exhausted (turns)", "high", "rotating_light")
    assert headers["Content-Type"] == "text/plain; charset=utf-8"
    assert headers["Authorization"] == "Bearer tk_1"


def test_a_json_webhook_gets_text_for_slack_and_teams_and_content_for_discord():
    long_goal = {**GOAL, "objective": "x" * 3000}
    message = build({"end": "exhausted", "goal": long_goal, "nonce": GOAL["nonce"]})
    with Receiver() as receiver:
        assert send(_webhook(receiver.url, format="json"), message) is None
    body = json.loads(receiver.posts[0]["body"])
    assert body["text"] == message.text and body["title"] == message.title
    assert body["content"] == message.text[:1900] and len(body["content"]) <= 2000
    assert body["forge"]["code"] == "FORGE_GOAL_BUDGET_EXHAUSTED"
    assert body["forge"]["figures"]["turns"] == {"used": 20, "ceiling": 20}


def test_a_refusing_receiver_is_an_http_error():
    with Receiver("error") as receiver:
        assert send(_webhook(receiver.url), MESSAGE) == "HTTP 500"


def test_nobody_listening_is_said_so():
    with socket.socket() as closed:
        closed.bind(("127.0.0.1", 0))
        port = closed.getsockname()[1]
    assert "refused" in send(_webhook(f"http://127.0.0.1:{port}/x"), MESSAGE).lower()


def test_a_receiver_that_never_answers_costs_one_timeout_per_attempt():
    with Receiver("hang") as receiver:
        started = time.monotonic()
        assert send(_webhook(receiver.url, timeout=1), MESSAGE) == "no answer within 1 s"
        assert time.monotonic() - started < 3


def test_a_failing_channel_is_tried_three_times_then_kept_as_failed(monkeypatch):
    from forge_runtime.notify import sender

    monkeypatch.setattr(sender, "PAUSES", (0.01, 0.01))
    with Receiver("error") as receiver:
        outcome = attempt(_webhook(receiver.url), MESSAGE)
    assert outcome == {"channel": f"webhook {receiver.url} (ntfy)", "status": "failed",
                       "attempts": 3, "error": "HTTP 500"}
    assert len(receiver.posts) == 3


@pytest.fixture
def bin_dir(tmp_path, monkeypatch):
    """A folder of fake programs outside the agent's directories, first on PATH; the
    project (an agent's directory) is the working directory."""
    folder = tmp_path / "bin"
    folder.mkdir()
    project = tmp_path / "project"
    project.mkdir()
    monkeypatch.chdir(project)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    monkeypatch.setenv("PATH", f"{folder}:/usr/bin:/bin")
    return folder


def _recorder(folder, name: str, exit_code: int = 0):
    """A program that writes its arguments, its stdin and FORGE_NOTIFY_* to files."""
    program = folder / name
    program.write_text(f"""#!{sys.executable}
import json, os, sys
out = {json.dumps(str(folder))}
json.dump(sys.argv[1:], open(os.path.join(out, {name!r} + ".argv"), "w"))
open(os.path.join(out, {name!r} + ".stdin"), "w").write(sys.stdin.read())
json.dump({{k: v for k, v in os.environ.items() if k.startswith("FORGE_NOTIFY_")}},
          open(os.path.join(out, {name!r} + ".env"), "w"))
sys.stderr.write("said on stderr\\n")
sys.exit({exit_code})
""")
    program.chmod(0o755)
    return program


def test_a_command_gets_the_text_on_stdin_and_the_message_in_its_environment(bin_dir):
    _recorder(bin_dir, "page-me")
    channel = Channel("command", "test", {"type": "command", "argv": ["page-me", "--loud"]})
    assert send(channel, MESSAGE) is None
    assert json.loads((bin_dir / "page-me.argv").read_text()) == ["--loud"]
    assert (bin_dir / "page-me.stdin").read_text() == MESSAGE.text
    env = json.loads((bin_dir / "page-me.env").read_text())
    assert env["FORGE_NOTIFY_CODE"] == "FORGE_GOAL_BUDGET_EXHAUSTED"
    assert env["FORGE_NOTIFY_NEXT"] == "/goal ship the exporter"
    assert env["FORGE_NOTIFY_END"] == "exhausted" and env["FORGE_NOTIFY_TEXT"] == MESSAGE.text
    assert json.loads(env["FORGE_NOTIFY_JSON"])["nonce"] == GOAL["nonce"]


def test_a_failing_command_says_its_status_and_last_words(bin_dir):
    _recorder(bin_dir, "page-me", exit_code=3)
    channel = Channel("command", "test", {"type": "command", "argv": ["page-me"]})
    assert send(channel, MESSAGE) == "page-me exited 3: said on stderr"


def test_a_command_that_hangs_is_stopped_at_its_timeout(bin_dir):
    channel = Channel("command", "test", {"type": "command", "argv": ["sleep", "30"],
                                          "timeout": 1})
    started = time.monotonic()
    assert send(channel, MESSAGE) == "sleep did not finish within 1 s"
    assert time.monotonic() - started < 5


def test_a_program_in_a_directory_the_agent_writes_is_never_run(bin_dir, tmp_path):
    project = tmp_path / "project"
    planted = _recorder(project, "page-me")
    by_path = Channel("command", "test", {"type": "command", "argv": [str(planted)]})
    with pytest.raises(Unavailable, match="which the agent can write"):
        send(by_path, MESSAGE)
    relative = Channel("command", "test", {"type": "command", "argv": ["./page-me"]})
    with pytest.raises(Unavailable, match="relative path"):
        send(relative, MESSAGE)


def test_a_name_found_only_in_the_agents_directories_is_not_found(bin_dir, tmp_path,
                                                                  monkeypatch):
    project = tmp_path / "project"
    (project / "bin").mkdir()
    _recorder(project / "bin", "page-me")
    monkeypatch.setenv("PATH", f"{project / 'bin'}:{bin_dir}")
    channel = Channel("command", "test", {"type": "command", "argv": ["page-me"]})
    with pytest.raises(Unavailable, match="no page-me on PATH outside"):
        send(channel, MESSAGE)
    assert not (project / "bin" / "page-me.argv").exists()


def test_the_desktop_notification_on_linux_is_notify_send(bin_dir, monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    _recorder(bin_dir, "notify-send")
    assert send(Channel("desktop", "test", {"type": "desktop"}), MESSAGE) is None
    assert json.loads((bin_dir / "notify-send.argv").read_text()) == [
        "--app-name=forge", "--urgency=critical", MESSAGE.title, MESSAGE.text]


def test_the_desktop_notification_on_macos_is_osascript_with_no_quoting(bin_dir, monkeypatch):
    monkeypatch.setattr(sys, "platform", "darwin")
    _recorder(bin_dir, "osascript")
    assert send(Channel("desktop", "test", {"type": "desktop"}), MESSAGE) is None
    argv = json.loads((bin_dir / "osascript.argv").read_text())
    assert argv[-2:] == [MESSAGE.title, MESSAGE.text]  # data as arguments, never script
    assert argv[:6] == ["-e", "on run argv", "-e",
                        "display notification (item 2 of argv) with title (item 1 of argv)",
                        "-e", "end run"]


def test_no_desktop_here_is_said_and_not_retried(bin_dir, monkeypatch):
    monkeypatch.setattr(sys, "platform", "linux")
    monkeypatch.setenv("PATH", str(bin_dir))  # a machine with no notify-send
    outcome = attempt(Channel("desktop", "test", {"type": "desktop"}), MESSAGE)
    assert outcome["attempts"] == 1 and outcome["status"] == "failed"
    assert outcome["error"].startswith("no notify-send on PATH outside")
