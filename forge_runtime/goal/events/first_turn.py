"""What a pending `/goal` holds its first turn to before any Stop confirms it: when the
prompt arrived, where the turn's usage starts, and the ceilings the goal will have
(the tool-call check, tool_call.py, reads them)."""

from __future__ import annotations

import os

from forge_runtime.errors import ForgeError
from forge_runtime.goal.hosts import transcript
from forge_runtime.project import Project


def first_turn_limits(project: Project, objective: str, event: dict) -> dict:
    """What a pending activation keeps for the ceilings of the first turn (tool_call.py): when
    the prompt arrived (the tranche's clock starts then), the goal's ceilings as the
    person's `/goal` would set them (`activation.prospect`), and where the turn's usage
    starts: the transcript's size and its subagent transcripts' marks at this moment."""
    from forge_runtime.goal.budget import ceilings

    path = event.get("transcript_path") or ""
    try:
        offset = os.path.getsize(path) if path else 0
    except OSError:
        offset = 0
    try:
        _, marks = transcript.read_subagents(path, {}) if path else (None, {})
    except transcript.Unattributable:
        marks = {}
    return plan_baseline(project, event,
                         first_turn_note(project, objective, ceilings.now(), offset, marks))


def plan_baseline(project: Project, event: dict, note: dict) -> dict:
    """A pending activation's `note` with where the goal's own use of the week starts, for
    a goal with plan ceilings: the plan as the person's `/goal` finds it (on Codex, whose
    `/goal` fires no hook, as the turn's first tool call finds it: the rollout's windows
    before the turn's first response), kept outside the work tree (goal/store/prompt_notes.py).
    A Claude Code `/goal` watching a window the host has not reported is refused
    (goal/hosts/unreported_windows.py)."""
    found = None
    if isinstance(note["limits"].get("plan_ceilings"), dict):
        from forge_runtime.goal.budget import plan
        from forge_runtime.goal.hosts import plan_readings, unreported_windows

        unreported_windows.require_reported(project, event, note["limits"])
        try:
            found = plan_readings.current(event, project.ledger_root)
        except ForgeError:  # a reading forge did not write starts nothing
            found = None
        note["limits"] = plan.baseline(note["limits"], found)
    from forge_runtime.goal.store import prompt_notes

    prompt_notes.keep(project.ledger_root, event["session_id"], note["limits"], found,
                     event.get("prompt_id"))
    return note


# what a first turn is held to (events/tool_call.py): the goal's counts and ceilings, the price
# table its dollars are counted with, and the plan's figures and ceilings (goal/budget/plan.py)
FIRST_TURN_FIELDS = ("nonce", "objective", "turn_count", "token_count", "token_ceiling",
                     "tranche_tokens", "minute_ceiling", "tranche_started", "picousd",
                     "usd_ceiling", "tranche_usd", "prices", "plan_ceilings", "plan_seen",
                     "plan_host", "plan_week", "after_usage_limit")


def first_turn_note(project: Project, objective: str, at: str, offset: int,
                    subagents: dict) -> dict:
    """The pending activation's part that events/tool_call.py holds a first turn to: the prompt's
    time `at`, where its usage starts (`offset` in the transcript, `subagents` marks), and
    the ceilings the `/goal` will give its goal (`activation.prospect`)."""
    from forge_runtime.goal.rules import activation

    goal = activation.prospect(project, objective, at)
    return {"at": at, "offset": offset, "subagents": subagents, "limits": {
        key: goal.get(key) for key in FIRST_TURN_FIELDS if key in goal}}
