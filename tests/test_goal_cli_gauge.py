"""`forge goal status` shows the status line's gauge on a terminal (plain text otherwise,
numbers only in JSON); `forge goal history` tells the goal's story one line per event."""

from __future__ import annotations

import json
import os
import pty
import subprocess
import sys

import pytest
from goal_support import Session, goal_project, goal_with_checklist

from forge_runtime.cli.main import main

OBJECTIVE = "the CSV importer handles quoted commas"
CHECKLIST = "- [x] read the CSV spec\n- [ ] parse the header row\n- [ ] handle quoted commas\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    return goal_project(tmp_path, monkeypatch, cli=True, sandboxed=True)


def running(project, turns: int) -> Session:
    return goal_with_checklist(project, OBJECTIVE, turns, CHECKLIST)


def on_a_terminal(project, *argv: str, **env: str) -> str:
    """`forge ...` with its stdout on a pseudo-terminal, as a person runs it."""
    leader, follower = pty.openpty()
    environment = {key: value for key, value in os.environ.items()
                   if key not in ("NO_COLOR", "LC_ALL", "LC_CTYPE")}
    done = subprocess.run([sys.executable, "-m", "forge_runtime", *argv], cwd=project.root,
                          stdout=follower, stderr=subprocess.PIPE, timeout=60,
                          env={**environment, "LANG": "C.UTF-8", **env})
    os.close(follower)
    chunks = []
    while True:
        try:
            chunk = os.read(leader, 65536)
        except OSError:  # the terminal's other end is closed: everything was read
            break
        if not chunk:
            break
        chunks.append(chunk)
    os.close(leader)
    assert done.returncode == 0, done.stderr
    return b"".join(chunks).decode().replace("\r\n", "\n")


def test_status_on_a_terminal_leads_with_the_gauge(project):
    running(project, 5)
    shown = on_a_terminal(project, "goal", "status")
    assert shown.splitlines()[0] == \
        "forge \x1b[32m▰▰▱▱▱▱▱▱▱▱\x1b[0m 5/20 · 1/3 steps · next: parse the header row"
    assert "checklist   1 of 3 steps done" in shown
    plain = on_a_terminal(project, "goal", "status", NO_COLOR="1", LANG="C")
    assert plain.splitlines()[0] == \
        "forge [##--------] 5/20 - 1/3 steps - next: parse the header row"


def test_status_in_a_pipe_is_plain_text_and_json_has_the_numbers(project, capsys):
    running(project, 5)
    assert main(["goal", "status"]) == 0
    text = capsys.readouterr().out
    assert "▰" not in text and "\x1b" not in text
    assert text.splitlines()[0].startswith("goal        ")
    assert "checklist   1 of 3 steps done" in text
    assert main(["goal", "status", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["budget"] == {"used": 5, "ceiling": 20, "remaining": 15,
                              "tokens": {"used": 0, "ceiling": None},
                              "minutes": {"used": 0, "ceiling": None},
                              "usd": {"used": 0.0, "ceiling": None,
                                      "prices": data["goal"]["prices"]["version"]},
                              "plan": None}
    assert data["checklist"] == {"done": 1, "total": 3}
    assert "▰" not in json.dumps(data, ensure_ascii=False)


def test_history_is_a_timeline_one_line_per_event(project, capsys):
    session = running(project, 3)
    session.work()  # a turn whose Stop hook died: the next Stop charges it late
    for _ in range(16):
        session.turn()
    again = Session(project)
    again.person_goal(OBJECTIVE)  # one more tranche
    again.turn()
    again.verdict(met=True, condition=OBJECTIVE, reason="done")
    again.prompt("thanks")
    assert main(["goal", "history"]) == 0
    rows = [line.split(None, 1)[1] for line in capsys.readouterr().out.splitlines()[:-1]]
    assert [" ".join(row.split()) for row in rows] == [
        f"activated 0/20 {OBJECTIVE}",
        "charged 3/20 turns 1-3",
        "late charge 4/20 turn 4, charged late",
        "charged 20/20 turns 5-20",
        "checkpoint 20/20 next: parse the header row",
        "exhausted 20/20 budget spent (turns); 1 of its turns charged late",
        "tranche 20/40 activation 2: 20 more turns",
        "charged 21/40 turn 21",
        "met 21/40 host verdict: met",
    ]
    assert main(["goal", "history", "--json"]) == 0
    records = json.loads(capsys.readouterr().out)
    assert [record["late"] for record in records if "late" in record] == [True]
