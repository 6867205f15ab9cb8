"""Which tool calls start a forge process, in the real host.

forge's PreToolUse hook starts for every tool (matcher `*`), reads included: reading is
never a role's to refuse, but a model that only reads still makes a model request per call,
and a goal's budget holds from its first tool call (goal/events/tool_call.py). The guard answers a
read from the receipt-key check alone, so the read of the key is refused there, by path,
whatever name leads to it. Measured here: the host starts the hook for Read, Grep and Glob
as for a write, and a matcher it cannot compile starts no hook at all, for any tool (so an
uncompilable one would leave writes unguarded: each of forge's matchers the host reads as a
regular expression is compiled by JavaScript's engine, the host's, in this test).
"""

from __future__ import annotations

import json
import re
import subprocess
import sys

import pytest

from forge_runtime.goal.store.layout import RECEIPT_KEY
from forge_runtime.hostkit.projects import write_plugin

pytestmark = pytest.mark.host

REPO_HOOKS = json.loads((__import__("pathlib").Path(__file__).resolve().parents[2]
                         / "hooks" / "hooks.json").read_text())
MIXED = """
rules:
  - name: done
    when: {last_tool_result_contains: "BASH-RAN"}
    reply: {text: "done"}
  - name: read, grep, glob
    times: 1
    reply:
      tool_calls:
        - {name: Read, input: {file_path: "{cwd}/r.txt"}}
        - {name: Grep, input: {pattern: "READ", path: "{cwd}"}}
        - {name: Glob, input: {pattern: "*.txt"}}
  - name: write, then read the key
    times: 1
    reply:
      tool_calls:
        - {name: Write, input: {file_path: "{cwd}/w.txt", content: "written"}}
        - {name: Read, input: {file_path: "{cwd}/.git/forge-goals/gates/receipt.key"}}
        - {name: Grep, input: {pattern: ".", path: "{cwd}/.git/forge-goals/gates",
                               output_mode: content}}
  - name: the shell
    reply: {tool_calls: [{name: Bash, input: {command: "echo BASH-RAN"}}]}
"""


def test_every_tool_reads_included_starts_the_guard_and_the_key_stays_refused(claude_host,
                                                                              project):
    (project / "r.txt").write_text("READ-ME\n")
    key = project / ".git/forge-goals/gates" / RECEIPT_KEY
    key.parent.mkdir(parents=True)
    key.write_bytes(b"KEY-BYTES-NOT-FOR-AGENTS")
    host = claude_host(MIXED)
    session = host.run("go", cwd=project, args=["--permission-mode", "acceptEdits",
                                                "--allowedTools", "Bash,Read,Grep,Glob,Write"])
    assert session.terminal_reason == "completed", session.stderr
    guarded = [(call.stdin["tool_name"], call.stdin["tool_input"].get("file_path"))
               for call in session.hooks_for("PreToolUse")]
    assert ("Read", str(project / "r.txt")) in guarded
    assert {tool for tool, _ in guarded} == {"Read", "Grep", "Glob", "Write", "Bash"}
    denied = [call for call in session.hooks_for("PreToolUse") if call.reply]
    # the key, by path, and a search over its directory (a Grep the old registration never
    # showed the guard); the host runs one response's calls' hooks in any order
    assert sorted((call.stdin["tool_name"], call.stdin["tool_input"].get("file_path")
                   or call.stdin["tool_input"].get("path")) for call in denied) == \
        [("Grep", str(key.parent)), ("Read", str(key))]
    assert {call.reply["hookSpecificOutput"]["permissionDecision"] for call in denied} == \
        {"deny"}
    assert "KEY-BYTES-NOT-FOR-AGENTS" not in json.dumps(session.model_requests())
    assert (project / "w.txt").read_text() == "written"


def _javascript_matches(pattern: str, names: list[str]) -> list[bool]:
    """What `new RegExp(pattern).test(name)` says for each name (the host's own engine)."""
    script = ("const [p, ...n] = JSON.parse(process.argv[1]);"
              "const r = new RegExp(p); console.log(JSON.stringify(n.map(x => r.test(x))));")
    done = subprocess.run(["node", "-e", script, json.dumps([pattern, *names])],
                          capture_output=True, text=True, timeout=60, check=True)
    return json.loads(done.stdout)


def test_the_guard_starts_for_every_tool_and_each_regex_matcher_compiles_in_the_hosts_engine():
    (guard,) = REPO_HOOKS["hooks"]["PreToolUse"]
    assert guard["matcher"] == "*"  # the host's word for every tool: never compiled
    assert not [hook for hook in guard["hooks"] if "if" in hook]
    for event, groups in REPO_HOOKS["hooks"].items():
        for group in groups:
            matcher = group.get("matcher")
            if matcher in (None, "", "*") or re.fullmatch(r"[A-Za-z0-9_|]+", matcher):
                continue  # a name list the host compares, not a regular expression
            intended = {"StopFailure": "rate_limit", "SubagentStop": "forge:clarifier"}[event]
            assert _javascript_matches(matcher, [intended, "other"]) == [True, False]


SHELL_ONLY = """
rules:
  - name: done
    when: {last_is_tool_result: true}
    reply: {text: "done"}
  - name: the shell
    reply: {tool_calls: [{name: Bash, input: {command: "touch {cwd}/ran.txt"}}]}
"""


def test_a_matcher_the_host_cannot_compile_starts_no_hook(claude_host, project, tmp_path):
    """Why every matcher of forge's is compiled above: the host skips such a hook silently."""
    log = tmp_path / "fired.txt"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\ncat > /dev/null; echo fired >> {log}\n")
    hook.chmod(0o755)
    plugin = write_plugin(tmp_path / "probe", "probe", {"PreToolUse": [
        {"matcher": "(", "hooks": [{"type": "command", "command": str(hook)}]}]})
    session = claude_host(SHELL_ONLY, plugin_dirs=[plugin]).run(
        "go", cwd=project, args=["--allowedTools", "Bash"])
    assert session.terminal_reason == "completed", session.stderr
    assert (project / "ran.txt").exists() and not log.exists()
    assert sys.executable  # the probe hook is a shell script: no forge in this session
