"""Scenarios that need the goal ledger.

- UserPromptSubmit for a person's `/goal` (records the pending activation);
- the Stop that confirms it from the transcript and activates (the goal's first turn);
- Stop charging a goal whose ledger already holds 20, 200 and 2,000 turns (each charge
  priced in dollars with the table its activation sealed, under a dollar ceiling as well
  as the turns': every bench goal is `goal: {tranche: {usd: 1000}}`, never reached);
- Stop catching up 1 and 20 turns whose own Stops died, on ledgers of 20 and 2,000 turns
  (0 missed is `stop-charge-*`; the 20 missed plus the Stop's own turn pass the ceiling, so
  that row ends in exhaustion);
- `forge goal verify` over those ledgers;
- the status line of a session without a goal and of the session charging one;
- PreToolUse of a goal session with a token ceiling, and of one with a dollar ceiling
  (every response priced with the sealed table before the call may run), after 1 MB of
  new transcript.

Ledgers are built through forge's own hook functions, turn by turn, with tranches added
the only way the contract allows (exhaustion, then a person's `/goal` again), so a
2,000-turn ledger holds 2,000 charges and 100 tranches. Before each measured run a
snapshot puts the ledger, state.md, the binding and the goal witness back, so every run
charges the same next turn from the same state.
"""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from bench.scenarios import (
    Plan,
    Scenario,
    expect_allowed,
    expect_hint,
    expect_hook_ran,
    expect_silent,
    require_command,
    require_module,
)
from bench.session import HostSession, hook_environment
from bench.snapshot import Snapshot
from bench.workspace import Workspace

SIZES = (20, 200, 2000)
CATCH_UP_SIZES = (20, 2000)
MISSED = (1, 20)  # 0 missed: the stop-charge rows
MID_TURN_BYTES = 1 << 20
OBJECTIVE = "Make every test in tests/test_parser.py pass"
# every bench goal's tranche: 20 turns and $1,000 (a bench turn costs about $0.07)
GUARD = "goal: {tranche: {usd: 1000}}\n"


def _write_guard(space: Workspace, text: str = GUARD) -> None:
    """The project's `.forge/guard.yaml`, its rule cache (beside the ledger) warmed as the
    first hook that read it would leave it, before any snapshot is taken: a real project
    validates its rule file once, not at every measured run."""
    from forge_runtime.guard import rules

    guard = space.root / ".forge" / "guard.yaml"
    guard.parent.mkdir(exist_ok=True)
    guard.write_text(text)
    rules.for_project(space.project())


def _ledger_present() -> None:
    require_module("forge_runtime.goal.events.stop", "the goal ledger's hook functions")


@dataclass
class BuiltGoal:
    """A goal charged `turns` times, active, its sessions bound to it."""

    space: Workspace
    sessions: list[HostSession]
    nonce: str

    def goal(self) -> dict:
        from forge_runtime.goal.store.ledger import Ledger

        return Ledger(self.space.project().ledger_root, self.nonce).head().goal

    def snapshot(self, name: str) -> Snapshot:
        project = self.space.project()
        return Snapshot([project.ledger_root, project.state_path, self.space.state_home],
                        self.space.scratch / f"snapshot-{name}")


def _expect_no_reply(reply: dict | None, what: str) -> None:
    if reply and (reply.get("continue") is False or reply.get("decision") == "block"):
        raise RuntimeError(f"forge refused {what}: {reply}")


def _person_goal(session: HostSession) -> None:
    from forge_runtime.hooks.goal_handlers import on_prompt

    _expect_no_reply(on_prompt(session.goal_prompt(OBJECTIVE)), "a person's /goal")
    session.host_sets_goal(OBJECTIVE)


def _turn(session: HostSession, number: int) -> dict | None:
    """One model turn and its Stop; the reply (None, a stuck warning, or exhaustion)."""
    from forge_runtime.hooks.goal_handlers import on_stop

    session.model_turn(number)
    reply = on_stop(session.stop_event())
    session.evaluator_says_not_met(OBJECTIVE)
    return reply


@contextlib.contextmanager
def _no_fsync():
    """Setup only: skip fsync while building a ledger in this process.

    The records are byte for byte what forge writes; only their durability across a power
    cut is skipped, which a throwaway fixture does not need. Measured runs are separate
    processes and pay every fsync.
    """
    real = os.fsync
    os.fsync = lambda fd: None
    try:
        yield
    finally:
        os.fsync = real


def _build(space: Workspace, turns: int, sessions: int) -> BuiltGoal:
    from forge_runtime.goal.events.replies import EXHAUSTED_CODE
    from forge_runtime.goal.rules import activation
    from forge_runtime.goal.store.ledger import EXHAUSTED
    from forge_runtime.goal.store.sessions import read_binding

    hosts = [HostSession(space) for _ in range(sessions)]
    _write_guard(space)
    with hook_environment(space), _no_fsync():
        for host in hosts:
            _person_goal(host)
        for number in range(1, turns + 1):
            host = hosts[(number - 1) % sessions] if number <= sessions else hosts[0]
            reply = _turn(host, number)
            if reply and reply.get("continue") is False:
                if EXHAUSTED_CODE not in reply.get("stopReason", ""):
                    raise RuntimeError(f"forge stopped the bench's goal: {reply}")
                if number < turns:
                    _person_goal(host)
        project = space.project()
        built = BuiltGoal(space, hosts, read_binding(project.ledger_root, hosts[0].id)["nonce"])
        if built.goal()["status"] == EXHAUSTED:  # room for the measured turns
            activation.activate(project, OBJECTIVE, hosts[0].id)
    goal = built.goal()
    if goal["turn_count"] != turns or goal["status"] != "active":
        raise RuntimeError(f"the bench built {goal['turn_count']} turns "
                           f"({goal['status']}), not {turns}")
    return built


def _clone(source: BuiltGoal, space: Workspace) -> BuiltGoal:
    """The same goal in another project: ledger, state file and transcripts copied."""
    mine, theirs = space.project(), source.space.project()
    _write_guard(space)
    shutil.copytree(theirs.ledger_root, mine.ledger_root)
    mine.state_path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copy2(theirs.state_path, mine.state_path)
    hosts = []
    for host in source.sessions:
        shutil.copy2(host.transcript, space.transcript(host.id))
        hosts.append(HostSession(space, host.id))
    return BuiltGoal(space, hosts, source.nonce)


_built: dict[tuple[Path, int, int], BuiltGoal] = {}


def build_goal(space: Workspace, turns: int, sessions: int = 1) -> BuiltGoal:
    """A goal charged exactly `turns` turns, left active with room for more turns.

    The first session activates it; the others bind to it with the same `/goal` (each
    binding charges that session's first turn). At each ceiling a person's `/goal` adds a
    tranche, confirmed at the next Stop as in a real session. A goal of the same shape is
    built once per bench run and copied into each project that needs it.
    """
    if turns < sessions:
        raise ValueError("every session charges at least its first turn")
    key = (space.fixtures, turns, sessions)
    if key not in _built or not _built[key].space.root.exists():
        source = Workspace.create(space.plugin_root, space.python, space.fixtures,
                                  f"goal-{turns}-turns-{sessions}-sessions")
        _built[key] = _build(source, turns, sessions)
    return _clone(_built[key], space)


# -- what a valid run does ---------------------------------------------------------------------

def _turn_count(space: Workspace) -> int | None:
    from forge_runtime.goal.store import state_file

    goal = state_file.read(space.project().state_path).goal
    return goal["turn_count"] if goal else None


def _charged(space: Workspace, wanted: int):
    def expect(run) -> str | None:
        problem = expect_hook_ran(run)
        if problem:
            return problem
        if b'"continue": false' in run.stdout:
            return f"forge stopped the session: {run.stdout[:300]!r}"
        count = _turn_count(space)
        if count != wanted:
            return f"turn count is {count}, expected {wanted}"
        return _unpriced(space)
    return expect


def _unpriced(space: Workspace) -> str | None:
    """Why the last charge carries no dollars (every goal's charges are priced with the
    table its activation sealed, goal/budget/pricing.py) or its goal no dollar ceiling, or None."""
    from forge_runtime.goal.store import state_file
    from forge_runtime.goal.store.ledger import Ledger

    project = space.project()
    head = Ledger(project.ledger_root,
                  state_file.read(project.state_path).goal["nonce"]).current()
    picousd = (head.record.get("usage") or {}).get("picousd")
    if not isinstance(head.goal.get("usd_ceiling"), int):
        return f"the goal has no dollar ceiling: {head.goal!r}"
    return None if isinstance(picousd, int) and picousd > 0 else \
        f"the charge carries no dollars: {head.record.get('usage')!r}"


# -- scenarios -----------------------------------------------------------------------------------

def goal_prompt(space: Workspace) -> Plan:
    """UserPromptSubmit for `/goal ...` in a project with no goal yet."""
    from forge_runtime.goal.store import sessions

    _ledger_present()
    _write_guard(space)
    host = HostSession(space)
    event = host.goal_prompt(OBJECTIVE)
    project = space.project()
    snapshot = Snapshot([project.ledger_root, space.state_home], space.scratch / "snapshot")

    def expect(run) -> str | None:
        # In the default posture (the kernel layer in force) the /goal gets no reply at all.
        problem = expect_hook_ran(run) or (
            f"the /goal was answered: {run.stdout[:300]!r}" if run.stdout.strip() else None)
        if problem:
            return problem
        if sessions.PENDING not in sessions.involvement(project.ledger_root, host.id):
            return "no pending activation was recorded"
        return None

    return Plan(space.hook(event), expect, snapshot.restore,
                note="records a pending activation; the transcript confirms it at Stop")


def goal_confirm(space: Workspace) -> Plan:
    """The first Stop of a person's `/goal`: confirm from the transcript, activate (sealing
    the price table for its dollar ceiling), charge."""
    _ledger_present()
    _write_guard(space)
    host = HostSession(space)
    with hook_environment(space):
        _person_goal(host)
    host.model_turn(1)
    project = space.project()
    snapshot = Snapshot([project.ledger_root, project.state_path, space.state_home],
                        space.scratch / "snapshot")
    return Plan(space.hook(host.stop_event()), _charged(space, 1), snapshot.restore)


def stop_beside_a_goal(space: Workspace) -> Plan:
    """Stop of a session with no goal, in a repository where another session runs one."""
    _ledger_present()
    build_goal(space, 200)
    bystander = HostSession(space)
    bystander.model_turn(1)
    return Plan(space.hook(bystander.stop_event(continuation=False)), expect_silent,
                note="another session of the repository runs a 200-turn goal")


def stop_continuation_without_goal(space: Workspace) -> Plan:
    """A Stop-hook continuation (`stop_hook_active`) of a session forge never bound, after
    200 turns: forge reads the transcript's tail to see whether a native goal runs unbudgeted."""
    _ledger_present()
    session = HostSession(space)
    for number in range(1, 201):
        session.model_turn(number)
    return Plan(space.hook(session.stop_event(continuation=True)), expect_silent,
                note="another plugin's Stop hook keeps the turn going; no native goal")


def charging(turns: int):
    def prepare(space: Workspace) -> Plan:
        _ledger_present()
        built = build_goal(space, turns)
        host = built.sessions[0]
        host.model_turn(turns + 1)
        snapshot = built.snapshot("charge")
        return Plan(space.hook(host.stop_event()), _charged(space, turns + 1),
                    snapshot.restore,
                    note=f"charges turn {turns + 1} of a ceiling of {turns + 20}")
    return prepare


def catching_up(turns: int, missed: int):
    """A Stop whose transcript shows `missed` finished turns no Stop charged, then its own."""
    def prepare(space: Workspace) -> Plan:
        _ledger_present()
        built = build_goal(space, turns)
        host = built.sessions[0]
        for number in range(turns + 1, turns + missed + 1):  # their Stop hooks died
            host.model_turn(number)
            host.evaluator_says_not_met(OBJECTIVE)
        host.model_turn(turns + missed + 1)
        snapshot = built.snapshot("catch-up")
        ceiling = built.goal()["turn_ceiling"]
        if turns + missed + 1 <= ceiling:
            expect = _charged(space, turns + missed + 1)
        else:
            expect = _exhausted(space, ceiling)
        return Plan(space.hook(host.stop_event()), expect, snapshot.restore,
                    note=f"charges {missed} late turn(s) and its own on a {turns:,}-turn ledger")
    return prepare


def _exhausted(space: Workspace, ceiling: int):
    def expect(run) -> str | None:
        problem = expect_hook_ran(run)
        if problem:
            return problem
        if b"FORGE_GOAL_BUDGET_EXHAUSTED" not in run.stdout:
            return f"expected the catch-up to exhaust the goal, got {run.stdout[:300]!r}"
        count = _turn_count(space)
        return None if count == ceiling else f"turn count is {count}, expected {ceiling}"
    return expect


def verifying(turns: int):
    def prepare(space: Workspace) -> Plan:
        require_command("forge goal verify")
        _ledger_present()
        build_goal(space, turns)

        def expect(run) -> str | None:
            problem = expect_hint(run)
            if problem or run.exit_code:
                return problem or f"verify exited {run.exit_code}: {run.stdout[-300:]!r}"
            return None if f"{turns}/{turns + 20}".encode() in run.stdout else \
                f"verify did not report {turns} turns: {run.stdout[-300:]!r}"
        return Plan(space.forge("goal", "verify"), expect)
    return prepare


def status_line_input(space: Workspace, session_id: str) -> dict:
    """What Claude Code 2.1.332 sends a status-line command (measured; the cost, context
    window and prompt-cache objects it also sends are left out)."""
    root = str(space.root)
    return {"session_id": session_id, "transcript_path": str(space.transcript(session_id)),
            "cwd": root, "model": {"id": "claude-opus-5-5", "display_name": "Opus 5.5"},
            "workspace": {"current_dir": root, "project_dir": root, "added_dirs": []},
            "version": "2.1.332", "output_style": {"name": "default"}}


def status_line_without_goal(space: Workspace) -> Plan:
    """The status line of a session with no goal, while another session runs one."""
    require_module("forge_runtime.statusline", "the status line")
    build_goal(space, 200)
    return Plan(space.statusline(status_line_input(space, HostSession(space).id)),
                expect_silent, note="another session of the repository runs a 200-turn goal")


def status_line_with_goal(space: Workspace) -> Plan:
    """The status line of the session whose goal holds 200 turns: gauge, numbers, tokens,
    dollars."""
    require_module("forge_runtime.statusline", "the status line")
    built = build_goal(space, 200)

    def expect(run) -> str | None:
        import re

        if run.exit_code != 0 or run.stderr:
            return f"exit {run.exit_code}: {run.stderr.decode(errors='replace')[-300:]}"
        shown = run.stdout.decode(errors="replace")
        # 11 tranches of $1,000 (the 10 the 200 turns used up, and one with room)
        return None if re.search(r" 200/220 · 4\.7M tok · \$[\d.]+/\$11k\n", shown) else \
            f"expected the gauge at 200/220 with the turns' tokens and dollars, got {shown[:300]!r}"
    return Plan(space.statusline(status_line_input(space, built.sessions[0].id)), expect)


def status_line_with_plan(space: Workspace) -> Plan:
    """That status line on a subscription login: the plan's windows in its input, which
    forge keeps for the hooks (a small file and its mirror) before it draws the gauge."""
    require_module("forge_runtime.goal.hosts.plan_readings", "the plan's windows")
    plan = status_line_with_goal(space)
    now = int(time.time())
    event = {**json.loads(plan.command.stdin), "cost": {"total_api_duration_ms": 5000},
             "rate_limits": {"five_hour": {"used_percentage": 62, "resets_at": now + 3600},
                             "seven_day": {"used_percentage": 30,
                                           "resets_at": now + 6 * 86400}}}
    return Plan(space.statusline(event), plan.expect,
                note="keeps the 5-hour and weekly windows, then draws")


def pre_tool_use_mid_turn(tranche: str):
    """PreToolUse of a goal session with the ceiling `tranche` (YAML) after 1 MB of new
    transcript: the mid-turn budget check reads those bytes (and the subagents' directory),
    counts the turn's tokens so far (and, under a dollar ceiling, prices each response with
    the sealed table), and lets the call through."""
    def prepare(space: Workspace) -> Plan:
        return _mid_turn(space, tranche)
    return prepare


def _mid_turn(space: Workspace, tranche: str) -> Plan:
    _ledger_present()
    _write_guard(space, f"goal: {{tranche: {tranche}}}\n")
    host = HostSession(space)
    with hook_environment(space), _no_fsync():
        _person_goal(host)
        _expect_no_reply(_turn(host, 1), "the goal's first turn")
    host.mid_turn(MID_TURN_BYTES)
    read = {"file_path": str(space.root / "README.md")}
    host.asks_for("toolu_bench_read", "Read", read)
    project = space.project()
    snapshot = Snapshot([project.ledger_root, space.state_home], space.scratch / "snapshot")
    event = host.event("PreToolUse", tool_name="Read", tool_input=read,
                       tool_use_id="toolu_bench_read")
    return Plan(space.hook(event), expect_allowed, snapshot.restore,
                note=f"{MID_TURN_BYTES:,} bytes of the running turn since the last charge")


def mid_turn_scenarios() -> list[Scenario]:
    return [Scenario("pre-tool-use-goal-1mb", "PreToolUse",
                     "PreToolUse, goal with a token ceiling, 1 MB of new transcript",
                     pre_tool_use_mid_turn("{tokens: 1000000000000}"), True),
            Scenario("pre-tool-use-goal-usd-1mb", "PreToolUse",
                     "PreToolUse, goal with a dollar ceiling, 1 MB of new transcript",
                     pre_tool_use_mid_turn("{usd: 1000000}"), True)]


def status_line_scenarios() -> list[Scenario]:
    return [Scenario("statusline-no-goal", "Status line",
                     "status line, session without a goal", status_line_without_goal, True),
            Scenario("statusline-goal", "Status line",
                     "status line, session with a 200-turn goal", status_line_with_goal, True),
            Scenario("statusline-goal-plan", "Status line",
                     "status line, that goal on a subscription (keeps the plan's windows)",
                     status_line_with_plan, True)]


def activation_scenarios() -> list[Scenario]:
    return [Scenario("user-prompt-goal", "UserPromptSubmit",
                     "UserPromptSubmit, a person's /goal", goal_prompt, True),
            Scenario("stop-activate", "Stop",
                     "Stop confirming that /goal (activation, turn 1)", goal_confirm, True)]


def charging_scenarios() -> list[Scenario]:
    return [Scenario("stop-no-goal-beside-goal", "Stop",
                     "Stop, session without a goal, another session's goal running",
                     stop_beside_a_goal, True),
            Scenario("stop-no-goal-continuation", "Stop",
                     "Stop, session without a goal, a continuation after 200 turns",
                     stop_continuation_without_goal, True),
            *[Scenario(f"stop-charge-{n}", "Stop",
                       f"Stop charging a goal holding {n:,} turns, priced in dollars",
                       charging(n), True) for n in SIZES],
            *[Scenario(f"stop-catch-up-{m}-{n}", "Stop",
                       f"Stop catching up {m} missed turn(s), {n:,}-turn ledger",
                       catching_up(n, m), True) for n in CATCH_UP_SIZES for m in MISSED]]


def verify_scenarios() -> list[Scenario]:
    return [Scenario(f"goal-verify-{n}", "CLI", f"forge goal verify, {n:,} turns",
                     verifying(n)) for n in SIZES]
