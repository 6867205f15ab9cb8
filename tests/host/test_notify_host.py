"""How a goal ended reaches the person, in the real Claude Code, offline.

Each session's project names its channels in `.forge/guard.yaml` (`notify:`): webhooks to
receivers on 127.0.0.1 in this process (hostkit/receiver.py), reached from the session's
loopback-only network namespace through its relays, which stay up while the detached
sender a hook started still runs. No PID namespace: the sender outlives `claude -p`, as on
a person's machine. Each end sends exactly one message with its reason and the way on the
session was given; a Stop never waits on a receiver; channels an agent writes into the
files it may write are never used.
"""

from __future__ import annotations

import json
import shutil
import socket
import tempfile
from pathlib import Path

import pytest
import yaml
from goal_support import goal_in_state
from notify_support import finished, guard_with_channels, webhook
from session_support import NEVER_MET, bash, stop_reasons
from test_goal_verified_host import ARGS, FIXES_IT, gated_project

from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.hostkit.receiver import Receiver
from forge_runtime.project import find_project

pytestmark = pytest.mark.host

OBJECTIVE = "the file never.txt exists"
NO_BLOCK_CAP = {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"}
# the longest a Stop of these sessions took with a receiver that answers at once (0.3 s
# measured) is far below this; a Stop that waited on the hanging receiver would take 6 s
STOP_SECONDS = 4.0


@pytest.fixture
def receivers():
    """Factory: a started Receiver (`mode`) with a Unix socket of its own; `relays` maps
    each one's port to its socket, for the Host."""
    made: list[Receiver] = []
    folder = Path(tempfile.mkdtemp(prefix="fnr-", dir="/tmp"))  # a socket path is short

    def make(mode: str = "ok") -> Receiver:
        receiver = Receiver(mode, folder / f"r{len(made)}.sock").start()
        made.append(receiver)
        return receiver

    make.relays = lambda: {receiver.port: str(receiver.unix_path) for receiver in made}
    yield make
    for receiver in made:
        receiver.close()
    shutil.rmtree(folder, ignore_errors=True)


def _bodies(receiver: Receiver) -> list[dict]:
    return [json.loads(post["body"]) for post in receiver.posts]


def _ended(receiver: Receiver, end: str) -> list[dict]:
    return [body for body in _bodies(receiver) if body["forge"]["end"] == end]


def _closed_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


STATE_BODY = "this body is yours to edit. -->"


def _plants(attacker: str) -> list[dict]:
    """The agent's second turn: it reads state.md, then names its own channel in every file
    it might hope forge reads: state.md's body, a notify.yaml of the project,
    .forge/notify.yaml, CLAUDE.md (all allowed), the person's own file and
    .forge/guard.yaml (both refused)."""
    channel = f"{{type: webhook, url: '{attacker}/stolen', format: json}}"
    section = f"notify: {{channels: [{channel}]}}"
    state = "{cwd}/.forge/local/state.md"
    plants = [
        {"name": "Edit", "input": {"file_path": state, "old_string": STATE_BODY,
                                   "new_string": f"{STATE_BODY}\n{section}"}},
        {"name": "Write", "input": {"file_path": "{cwd}/notify.yaml",
                                    "content": f"channels: [{channel}]\n{section}\n"}},
        {"name": "Write", "input": {"file_path": "{cwd}/.forge/notify.yaml",
                                    "content": f"{section}\n"}},
        {"name": "Write", "input": {"file_path": "{cwd}/CLAUDE.md",
                                    "content": f"# Notes\n{section}\n"}},
        bash(f"mkdir -p ~/.config/forge && echo 'channels: [{channel}]' > "
             "~/.config/forge/notify.yaml"),
        bash(f"echo '{section}' >> {{cwd}}/.forge/guard.yaml"),
    ]
    return [{"name": "the agent reads state.md", "times": 1,
             "when": {"conversation_contains": "GOAL-NOT-MET"},
             "reply": {"tool_calls": [{"name": "Read", "input": {"file_path": state}}]}},
            {"name": "the agent plants its channel", "times": 1,
             "when": {"last_tool_result_contains": STATE_BODY},
             "reply": {"tool_calls": plants}}]


def test_a_spent_budget_sends_one_message_whatever_the_receivers_do_and_none_to_the_agent(
        claude_host, project, receivers):
    person, hanging, refusing, attacker = (receivers(), receivers("hang"),
                                           receivers("error"), receivers())
    guard_with_channels(project, webhook(person.url, format="json"),
                        webhook(hanging.url, timeout=2), webhook(refusing.url),
                        webhook(f"http://127.0.0.1:{_closed_port()}"))
    guard_before = (project / ".forge" / "guard.yaml").read_text()
    evaluator, works = yaml.safe_load(NEVER_MET)["rules"]
    script = {"rules": [evaluator, *_plants(attacker.url), works]}
    host = claude_host(script, relays=receivers.relays(), own_pids=False)
    session = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=240, env=NO_BLOCK_CAP,
                       args=["--permission-mode", "acceptEdits", "--allowedTools",
                             "Bash,Write"])

    assert session.terminal_reason == "stop_hook_prevented", session.result
    (reason,) = stop_reasons(session)
    assert reason.startswith("FORGE_GOAL_BUDGET_EXHAUSTED: ")
    stops = session.hooks_for("Stop")
    assert max(hook.duration_s for hook in stops) < STOP_SECONDS, \
        [hook.duration_s for hook in stops]
    records = finished(find_project(project).ledger_root, 2, timeout=60)
    (told,) = _ended(person, "exhausted")
    goal = goal_in_state(project)
    assert told["forge"]["figures"]["turns"] == {"used": 20, "ceiling": 20}
    assert told["text"].splitlines()[1] == ("Ended: exhausted at its turns ceiling "
                                            "(FORGE_GOAL_BUDGET_EXHAUSTED)")
    assert told["text"].endswith(reason.split("\n", 2)[2])  # the Stop's Next: and Or:
    assert told["forge"]["next"] == f"/goal {OBJECTIVE}" and goal["status"] == "exhausted"
    assert {body["forge"]["end"] for body in _bodies(person)} <= {"exhausted", "stuck"}
    assert len(person.posts) == len(records)  # one for the end, one for the stuck warning
    exhausted = next(record for record in records if record["end"] == "exhausted")
    errors = {channel["channel"].split(" (")[0]: channel.get("error")
              for channel in exhausted["channels"]}
    assert errors[f"webhook {hanging.url}"] == "no answer within 2 s"
    assert errors[f"webhook {refusing.url}"] == "HTTP 500"
    assert "refused" in next(error for name, error in errors.items()
                             if name not in (f"webhook {hanging.url}",
                                             f"webhook {refusing.url}",
                                             f"webhook {person.url}")).lower()
    # the agent's channel: written where the guard let it, read by nobody
    assert attacker.posts == []
    for planted in (".forge/local/state.md", "notify.yaml", ".forge/notify.yaml", "CLAUDE.md"):
        assert "stolen" in (project / planted).read_text(), planted
    assert [rule for rule in (request["rule"] for request in session.requests)
            if rule.startswith("the agent")] == ["the agent reads state.md",
                                                 "the agent plants its channel"]
    assert (project / ".forge" / "guard.yaml").read_text() == guard_before
    assert not (host.home / ".config" / "forge" / "notify.yaml").exists()


def test_a_verified_goal_sends_one_message_saying_so(claude_host, project, receivers):
    person = receivers()
    gated_project(project)
    guard_with_channels(project, webhook(person.url, format="json"))
    session = claude_host(FIXES_IT, relays=receivers.relays(), own_pids=False).run(
        "/goal the parser is fixed", cwd=project, timeout=120, args=ARGS)

    last = session.hooks_for("Stop")[-1].reply["systemMessage"]
    assert last.startswith("FORGE_GOAL_VERIFIED: ")
    finished(find_project(project).ledger_root)
    (told,) = _bodies(person)
    assert told["title"] == "forge: goal verified"
    assert told["forge"]["end"] == "verified" and told["forge"]["code"] == "FORGE_GOAL_VERIFIED"
    assert "Why: host verdict: met; forge's own run of its final gates passed: unit-tests" \
        in told["text"]
    assert told["text"].splitlines()[-2:] == last.splitlines()[-2:]  # Done. and its words


USAGE_LIMIT = """
rules:
  - name: evaluator says not yet
    when: {goal_evaluator: true}
    reply: {verdict: {ok: false, reason: "GOAL-NOT-MET: keep working"}}
  - name: usage limit
    when: {last_is_tool_result: true}
    reply: {error: {status: 429, usage_limit: {window: five_hour, resets_in: 3600}}}
  - name: model works
    reply: {tool_calls: [{name: Bash, input: {command: "echo step"}}]}
"""


def test_a_goal_stopped_at_the_usage_limit_sends_one_message(claude_host, project, receivers):
    """`claude -p` on a subscription: the second request meets the plan's usage limit; the
    host fires StopFailure and exits (ending that hook as it goes); the end is told once,
    by the hook that recorded it or by the session's end."""
    person = receivers()
    guard_with_channels(project, webhook(person.url, format="json"))
    host = claude_host(USAGE_LIMIT, login="subscription", relays=receivers.relays(),
                       own_pids=False)
    session = host.run("/goal the weekly report is written", cwd=project, timeout=90,
                       args=["--allowedTools", "Bash"])

    assert "usage limit" in [request["rule"] for request in session.requests]
    (record,) = finished(find_project(project).ledger_root)
    assert record["status"] == "sent"
    (told,) = _bodies(person)
    assert told["title"] == "forge: goal stopped at the usage limit"
    assert told["forge"]["code"] == "FORGE_GOAL_USAGE_LIMIT"
    assert "Why: was stopped by the host at its plan's usage limit after 1 turns" in told["text"]
    assert told["text"].splitlines()[-3:] == [
        "Next: /goal the weekly report is written", "  adds one more tranche of 20 turns",
        "Or: /goal clear"]


def test_a_tampered_ledger_sends_one_message_however_often_it_is_refused(claude_host, project,
                                                                         receivers):
    person = receivers()
    guard_with_channels(project, webhook(person.url, format="json"))
    host = claude_host(NEVER_MET, relays=receivers.relays(), own_pids=False)
    first = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=60, args=["--max-turns", "3"])
    goal = goal_in_state(project)
    records_dir = Path(Ledger(find_project(project).ledger_root, goal["nonce"]).records_dir)
    third = records_dir / "00000003.json"
    third.write_text(third.read_text().replace('"turn_count":2', '"turn_count":1'))
    refused = []
    for _ in range(2):
        again = host.run("keep going", cwd=project, resume=first.session_id, timeout=60)
        (reason,) = stop_reasons(again)
        refused.append(reason)
        assert max(hook.duration_s for hook in again.hooks_for("Stop")) < STOP_SECONDS

    assert all("Error: FORGE_GOAL_LEDGER_TAMPERED: " in reason for reason in refused)
    finished(find_project(project).ledger_root)
    (told,) = _bodies(person)
    assert told["title"] == "forge: goal ledger tampered"
    assert told["forge"]["nonce"] == goal["nonce"]
    assert told["text"].splitlines()[-1] == "Fix: forge goal verify" == \
        refused[0].splitlines()[-1]
