"""Hook dispatch: bad input gets one clear line on stderr, never a traceback, and the
default reply fails open (exit 0, nothing on stdout) so our bug never blocks a session."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forge_runtime.hooks import dispatch

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "hooks" / "forge-hook"
# Events whose modules keep the fail-open default (the guard and a goal-bound Stop do not).
FAIL_OPEN_EVENTS = ["SessionStart", "SessionEnd"]


def run(event: str, stdin: bytes) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    code = dispatch.run([event], io.BytesIO(stdin), out, err)
    return code, out.getvalue(), err.getvalue()


@pytest.mark.parametrize("event", FAIL_OPEN_EVENTS)
@pytest.mark.parametrize("stdin, reason", [
    (b"", "empty input"),
    (b"   \n", "empty input"),
    (b"{not json", "input is not JSON"),
    (b"\xff\xfe", "input is not JSON"),
    (b"[1, 2]", "input is a JSON list, not an object"),
    (b'{"hook_event_name": "SessionEnd"}', "field 'session_id' is missing"),
])
def test_malformed_input_is_one_clear_error_and_fails_open(event, stdin, reason):
    code, out, err = run(event, stdin)
    assert (code, out) == (0, "")
    assert err.startswith(f"Error: forge {event} hook: ")
    assert reason in err
    assert err.splitlines()[-1] == "Fix: forge doctor"
    assert "Traceback" not in err


def test_an_event_sent_to_the_wrong_handler_is_refused():
    stdin = json.dumps({"session_id": "s", "hook_event_name": "Stop"}).encode()
    code, out, err = run("SessionEnd", stdin)
    assert (code, out) == (0, "")
    assert "hook_event_name is 'Stop', expected 'SessionEnd'" in err


def test_an_internal_error_is_reported_in_one_line_and_fails_open(monkeypatch):
    from forge_runtime.hooks import session_end

    def broken(event):
        raise KeyError("boom")

    monkeypatch.setattr(session_end, "handle", broken)
    stdin = json.dumps({"session_id": "s", "hook_event_name": "SessionEnd"}).encode()
    code, out, err = run("SessionEnd", stdin)
    assert (code, out) == (0, "")
    assert "internal error KeyError: 'boom'" in err and "Traceback" not in err


def test_on_failure_decides_the_reply_when_a_module_defines_it(monkeypatch):
    from forge_runtime.hooks import session_end

    monkeypatch.setattr(session_end, "on_failure", lambda problem: {"continue": False,
                                                                   "stopReason": problem},
                        raising=False)
    code, out, _ = run("SessionEnd", b"")
    assert code == 0
    assert json.loads(out) == {"continue": False,
                               "stopReason": "empty input (the host sends one JSON object "
                                             "on stdin)"}


def test_an_unknown_event_name_is_a_launcher_error():
    code, out, err = run("Notification", b"{}")
    assert (code, out) == (1, "")
    assert "expected one event name of SessionStart" in err


@pytest.mark.parametrize("stdin", [b"", b"{not json"])
def test_the_real_launcher_fails_open_on_garbage(stdin, tmp_path):
    env = {**os.environ, "FORGE_PYTHON": sys.executable, "CLAUDE_PLUGIN_ROOT": str(REPO)}
    done = subprocess.run([str(LAUNCHER), "SessionEnd"], input=stdin, env=env, cwd=tmp_path,
                          capture_output=True, timeout=60)
    assert (done.returncode, done.stdout) == (0, b"")
    assert done.stderr.startswith(b"Error: forge SessionEnd hook: ")
    assert b"Traceback" not in done.stderr
