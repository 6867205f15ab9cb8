"""forge's status line in the real TUI: the budget while a `/goal` runs, the checkpoint at
the stop, and the person's own status line kept beside it.

The status line is installed the way a person does it (`forge init --statusline`) over a
status line of their own that re-runs every second (`refreshInterval`: forge keeps it), so
the gauge can be read from the screen several times while the 20 turns run.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
import time

import pytest

from forge_runtime.project import find_project

pytestmark = [pytest.mark.host,
              pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")]

OBJECTIVE = "the CSV importer handles quoted commas"
CHECKLIST = "- [x] read the CSV spec\n- [ ] parse the header row\n- [ ] handle quoted commas\n"
CHECKPOINT = "Checkpoint: 1 of 3 steps done; next unchecked step: parse the header row"
# Each turn takes a Bash `sleep` first, so the 20 turns outlast several one-second redraws
# of the status line even where the scripted model answers at once.
SLOW_TURNS = """
rules:
  - name: evaluator says not yet
    when: {goal_evaluator: true}
    reply: {verdict: {ok: false, reason: "GOAL-NOT-MET: keep working"}}
  - name: model answers after its command
    when: {last_is_tool_result: true}
    reply: {text: "Working on it."}
  - name: model runs a slow command
    reply:
      tool_calls:
        - name: Bash
          input: {command: "sleep 0.3", description: "wait"}
"""
# the project opts out of the kernel layer (tests/host/conftest.py): the line says so
GAUGE = re.compile(r"my own line  forge [▰▱]{10} (\d+)/20 · [0-9.]+k? tok · 1/3 steps · "
                   r"unsandboxed · ")


def _forge(project, host, *words: str) -> None:
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project), "HOME": str(host.home),
           "NO_COLOR": "1"}
    env.pop("PYTHONPATH", None)
    done = subprocess.run([sys.executable, "-m", "forge_runtime", *words], cwd=project,
                          env=env, capture_output=True, text=True, timeout=60)
    assert done.returncode == 0, done.stdout + done.stderr


def test_the_status_line_shows_the_budget_as_the_goal_runs_and_the_checkpoint_at_its_stop(
        claude_host, project, tui_factory):
    host = claude_host(SLOW_TURNS, env={"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"})
    settings = project / ".claude" / "settings.local.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"statusLine": {
        "type": "command", "command": "echo 'my own line'", "refreshInterval": 1}}))
    _forge(project, host, "init", "--statusline")
    state_path = find_project(project).state_path
    state_path.write_text(state_path.read_text() + CHECKLIST)

    tui = tui_factory(host, project)
    tui.wait_for(lambda: "❯" in tui.screen() and "my own line" in tui.screen(),
                 "the TUI prompt under the person's own status line")
    assert not GAUGE.search(tui.screen())  # no goal yet: forge adds nothing
    tui.type(f"/goal {OBJECTIVE}")
    seen: list[int] = []
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        screen = tui.screen()
        found = GAUGE.search(screen)
        if found and (not seen or seen[-1] != int(found.group(1))):
            seen.append(int(found.group(1)))
        if "budget spent" in screen:
            break
        time.sleep(0.1)
    # the status line can say so before the TUI has drawn forge's stop message
    tui.wait_for(lambda: CHECKPOINT in tui.screen(), "the checkpoint in forge's stop message")
    screen = tui.screen()
    assert len(seen) >= 3 and seen == sorted(seen) and seen[-1] == 20, (seen, screen)
    # the turns' tokens too, as the host recorded them (the scripted model's default usage)
    assert re.search(r"my own line  forge ▰▰▰▰▰▰▰▰▰▰ 20/20 · [0-9.]+k tok · 1/3 steps · "
                     r"unsandboxed · budget spent · next: parse the header row", screen), screen
    # the host draws the status line's colours; it shows no escape sequence as text
    assert "[3" not in screen.split("my own line")[-1]
    assert re.search(r"my own line  forge \x1b\[3[0-9]m▰", tui.screen(colours=True))
    # the person's line where forge stops: the exhaustion, the checkpoint, the same hint
    assert "FORGE_GOAL_BUDGET_EXHAUSTED" in screen and CHECKPOINT in screen
    stopped = [call for call in tui.hooks("Stop") if call["stdout"]]
    reason = json.loads(stopped[-1]["stdout"])["stopReason"].splitlines()
    assert reason[1:] == [CHECKPOINT, f"Next: /goal {OBJECTIVE}",
                          "  adds one more tranche of 20 turns", "Or: /goal clear"]

    # the model's context: the host renders the stop reason into its next request
    asked = len(host.server.requests)
    tui.type("where do we stand?")
    tui.wait_for(lambda: any(CHECKPOINT in json.dumps(request["body"])
                             for request in host.server.requests[asked:]),
                 "the checkpoint in the model's next request")
