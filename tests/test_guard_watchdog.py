"""The guard answers whatever the input: a hard watchdog, bounded MCP walks, a slow corpus.

No timing is asserted (timing lives in `python -m bench --only adversarial`); what is
asserted is that every input gets an answer, and that a decision that does not finish is
a deny, even when it is stuck inside one C call.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from bench import adversarial
from bench.workspace import Workspace
from forge_runtime.guard.decide import MAX_OPAQUE_PATH_CHARS, MAX_OPAQUE_STRINGS, decide
from forge_runtime.hooks import pre_tool_use

REPO = Path(__file__).resolve().parents[1]
LAUNCHER = REPO / "hooks" / "forge-hook"
MCP = "mcp__files__write_file"


def hook(event: dict, cwd: Path, **env: str) -> subprocess.CompletedProcess:
    environ = {name: value for name, value in os.environ.items()
               if name != pre_tool_use.DEADLINE_ENV}
    environ.update(FORGE_PYTHON=sys.executable, CLAUDE_PROJECT_DIR=str(cwd), **env)
    return subprocess.run([str(LAUNCHER), "PreToolUse"], input=json.dumps(event).encode(),
                          env=environ, cwd=cwd, capture_output=True, timeout=60)


def reason(done: subprocess.CompletedProcess) -> str | None:
    """The deny reason, None for an allow; fails on anything that is neither."""
    assert done.returncode == 0, done.stderr[-500:]
    text = done.stdout.decode().strip()
    if not text:
        return None
    output = json.loads(text)["hookSpecificOutput"]
    assert output["permissionDecision"] == "deny"
    return output["permissionDecisionReason"]


def event(cwd: Path, tool: str = "Bash", tool_input: dict | None = None) -> dict:
    return {"session_id": "s1", "hook_event_name": "PreToolUse", "cwd": str(cwd),
            "tool_name": tool, "tool_input": tool_input or {"command": "ls"}}


def test_a_decision_that_overruns_its_deadline_is_denied(cli_project):
    # a command whose decision takes far longer than the 1 ms deadline (a plain `ls` is now
    # decided within it), and is allowed in time
    slow = event(cli_project, tool_input={"command": "; ".join(["ls"] * 2000)})
    denied = reason(hook(slow, cli_project, FORGE_GUARD_DEADLINE="0.001"))
    assert denied is not None and "no decision within 2 s" in denied
    assert denied.endswith("\nFix: forge doctor")
    assert reason(hook(slow, cli_project)) is None, "the same call, in time"


@pytest.mark.parametrize("value, seconds", [
    ("0.5", 0.5), ("10", 2.0), ("2", 2.0), ("0", 2.0), ("-1", 2.0), ("nan", 2.0),
    ("inf", 2.0), ("soon", 2.0)])
def test_the_deadline_can_be_shortened_but_never_lengthened_or_switched_off(
        monkeypatch, value, seconds):
    monkeypatch.setenv(pre_tool_use.DEADLINE_ENV, value)
    assert pre_tool_use.deadline_seconds() == seconds


def test_the_watchdog_fires_inside_one_long_c_call(tmp_path):
    # A catastrophic regex never returns to the interpreter between steps: a check between
    # steps, a thread or a Python signal handler would all wait for it (2**40 steps).
    code = ("import re\nfrom forge_runtime.hooks.dispatch import arm_watchdog\n"
            "arm_watchdog(0.2)\nre.match(r'(a+)+$', 'a' * 40 + 'b')\nprint('finished')\n")
    done = subprocess.run([sys.executable, "-I", "-c", code], cwd=tmp_path,
                          capture_output=True, timeout=60, env={**os.environ})
    assert done.returncode == 1
    assert done.stdout == b""
    assert b"Timeout" in done.stderr


def test_an_mcp_call_with_too_many_strings_is_denied_unread(cli_project):
    many = event(cli_project, MCP, {"paths": [f"x/{i}" for i in range(MAX_OPAQUE_STRINGS + 1)]})
    hint = decide(many)
    assert hint is not None and f"more than {MAX_OPAQUE_STRINGS} strings" in hint.error
    enough = event(cli_project, MCP, {"paths": [f"x/{i}" for i in range(MAX_OPAQUE_STRINGS)]})
    assert decide(enough) is None


def test_an_mcp_call_with_too_much_path_text_is_denied_unread(cli_project):
    long = event(cli_project, MCP, {"paths": ["a/" * 1000] * (MAX_OPAQUE_PATH_CHARS // 2000 + 1)})
    hint = decide(long)
    assert hint is not None and "characters of path-like strings" in hint.error
    # Long text that is no path (a file's content, with newlines) is not resolved, so allowed.
    content = event(cli_project, MCP, {"path": "notes.md", "content": "line\n" * 100000})
    assert decide(content) is None


def test_a_deeply_nested_mcp_argument_is_walked_without_recursion(cli_project):
    nested: list = [f"{cli_project}/.forge/./guard.yaml"]  # no marker: found by path
    for _ in range(500):
        nested = [nested, "notes.md"]
    hint = decide(event(cli_project, MCP, {"a": nested}))
    assert hint is not None and "forge's guard rule file" in hint.error


@pytest.mark.parametrize("name", list(adversarial.CORPUS))
def test_every_slow_input_of_the_bench_corpus_gets_an_answer(tmp_path, name):
    space = Workspace.create(REPO, sys.executable, tmp_path)
    adversarial_event = adversarial.events(space)[name]
    answer = reason(hook(adversarial_event, space.root))
    if adversarial.LEDGER in json.dumps(adversarial_event):
        assert answer is not None, f"{name}: a call naming the ledger was allowed"
