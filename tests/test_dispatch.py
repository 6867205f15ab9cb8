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


# What a hook of a session without a goal must not import: each costs a lean interpreter a
# sizeable part of a bare start (`__future__` alone is 0.4 ms, `re` more than half a start),
# and `site` is left to run only when a dependency is imported (see forge_runtime/entry.py).
HEAVY = {"__future__", "site", "re", "json", "pathlib", "typing", "dataclasses", "inspect",
         "shlex", "hashlib", "yaml", "jsonschema", "filelock", "forge_runtime.bootstrap"}
NO_GOAL_EVENTS = {
    "UserPromptSubmit": {"prompt": "tidy up the README", "cwd": "."},
    "PreToolUse": {"tool_name": "Read", "tool_input": {"file_path": "a"}, "cwd": "."},
    "PostToolUse": {"tool_name": "Agent", "tool_input": {"prompt": "x"}, "tool_response": {},
                    "cwd": "."},
    "Stop": {"stop_hook_active": False, "transcript_path": "none.jsonl", "cwd": "."},
    "StopFailure": {"error": "rate_limit", "transcript_path": "none.jsonl", "cwd": "."},
    "Interrupt": {"source": "user", "reason": "stop", "via": "terminal",
                  "transcript_path": "none.jsonl", "cwd": "."},
    "SessionEnd": {"reason": "other", "cwd": "."},
}


@pytest.mark.parametrize("event", sorted(NO_GOAL_EVENTS))
def test_a_hook_of_a_session_without_a_goal_imports_nothing_heavy(event, tmp_path):
    """Run as the launcher runs it: isolated, without `site`."""
    (tmp_path / ".git").mkdir()
    stdin = json.dumps({"session_id": "s1", "hook_event_name": event, **NO_GOAL_EVENTS[event]})
    code = (f"import sys, io; sys.path.insert(0, {str(REPO)!r})\n"
            "before = set(sys.modules)\n"
            "from forge_runtime.hooks import dispatch\n"
            "out = io.StringIO()\n"
            f"status = dispatch.run([{event!r}], sys.stdin.buffer, out, sys.stderr)\n"
            f"print(status, sorted(set({sorted(HEAVY)!r}) & (set(sys.modules) - before)))\n"
            "print(out.getvalue())")
    done = subprocess.run([sys.executable, "-I", "-S", "-c", code], input=stdin, cwd=tmp_path,
                          capture_output=True, text=True, timeout=60,
                          env={**os.environ, "CLAUDE_PROJECT_DIR": str(tmp_path)})
    assert done.returncode == 0, done.stderr
    assert done.stdout.split("\n")[0] == "0 []", done.stderr
    assert done.stdout.split("\n", 1)[1].strip() in ("", "{}"), done.stdout
