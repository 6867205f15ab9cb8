"""What the bench measures: each scenario builds its inputs and says what a valid run looks like.

A scenario whose feature does not exist yet raises `NotAvailable` with a plain reason, and
the report says so instead of inventing a number. A scenario whose run does not do what it
claims (a "deny" that allows, a charge that charges nothing) is reported as invalid: a
fast wrong answer is not a measurement.
"""

from __future__ import annotations

import dataclasses
import importlib.util
import json
from collections.abc import Callable
from dataclasses import dataclass, field

from bench.measure import Command, Run
from bench.workspace import Workspace


class NotAvailable(Exception):
    """The scenario's feature does not exist in this checkout yet."""


@dataclass
class Plan:
    """A prepared scenario: the command, how to reset between runs, and what a valid run is."""

    command: Command
    expect: Callable[[Run], str | None] = field(default=lambda run: None)
    before_each: Callable[[], None] | None = None
    note: str = ""


@dataclass(frozen=True)
class Scenario:
    """One thing to measure: a stable `key` for the JSON, a title for people, and how to
    prepare it; `is_hook` marks a hook process (the memory target applies to those)."""

    key: str
    group: str
    title: str
    prepare: Callable[[Workspace], Plan]
    is_hook: bool = False


def require_module(module: str, what: str) -> None:
    if importlib.util.find_spec(module) is None:
        raise NotAvailable(f"{what} ({module}) does not exist yet")


def require_command(command_line: str) -> None:
    from forge_runtime.cli.main import parses

    if not parses(command_line):
        name = " ".join(command_line.split()[:2])
        raise NotAvailable(f"`{name}` does not exist yet")


# -- what a valid run looks like ------------------------------------------------------------

def _reply(run: Run) -> dict | None:
    text = run.stdout.decode(errors="replace").strip()
    return json.loads(text) if text else None


def _decision(run: Run) -> str | None:
    reply = _reply(run) or {}
    return (reply.get("hookSpecificOutput") or {}).get("permissionDecision")


def expect_hook_ran(run: Run) -> str | None:
    """A hook answers with exit 0 and either nothing or one JSON object (the host's rules)."""
    if run.exit_code != 0:
        return f"the hook exited {run.exit_code}: {run.stderr.decode(errors='replace')[-300:]}"
    try:
        _reply(run)
    except ValueError:
        return f"the hook printed something that is not JSON: {run.stdout[:200]!r}"
    return None


def expect_silent(run: Run) -> str | None:
    """A hook with nothing to say: exit 0 and no reply (the host's no-op)."""
    return expect_hook_ran(run) or (f"expected no reply, got {run.stdout[:300]!r}"
                              if run.stdout.strip() else None)


def expect_allowed(run: Run) -> str | None:
    """PreToolUse that lets the tool run: no deny (silence or an explicit allow)."""
    return expect_hook_ran(run) or (f"expected the tool allowed, got {_decision(run)!r}"
                              if _decision(run) in ("deny", "ask") else None)


def expect_denied(run: Run) -> str | None:
    return expect_hook_ran(run) or (None if _decision(run) == "deny" else
                              f"expected a deny, got {run.stdout[:300]!r}")


def expect_hint(run: Run) -> str | None:
    """A CLI command: ends in the hint contract, and did not crash."""
    from forge_runtime import hints

    text = (run.stdout + run.stderr).decode(errors="replace")
    if "Traceback" in text or not hints.parse_lines(text):
        return f"no hint in the output (exit {run.exit_code}): {text[-300:]!r}"
    return None


# -- scenarios that need nothing but the hook frame -----------------------------------------

def floor_with_site(space: Workspace) -> Plan:
    return Plan(space.floor())


def floor_without_site(space: Workspace) -> Plan:
    return Plan(space.floor("-S"))


def reference_run_module(space: Workspace) -> Plan:
    """What `-m` adds to a pip-wired hook (the plugin launcher runs a file): importing runpy."""
    return Plan(space.floor(code="import runpy"))


def reference_read_input(space: Workspace) -> Plan:
    """The least a hook that reads its input pays: `-m`'s runpy, json, one parse."""
    event = space.event("Stop", stop_hook_active=False)
    return Plan(space.floor(code="import runpy, json, sys; json.loads(sys.stdin.buffer.read())",
                            stdin=json.dumps(event).encode()))


def pre_tool_use_unguarded(space: Workspace) -> Plan:
    event = space.event("PreToolUse", tool_name="Read",
                        tool_input={"file_path": str(space.root / "README.md")},
                        tool_use_id="toolu_bench_read")
    return Plan(space.hook(event), expect_allowed)


def user_prompt_ordinary(space: Workspace) -> Plan:
    event = space.event("UserPromptSubmit", prompt="Add a --verbose flag to the CLI")
    return Plan(space.hook(event), expect_hook_ran)


def stop_no_goal(space: Workspace) -> Plan:
    event = space.event("Stop", stop_hook_active=False,
                        last_assistant_message="Added the flag.", background_tasks=[],
                        session_crons=[])
    return Plan(space.hook(event), expect_silent)


def session_start_no_goal(space: Workspace) -> Plan:
    """SessionStart of a session whose interpreter already has forge's dependencies (the
    plugin's forge-env, or a pip install): nothing to build, one line for the Bash tool."""
    env_file = space.scratch / "claude-env"
    event = space.event("SessionStart", source="startup", model="claude-sonnet-4-5")
    command = space.hook(event)
    env = {**command.env, "CLAUDE_ENV_FILE": str(env_file),
           "CLAUDE_PLUGIN_DATA": str(space.scratch / "plugin-data")}
    probe_env = {**(command.probe_env or {}), "CLAUDE_ENV_FILE": str(env_file),
                 "CLAUDE_PLUGIN_DATA": str(space.scratch / "plugin-data")}

    def expect(run: Run) -> str | None:
        problem = expect_silent(run)
        if problem is None and b"export FORGE_PYTHON=" not in env_file.read_bytes():
            return "the hook did not tell the Bash tool which Python has forge"
        return problem

    return Plan(dataclasses.replace(command, env=env, probe_env=probe_env), expect,
                lambda: env_file.write_bytes(b""))


def post_tool_use_agent(space: Workspace) -> Plan:
    """PostToolUse of an Agent call that is not forge's clarifier (the hook's only matcher)."""
    event = space.event("PostToolUse", tool_name="Agent",
                        tool_input={"subagent_type": "general-purpose",
                                    "description": "Find the parser",
                                    "prompt": "Where is the CLI parser defined?"},
                        tool_response={"content": [{"type": "text", "text": "cli.py"}]},
                        tool_use_id="toolu_bench_agent")
    return Plan(space.hook(event), expect_silent)


def session_end_no_goal(space: Workspace) -> Plan:
    event = space.event("SessionEnd", reason="other")
    return Plan(space.hook(event), expect_silent)


# -- the guard --------------------------------------------------------------------------------

CLARIFIER = "forge:clarifier"
BENIGN_BASH = "git status --short && grep -rn TODO . | head -20 > notes.txt"
LEDGER_BASH = "rm -rf .git/forge-goals"


def _guard_present() -> None:
    require_module("forge_runtime.guard", "the guard")


def pre_tool_use_role_deny(space: Workspace) -> Plan:
    _guard_present()
    event = space.event("PreToolUse", agent_id="a1b2c3", agent_type=CLARIFIER,
                        tool_name="Write",
                        tool_input={"file_path": str(space.root / "notes.md"),
                                    "content": "a clarifier must not write\n"},
                        tool_use_id="toolu_bench_write")
    return Plan(space.hook(event), expect_denied)


def pre_tool_use_bash_checked(space: Workspace) -> Plan:
    _guard_present()
    event = space.event("PreToolUse", tool_name="Bash",
                        tool_input={"command": BENIGN_BASH, "description": "find TODOs"},
                        tool_use_id="toolu_bench_bash")
    return Plan(space.hook(event), expect_allowed,
                note="a writing command that stays clear of protected paths: allowed")


def pre_tool_use_bash_ledger(space: Workspace) -> Plan:
    _guard_present()
    event = space.event("PreToolUse", tool_name="Bash",
                        tool_input={"command": LEDGER_BASH, "description": "clean up"},
                        tool_use_id="toolu_bench_rm")
    return Plan(space.hook(event), expect_denied)


# -- CLI commands over artifacts, and the hint audit ------------------------------------------

def hints_audit(space: Workspace) -> Plan:
    require_command("forge hints audit")
    return Plan(space.forge("hints", "audit"), expect_hint)
