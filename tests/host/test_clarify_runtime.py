"""`forge clarify` through claude-agent-sdk and the real Claude Code binary, offline.

The scripted model asks two questions through `mcp__human__ask` (the person answers the first
with a number and lets the second time out), tries to write the brief itself (forge's guard
denies it), then answers with the brief. forge freezes it; a second run asks nothing.
"""

from __future__ import annotations

import json
import subprocess
import sys
import threading
import time

import pytest
from clarify_support import FIRST_QUESTION, ask_after

from forge_runtime.clarify.brief import Brief
from forge_runtime.clarify.channel import dialogue
from forge_runtime.hint_audit import output_problems
from forge_runtime.hostkit.runner import Host
from forge_runtime.hostkit.script import Script

pytestmark = pytest.mark.host

BRIEF = ("Here is the brief.\\n\\n## Goal\\nExport reports as CSV.\\n\\n## Acceptance criteria\\n"
         "- report --csv writes report.csv\\n\\n## Boundaries\\n- no other formats\\n\\n"
         "## Unknowns and assumptions\\n- Who reads the export? Nobody answered; "
         "assumed: the finance team.\\n")

SCRIPT = f"""
rules:
  - name: brief
    when:
      last_tool_result_contains: "the clarifier role may not use Write"
      conversation_contains: "record this question and the assumption"
    reply: {{text: "{BRIEF}"}}
  - name: try to write the brief
    when: {{last_tool_result_contains: '"outcome": "timeout"'}}
    reply:
      tool_calls: [{{name: Write, input: {{file_path: "{{cwd}}/brief.md", content: "x"}}}}]
{ask_after("CSV", "Who reads the export?")}{FIRST_QUESTION}"""


def errors(text: str) -> int:
    return sum(line.startswith("Error:") for line in text.splitlines())


class Terminal:
    """`forge clarify` with its output read line by line, as a person watching it would."""

    def __init__(self, project, env, *words):
        self.proc = subprocess.Popen(
            [sys.executable, "-m", "forge_runtime", "clarify", *words], cwd=project,
            env={**env, "NO_COLOR": "1"}, stdin=subprocess.PIPE, stdout=subprocess.PIPE,
            stderr=subprocess.PIPE, text=True)
        self.lines: list[str] = []
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self):
        for line in self.proc.stdout:
            self.lines.append(line)

    def wait_for(self, text: str, limit: float = 60) -> None:
        deadline = time.monotonic() + limit
        while not any(text in line for line in self.lines):
            assert self.proc.poll() is None or self._reader.is_alive(), \
                "".join(self.lines) + self.proc.stderr.read()
            assert time.monotonic() < deadline, f"no {text!r} in:\n{''.join(self.lines)}"
            time.sleep(0.05)

    def type(self, text: str) -> None:
        self.proc.stdin.write(text)
        self.proc.stdin.flush()

    def finish(self, limit: float = 90) -> tuple[int, str, str]:
        try:
            code = self.proc.wait(timeout=limit)
        finally:
            if self.proc.poll() is None:
                self.proc.kill()
        self._reader.join(5)
        return code, "".join(self.lines), self.proc.stderr.read()


def test_forge_clarify_asks_is_guarded_freezes_the_brief_and_then_asks_nothing(
        project, tmp_path, claude_bin):
    with Host(tmp_path / "host", Script.parse(SCRIPT), isolate_network=False,
              claude_bin=claude_bin) as host:
        _, env = host.interactive(project, tmp_path / "run")  # pretend HOME, loopback model
        screen = Terminal(project, env, "--timeout", "3", "export reports")
        screen.wait_for("2. JSON")
        screen.type("1\n")
        code, out, err = screen.finish()
        rules = [request["rule"] for request in host.server.requests]

        assert code == 0, out + err
        assert rules.count("first question") == 1 and rules.count("second question") == 1
        assert rules[-1] == "brief"
        write_result = [r for r in host.server.requests if r["rule"] == "brief"][0]
        assert "forge guard: the clarifier role may not use Write" in json.dumps(write_result)
        assert not (project / "brief.md").exists()

        assert "Question 1: Which format?\n" in out and "-> CSV" in out
        assert "Question 2: Who reads the export?" in out
        assert "(no answer in time: the model decides and records its assumption)" in out
        assert output_problems(out) == []
        path = project / ".forge" / "notes" / "brief.md"
        brief = Brief.load(path)
        assert brief.complete
        assert "Who reads the export?" in brief["Unknowns and assumptions"]
        assert f"brief frozen at {path}" in out
        log = dialogue(project / ".forge" / "local" / "clarify-dialogue.jsonl")
        assert [(e["question"], e["outcome"], e["answer"]) for e in log] == [
            ("Which format?", "answered", "CSV"), ("Who reads the export?", "timeout", None)]
        assert not (project / ".forge" / "local" / "clarify-session.json").exists()

        asked_before = len(host.server.requests)
        again = Terminal(project, env, "export reports")
        code, out, err = again.finish()
        assert code == 0, out + err
        assert len(host.server.requests) == asked_before  # no model session at all
        assert "Question" not in out
        assert f"a brief is already frozen at {path}; nothing to ask" in out
        assert out.rstrip().splitlines()[-2] == (
            "Next: /goal every acceptance criterion of the brief holds: "
            "report --csv writes report.csv")


def test_no_reachable_model_is_one_error_with_a_fix(project, tmp_path):
    env = {"PATH": "/usr/bin:/bin", "HOME": str(tmp_path / "home"), "NO_COLOR": "1",
           "ANTHROPIC_API_KEY": "sk-test", "ANTHROPIC_BASE_URL": "http://127.0.0.1:9",
           "CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC": "1", "DISABLE_TELEMETRY": "1"}
    (tmp_path / "home").mkdir()
    shown = subprocess.run([sys.executable, "-m", "forge_runtime", "clarify", "x"], cwd=project,
                           env=env, capture_output=True, text=True, timeout=120)
    assert shown.returncode == 2
    text = shown.stdout + shown.stderr
    assert output_problems(text) == [] and errors(text) == 1
    assert "FORGE_MODEL_UNREACHABLE" in text and "Fix: claude auth status" in text
    assert not (project / ".forge" / "notes" / "brief.md").exists()
    del env["ANTHROPIC_API_KEY"]
    shown = subprocess.run([sys.executable, "-m", "forge_runtime", "clarify", "x"], cwd=project,
                           env=env, capture_output=True, text=True, timeout=120)
    text = shown.stdout + shown.stderr
    assert shown.returncode == 2 and errors(text) == 1
    assert "Fix: claude auth login" in text and output_problems(text) == []
