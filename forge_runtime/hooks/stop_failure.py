"""StopFailure: the host ended a turn on an API error and runs this instead of Stop.

Claude Code 2.1.332 (measured on a subscription login): a 429 whose unified limiter says
`rejected` ends the turn at once, writes its synthetic usage-limit entry to the transcript
and fires StopFailure (`error: "rate_limit"`), never Stop; in the interactive TUI it then
waits for the reset and continues the goal by itself. The host ignores this hook's output,
so it only records: the turn is charged as a Stop would charge it (a `/goal` still pending
is confirmed first), and a turn the transcript shows stopped for the usage limit marks the
goal, which ends its autonomy there (goal/events/) unless `.forge/guard.yaml` says
`goal: {after_usage_limit: continue}`. The session's next prompt is then held
(events.hold_next_prompt): the host's continuation after the reset is blocked before it
reaches the model, with FORGE_GOAL_USAGE_LIMIT, and the host does not retry it. Should
that prompt get through all the same (its hook did not run), it is a turn the host started
for an ended goal: its tool calls are denied and its Stop ends the session
(goal/events/after_end.py). Should this hook not run, the session's next event charges
the same turn from the same transcript entry, and a prompt that finds the goal ended so is
blocked too.

hooks.json starts it only for `rate_limit`; a session without a goal pays three stats.
"""

from forge_runtime.hooks.charge_only import REQUIRED, on_wedged, watchdog_seconds

__all__ = ["REQUIRED", "handle", "on_wedged", "watchdog_seconds"]


def handle(event: dict) -> dict | None:
    from forge_runtime.hooks.charge_only import charged

    if charged(event):
        from forge_runtime.goal.events.held_prompt import hold_next_prompt

        hold_next_prompt(event)
    return None
