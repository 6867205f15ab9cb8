"""Every scenario the bench runs, in the order it reports them.

The registry is its own module so that the scenarios' shared parts (scenarios.py: Plan,
Scenario, what a valid run looks like) sit below every module that defines scenarios
(brief, gates, goal, artifacts), and none of those has to import back the list that
names them (tests/test_architecture.py holds the bench to no circles).
"""

from __future__ import annotations

import json
from collections.abc import Callable

from bench import artifacts, brief, gates, goal, goal_remote
from bench.measure import Run
from bench.scenarios import (
    CLARIFIER,
    Plan,
    Scenario,
    expect_hint,
    floor_with_site,
    floor_without_site,
    hints_audit,
    post_tool_use_agent,
    pre_tool_use_bash_checked,
    pre_tool_use_bash_ledger,
    pre_tool_use_role_deny,
    pre_tool_use_unguarded,
    reference_read_input,
    reference_run_module,
    require_command,
    session_end_no_goal,
    session_start_no_goal,
    stop_no_goal,
    user_prompt_ordinary,
)
from bench.workspace import Workspace


def artifact_listing(command: str, count: int) -> Callable[[Workspace], Plan]:
    def prepare(space: Workspace) -> Plan:
        require_command(f"forge {command} --json")
        artifacts.build(space.root, count)

        def expect(run: Run) -> str | None:
            try:
                listed = json.loads(run.stdout)
            except ValueError:
                return f"not JSON: {run.stdout[:200]!r}"
            if not isinstance(listed, list) or (command == "list" and len(listed) != count):
                return f"expected a bare array of {count} artifacts"
            return expect_hint(run)
        return Plan(space.forge(command, "--json"), expect,
                    note="the index is built by the warm-up run, as by any earlier command")
    return prepare


def all_scenarios() -> list[Scenario]:
    return [
        Scenario("floor", "floor", "python3 -c pass", floor_with_site),
        Scenario("floor-no-site", "floor", "python3 -S -c pass", floor_without_site),
        Scenario("reference-run-module", "floor", "reference: python3 -c 'import runpy'",
                 reference_run_module),
        Scenario("reference-read-input", "floor",
                 "reference: runpy + json + parse the hook's stdin, no forge",
                 reference_read_input),
        Scenario("pre-tool-use-unguarded", "PreToolUse",
                 "PreToolUse, unguarded session (Read)", pre_tool_use_unguarded, True),
        Scenario("pre-tool-use-role-deny", "PreToolUse",
                 f"PreToolUse, {CLARIFIER} calls Write (deny)", pre_tool_use_role_deny, True),
        Scenario("pre-tool-use-bash-checked", "PreToolUse",
                 "PreToolUse, Bash checked against protected paths (allow)",
                 pre_tool_use_bash_checked, True),
        Scenario("pre-tool-use-bash-ledger", "PreToolUse",
                 "PreToolUse, Bash deleting the ledger (deny)", pre_tool_use_bash_ledger, True),
        Scenario("user-prompt-ordinary", "UserPromptSubmit",
                 "UserPromptSubmit, ordinary prompt", user_prompt_ordinary, True),
        *goal.activation_scenarios(),
        Scenario("stop-no-goal", "Stop", "Stop, session without a goal", stop_no_goal, True),
        Scenario("session-start-no-goal", "SessionStart",
                 "SessionStart, forge's dependencies present", session_start_no_goal, True),
        Scenario("post-tool-use-agent", "PostToolUse",
                 "PostToolUse, an Agent call that is not the clarifier", post_tool_use_agent,
                 True),
        Scenario("session-end-no-goal", "SessionEnd", "SessionEnd, session without a goal",
                 session_end_no_goal, True),
        *goal.charging_scenarios(),
        *goal.verify_scenarios(),
        *goal_remote.remote_scenarios(),
        *goal.status_line_scenarios(),
        *goal.mid_turn_scenarios(),
        *[Scenario(f"{command}-{count}", "CLI", f"forge {command} --json, {count:,} artifacts",
                   artifact_listing(command, count))
          for command in ("list", "tree") for count in (100, 2000)],
        Scenario("hints-audit", "CLI", "forge hints audit", hints_audit),
        *brief.scenarios(),
        *gates.gate_scenarios(),
    ]
