"""What a session pays for forge in all: processes and milliseconds per 100 tool calls.

A realistic mix (60 reads: Read, Grep and Glob; 25 Bash commands; 12 edits and writes; 3
Agent calls), with and without a goal. For each call the host's own rule decides which of
forge's hooks start (hooks/hooks.json: the matchers, a regular expression over the tool
name, and `if`, a permission pattern), and each started hook runs for real through the
launcher. Beside it, a bare-Python plugin with forge's registrations whose hook only reads
its input: what starting the processes costs, whatever they do. Reads start the guard too
(a goal's budget holds for every call), so the mix's 100 calls start 103 processes.
"""

from __future__ import annotations

import fnmatch
import json
import re
import statistics
import sys
from pathlib import Path

from bench.goal import build_goal
from bench.measure import Command, run_once
from bench.suite import INVALID, MEASURED, Settings
from bench.workspace import Workspace

READS = [("Read", {"file_path": "src/module_{n}.py"})] * 30 + \
    [("Grep", {"pattern": "def parse", "path": "."})] * 15 + \
    [("Glob", {"pattern": "src/**/*.py"})] * 15
SHELL = [("Bash", {"command": command}) for command in (
    "ls src", "git status --short", "python -m pytest -q tests/test_parser.py",
    "grep -rn TODO src | head", "git diff --stat")] * 5
EDITS = [("Edit", {"file_path": "src/module_{n}.py", "old_string": "x = 1",
                   "new_string": "x = 2"})] * 8 + \
    [("Write", {"file_path": "src/new_{n}.py", "content": "VALUE = 1\n"})] * 4
AGENTS = [("Agent", {"description": "look around", "prompt": "summarise src/",
                     "subagent_type": "general-purpose"})] * 3
MIX = READS + SHELL + EDITS + AGENTS
EVERY_TOOL = "*"
BARE_HOOK = "import sys; sys.stdin.buffer.read()"


def _matches(matcher: str | None, tool: str) -> bool:
    """The host's rule for a hook group's matcher (measured on Claude Code 2.1.332)."""
    if not matcher or matcher == EVERY_TOOL:
        return True
    if re.fullmatch(r"[A-Za-z0-9_|]+", matcher):
        return tool in matcher.split("|")
    return re.search(matcher, tool) is not None


def _condition_holds(condition: str | None, tool: str, tool_input: dict) -> bool:
    """`if`: a permission pattern `Tool(glob)` over the call's path."""
    if condition is None:
        return True
    name, _, pattern = condition.partition("(")
    path = tool_input.get("file_path") or tool_input.get("path") or ""
    return name == tool and fnmatch.fnmatch(str(path), pattern.rstrip(")"))


def started(registrations: dict, tool: str, tool_input: dict) -> list[str]:
    """The events whose hooks the host starts for one call (PreToolUse, then PostToolUse),
    one entry per hook process."""
    events = []
    for event in ("PreToolUse", "PostToolUse"):
        for group in registrations.get(event, []):
            if _matches(group.get("matcher"), tool):
                events += [event for hook in group["hooks"]
                           if _condition_holds(hook.get("if"), tool, tool_input)]
    return events


def _calls(space: Workspace) -> list[tuple[str, dict]]:
    calls = []
    for number, (tool, tool_input) in enumerate(MIX):
        calls.append((tool, {key: value.format(n=number % 50) if isinstance(value, str) else
                             value for key, value in tool_input.items()}))
    return calls


def _event(space: Workspace, session: str, event: str, tool: str, tool_input: dict,
           number: int) -> dict:
    fields = {"tool_name": tool, "tool_input": tool_input,
              "tool_use_id": f"toolu_mix_{number:03d}"}
    if event == "PostToolUse":
        fields["tool_response"] = {"content": [{"type": "text", "text": "done"}]}
    return space.event(event, session_id=session, **fields)


def _hundred(space: Workspace, registrations: dict, session: str, bare: bool) -> tuple[int, float]:
    """(processes, wall ms) for the mix's 100 calls under `registrations`."""
    processes, wall = 0, 0.0
    for number, (tool, tool_input) in enumerate(_calls(space)):
        for event in started(registrations, tool, tool_input):
            command = _event(space, session, event, tool, tool_input, number)
            if bare:
                run = run_once(Command(argv=(space.python, "-I", "-S", "-c", BARE_HOOK),
                                       env=space.hook_env(), cwd=space.root,
                                       stdin=json.dumps(command).encode()))
            else:
                run = run_once(space.hook(command))
                reply = run.stdout.decode(errors="replace").strip()
                if run.exit_code != 0 or "deny" in reply:
                    raise RuntimeError(f"{event} of {tool} did not let it run: "
                                       f"{run.exit_code} {reply[:200]}")
            processes += 1
            wall += run.wall_ms
    return processes, wall


def measure(settings: Settings, base: Path, rounds: int) -> dict:
    space = Workspace.create(settings.plugin_root, settings.python, base, "mix",
                             settings.fixtures)
    try:
        (space.root / "src").mkdir()
        for number in range(50):
            (space.root / "src" / f"module_{number}.py").write_text("x = 1\n")
        now = json.loads((settings.plugin_root / "hooks" / "hooks.json").read_text())["hooks"]
        goal_session = build_goal(space, turns=1).sessions[0].id
        rows = {}
        for name, registrations, session, bare in (
                ("no goal", now, "mix-no-goal", False),
                ("with a goal", now, goal_session, False),
                ("bare-Python plugin, forge's registrations", now, "mix-no-goal", True)):
            samples = [_hundred(space, registrations, session, bare)
                       for _ in range(max(rounds, 1))]
            rows[name] = {"processes": samples[0][0],
                          "wall_ms": round(statistics.median(s[1] for s in samples), 1)}
    except Exception as exc:  # forge changed under the bench: say so, keep the rest
        return {"status": INVALID, "reason": f"{exc.__class__.__name__}: {exc}"}
    return {"status": MEASURED, "calls": len(MIX), "rows": rows}


def line(result: dict) -> str:
    if result.get("status") != MEASURED:
        return f"A session's 100 tool calls: {result.get('status')}: {result.get('reason')}"
    shown = "; ".join(f"{name}: {row['processes']} processes, {row['wall_ms']:.0f} ms"
                      for name, row in result["rows"].items())
    return (f"A session's {result['calls']} tool calls (60 reads, 25 Bash, 12 edits, 3 Agent): "
            f"{shown}")


if __name__ == "__main__":
    sys.exit("run `python -m bench --only mix` instead")
