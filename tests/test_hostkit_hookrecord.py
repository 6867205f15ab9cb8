"""The hook recorder passes a hook's input, output and exit code through untouched."""

from __future__ import annotations

import json
import subprocess
import sys

from forge_runtime.hostkit.hookrecord import LOG_ENV


def record(tmp_path, argv, stdin: bytes):
    log = tmp_path / "hooks.jsonl"
    done = subprocess.run([sys.executable, "-m", "forge_runtime.hostkit.hookrecord", *argv],
                          input=stdin, capture_output=True, env={LOG_ENV: str(log)}, timeout=30)
    return done, [json.loads(line) for line in log.read_text().splitlines()]


def test_a_forge_hook_runs_as_without_the_recorder_and_is_logged(tmp_path):
    event = {"session_id": "s1", "hook_event_name": "PreToolUse", "tool_name": "Bash",
             "tool_input": {"command": "ls"}}
    stdin = json.dumps(event).encode()
    argv = ["-m", "forge_runtime.hooks", "PreToolUse"]
    plain = subprocess.run([sys.executable, *argv], input=stdin, capture_output=True, timeout=30)

    recorded, log = record(tmp_path, argv, stdin)

    assert (recorded.returncode, recorded.stdout, recorded.stderr) == \
        (plain.returncode, plain.stdout, plain.stderr)
    assert len(log) == 1
    assert json.loads(log[0]["stdin"]) == event
    assert log[0]["argv"] == argv
    assert log[0]["exit_code"] == 0
    assert log[0]["duration_s"] >= 0


def test_exit_codes_and_both_streams_pass_through(tmp_path):
    script = tmp_path / "hook.py"
    script.write_text("import sys\ndata = sys.stdin.read()\nprint('out:' + data)\n"
                      "sys.stderr.write('refused')\nsys.exit(2)\n")

    recorded, log = record(tmp_path, [str(script)], b"IN")

    assert recorded.returncode == 2
    assert recorded.stdout == b"out:IN\n" and recorded.stderr == b"refused"
    assert (log[0]["stdin"], log[0]["stdout"], log[0]["stderr"], log[0]["exit_code"]) == \
        ("IN", "out:IN\n", "refused", 2)
