"""Turns the host starts for the agent are inside the budget too.

The host starts turns no person typed: a wake-up or a cron the model scheduled, a
background task's or monitor's notice, a goal loop the model set itself, an idle check-in.
While the session's goal is active such a turn is charged like any other (catch_up.py).
Once the goal has ended (exhausted, complete, cleared) it may do nothing: each of its tool calls
is denied here with the checkpoint, its Stop ends it and puts it on the ledger as an
over-budget turn with its tokens (charging.overrun). A person's own prompt (the host's
record of who sent it, transcript.prompt_origin) is not autonomy and works as usual.

The tools that exist only to start later turns (`LATER_TURNS`) are refused in a goal's
session whenever the budget cannot pay for the turn they would start: the goal has ended,
or this turn is the tranche's last. A tool that sets the host's own goal loop, and a cron
saved to outlive the session (`durable`), are refused in every goal session: only a
person's `/goal` runs a budget.
"""

from __future__ import annotations

from forge_runtime.goal.store import sessions

# tool name -> what it starts (Claude Code's tool list, read from its binary; Codex CLI's goal
# tool). docs/goal-ledger.md lists every route, tool or not.
LATER_TURNS = {
    "ScheduleWakeup": "a turn at the time it names",
    "CronCreate": "a turn on every firing of its schedule",
    "RemoteTrigger": "a remote agent run on its schedule",
    "Monitor": "a turn for every event it reports",
}
GOAL_LOOPS = {
    "SetGoal": "the host's goal loop, for a condition the model chose",
    "create_goal": "Codex's goal loop, for an objective the model chose",
}
ENDED_CODE = "FORGE_GOAL_ENDED_TURN"
# how long a tool call of an ended goal's session waits for the prompt that opened its turn
# to reach the transcript: well inside PreToolUse's 2 s deadline
PROMPT_WAIT_SECONDS = 1.0


def denial(event: dict, root: str, binding: dict, goal: dict) -> str | None:
    """The deny reason for this tool call of a bound session whose goal is `goal` (as the
    last charge left it), or None: the rule for turns no person started, and for the tools
    that start them."""
    tool = event.get("tool_name")
    if tool in GOAL_LOOPS:
        return _refusal(event, goal, f"{tool} starts {GOAL_LOOPS[tool]}, which no budget "
                                     "covers; only a person's /goal runs one")
    tool_input = event.get("tool_input") or {}
    if tool == "CronCreate" and tool_input.get("durable") not in (None, False):
        return _refusal(event, goal, "CronCreate with `durable` saves its job to "
                        ".claude/scheduled_tasks.json, where it fires in later sessions, "
                        "after this goal, outside any budget")
    active = goal.get("status") == "active"
    if tool in LATER_TURNS and (not active or _last_turn(goal)):
        return _refusal(event, goal, f"{tool} starts {LATER_TURNS[tool]}, and goal "
                        f"{goal.get('nonce')}'s budget cannot pay for it ("
                        + ("it has ended" if not active else "this is the tranche's last "
                           "turn") + ")")
    if active:
        return None
    from forge_runtime.goal.hosts import transcript

    if _current_origin(event, root, binding) == transcript.PERSON:
        return None  # a person's own turn after the goal: not autonomy
    from forge_runtime.goal.budget import ceilings

    if goal.get("status") == "exhausted" and ceilings.usage_limited(goal):
        from forge_runtime.goal.events.replies import USAGE_LIMIT_CODE

        return _refusal(event, goal, f"goal {goal.get('nonce')} ended when the host stopped "
                        "it at its plan's usage limit, and this turn was started by the host "
                        "(its own continuation after the limit reset, a wake-up, a notice), "
                        "not by a person's prompt; its Stop ends the session and records it "
                        "over budget", USAGE_LIMIT_CODE)
    return _refusal(event, goal, f"goal {goal.get('nonce')} is {goal.get('status')} and this "
                    "turn was started by the host (a scheduled wake-up, a cron, a background "
                    "task's notice), not by a person's prompt; its Stop records it over "
                    "budget")


def _last_turn(goal: dict) -> bool:
    ceiling, count = goal.get("turn_ceiling"), goal.get("turn_count")
    return isinstance(ceiling, int) and isinstance(count, int) and ceiling - count <= 1


def _current_origin(event: dict, root: str, binding: dict) -> str | None:
    """Who started the turn this tool call belongs to: the newest prompt the transcript
    shows since the session's last charge, else the one that charge saw last.

    Every turn after that charge opens with a prompt entry (a person's, the host's, or the
    continuation of one), but the TUI writes its transcript late (transcript.py), on a busy
    machine later than the model's first tool call; meanwhile what the charge saw last
    would answer (the host's continuation entry after a goal's last Stop, say) and a
    person's prompt would count as the host's. So a call that finds no prompt entry since
    the charge waits for one, up to PROMPT_WAIT_SECONDS; a call no prompt opened (a
    background subagent's) is judged by what the charge saw after that wait, as before."""
    from forge_runtime.goal.hosts.host_adapter import transcript_reader

    reader, path = transcript_reader(event), event.get("transcript_path") or ""
    offset, carried = binding.get("offset", 0), binding.get("prompt_origin")
    chunk = reader.read_since(path, offset if isinstance(offset, int) else 0)

    def prompted(seen) -> bool:
        return any(seen.prompt_origin(entry) is not None for entry in seen.entries)

    if not prompted(chunk):
        chunk = reader.follow(path, chunk, prompted, PROMPT_WAIT_SECONDS)
    return chunk.open_origin(chunk.turn_origins(carried)[1])


def _refusal(event: dict, goal: dict, why: str, code: str = ENDED_CODE) -> str:
    from forge_runtime import hints
    from forge_runtime.goal.views import checkpoint

    if goal.get("status") == "exhausted":
        from forge_runtime.goal.events.replies import exhausted_hint

        hint = exhausted_hint(goal)
    else:
        hint = hints.next_("forge goal status", "see the goal's budget and how it ended")
    text = f"{code}: {why}; forge denies this tool call.\n{hint.render()}"
    return checkpoint.stamped(text, sessions.project_for(event).state_path)
