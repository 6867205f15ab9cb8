"""`forge clarify` in a real terminal (tmux): a number picks an option, free text answers,
Enter leaves a question to the model; the screen and the frozen brief are checked."""

from __future__ import annotations

import os
import shlex
import shutil
import subprocess
import sys
import time

import pytest
from clarify_support import FIRST_QUESTION, ask_after

from forge_runtime.clarify.brief import Brief
from forge_runtime.hostkit.runner import Host
from forge_runtime.hostkit.script import Script

pytestmark = [pytest.mark.host,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

BRIEF = ("## Goal\\nExport reports as JSON for the finance team.\\n## Acceptance criteria\\n"
         "- report --json writes report.json\\n## Boundaries\\n- no CSV\\n"
         "## Unknowns and assumptions\\n- Include a totals row? Left to me: assumed no.\\n")

SCRIPT = f"""
rules:
  - name: brief
    when: {{last_tool_result_contains: '"outcome": "declined"'}}
    reply: {{text: "{BRIEF}"}}
{ask_after("the finance team", "Include a totals row?", "third question")}\
{ask_after("JSON", "Who reads the export?")}{FIRST_QUESTION}"""


class Screen:
    """`forge clarify` in a private tmux server; the pane stays after the command ends."""

    def __init__(self, cwd, env, *words):
        self.socket = f"forge-clarify-{os.getpid()}-{id(self)}"
        command = [sys.executable, "-m", "forge_runtime", "clarify", *words]
        line = (f"cd {shlex.quote(str(cwd))} && env -i "
                + " ".join(shlex.quote(f"{k}={v}") for k, v in env.items()) + " "
                + shlex.join(command) + "; echo EXITED $?; sleep 120")
        self._tmux("new-session", "-d", "-s", "clarify", "-x", "150", "-y", "50", line)

    def _tmux(self, *args: str) -> str:
        return subprocess.run(["tmux", "-L", self.socket, *args], check=True,
                              capture_output=True, text=True).stdout

    def text(self) -> str:
        return self._tmux("capture-pane", "-p", "-t", "clarify", "-S", "-200")

    def wait_for(self, text: str, timeout: float = 60.0) -> None:
        deadline = time.monotonic() + timeout
        while text not in self.text():
            assert time.monotonic() < deadline, f"no {text!r} on the screen:\n{self.text()}"
            time.sleep(0.2)

    def type(self, text: str) -> None:
        if text:
            self._tmux("send-keys", "-t", "clarify", "-l", text)
        self._tmux("send-keys", "-t", "clarify", "Enter")

    def close(self) -> None:
        subprocess.run(["tmux", "-L", self.socket, "kill-server"], capture_output=True)


def test_a_number_free_text_and_enter_in_a_terminal(project, tmp_path, claude_bin):
    with Host(tmp_path / "host", Script.parse(SCRIPT), isolate_network=False,
              claude_bin=claude_bin) as host:
        _, env = host.interactive(project, tmp_path / "run", {"TERM": "xterm-256color"})
        screen = Screen(project, env, "--asks", "3", "export reports")
        try:
            screen.wait_for("2. JSON")
            assert "(2 questions left)" in screen.text()
            screen.type("2")
            screen.wait_for("Question 2: Who reads the export?")
            screen.type("the finance team")
            screen.wait_for("Question 3: Include a totals row?")
            assert "(0 questions left)" in screen.text()
            screen.type("")
            screen.wait_for("EXITED")
            shown = screen.text()
        finally:
            screen.close()

    assert "EXITED 0" in shown, shown
    assert "Question 1: Which format?" in shown and "  1. CSV" in shown
    assert "-> JSON" in shown and "-> the finance team" in shown
    assert "(left to the model: it records its assumption)" in shown
    path = project / ".forge" / "notes" / "brief.md"
    assert f"brief frozen at {path}" in shown
    assert "Next: /goal every acceptance criterion of the brief holds: report --json writes " \
           "report.json" in shown
    brief = Brief.load(path)
    assert brief.complete and brief["Boundaries"] == "- no CSV"
    assert [r["rule"] for r in host.server.requests].count("brief") == 1


RESUMABLE = f"""
rules:
  - name: brief after the interruption
    when: {{last_user_text_contains: "This clarification was interrupted",
            conversation_contains: '"answer": "CSV"'}}
    reply: {{text: "{BRIEF}"}}
{ask_after("CSV", "Who reads the export?")}{FIRST_QUESTION}"""


def test_ctrl_c_leaves_no_brief_keeps_the_dialogue_and_the_next_run_continues(
        project, tmp_path, claude_bin):
    local = project / ".forge" / "local"
    with Host(tmp_path / "host", Script.parse(RESUMABLE), isolate_network=False,
              claude_bin=claude_bin) as host:
        _, env = host.interactive(project, tmp_path / "run", {"TERM": "xterm-256color"})
        screen = Screen(project, env, "export reports")
        try:
            screen.wait_for("2. JSON")
            screen.type("1")
            screen.wait_for("Question 2: Who reads the export?")
            screen._tmux("send-keys", "-t", "clarify", "C-c")
            screen.wait_for("EXITED")
            shown = screen.text()
        finally:
            screen.close()
        assert "EXITED 130" in shown, shown
        assert "Interrupted: no brief was written" in shown
        assert "Next: forge clarify 'export reports'" in shown
        assert not (project / ".forge" / "notes").exists()
        assert (local / "clarify-dialogue.jsonl").read_text().count('"answer": "CSV"') == 1
        assert (local / "clarify-session.json").exists()

        again = Screen(project, env, "export reports")
        try:
            again.wait_for("EXITED")
            shown = again.text()
        finally:
            again.close()
    assert "EXITED 0" in shown, shown
    assert "Question" not in shown
    assert Brief.load(project / ".forge" / "notes" / "brief.md").complete
    assert [r["rule"] for r in host.server.requests][-1] == "brief after the interruption"
    assert not (local / "clarify-session.json").exists()
