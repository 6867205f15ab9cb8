"""The wrap-up turn: before a tranche's last turn, the model is told it is the last.

A tranche's last turn is the one whose charge reaches the turn ceiling, or the one within
which a token, dollar, minute or plan ceiling is reached at the goal's pace
(goal/views/forecast.py). The model hears FORGE_GOAL_LAST_TURN before it works that turn, as
model context of the event that comes before it:

- the Stop that charges the turn before it: on Claude Code its `additionalContext` is a
  system message of the next model request (measured, as the stuck warning's); Codex
  takes no context on a Stop (its Stop output has no `hookSpecificOutput`, and a block
  would continue the same turn uncharged), so there the person alone hears it, as
  `systemMessage`;
- UserPromptSubmit, when a person's prompt starts a goal's last turn: its
  `additionalContext` goes with the prompt on both hosts.

The notice is advice: the budget ends the tranche whatever the model does with it. A Stop
that charged nothing new (a repeated Stop) says nothing, since Claude Code answers model
context with another request.
"""

from __future__ import annotations

from forge_runtime.goal.budget import ceilings

LAST_TURN_CODE = "FORGE_GOAL_LAST_TURN"
STATE_FILE = ".forge/local/state.md"


def notice(goal: dict, way, pace, now: int) -> str:
    """The FORGE_GOAL_LAST_TURN text for `goal`, whose next turn is its tranche's last
    because of `way` (forecast.Runway) at `pace` (forecast.Pace), rendered through the
    hint contract: the same words on every host and event."""
    from forge_runtime import hints

    text = (f"{LAST_TURN_CODE}: this is the last turn of the tranche of goal "
            f"{goal['nonce']}: {reason(goal, way, pace, now)}. Leave {STATE_FILE}'s "
            "checklist and a note of where you stopped, commit nothing half-done.")
    return text + "\n" + hints.next_("forge goal status", "the budget left and when it "
                                     "runs out at this pace").render()


def reason(goal: dict, way, pace, now: int) -> str:
    """Why the next turn is the last, in words: the ceiling and the pace that reaches it."""
    from forge_runtime.goal.views.gauge import dollars_text, tokens_text

    if way.ceiling == ceilings.TURNS:
        return f"it is turn {goal['turn_ceiling']} of {goal['turn_ceiling']}"
    if way.ceiling == ceilings.TOKENS:
        return (f"at this goal's pace (about {tokens_text(round(pace.per_turn('tokens')))} "
                f"tokens a turn) its token ceiling ({tokens_text(goal.get('token_count', 0))} "
                f"of {tokens_text(goal['token_ceiling'])} used) is reached within it")
    if way.ceiling == ceilings.USD:
        return (f"at this goal's pace (about {dollars_text(round(pace.per_turn('picousd')))} "
                f"a turn) its dollar ceiling ({dollars_text(goal.get('picousd', 0))} of "
                f"{dollars_text(goal['usd_ceiling'])} spent) is reached within it")
    if way.ceiling == ceilings.MINUTES:
        return (f"at this goal's pace (about {_minutes(pace.per_turn('seconds'))} a turn) "
                f"the tranche's time ceiling ({ceilings.minutes_used(goal, _at(now))} of "
                f"{goal['minute_ceiling']} minutes) is reached within it")
    from forge_runtime.goal.budget.plan import percent
    from forge_runtime.goal.views.gauge import plan_figure

    rise = round(pace.plan[way.ceiling] / pace.turns)
    return (f"at this goal's pace (about {percent(rise)} of its {PLAN_NAMES[way.ceiling]} a "
            f"turn) its plan ceiling ({percent(plan_figure(goal, way.ceiling))} of "
            f"{percent(goal['plan_ceilings'][way.ceiling])}) is reached within it")


PLAN_NAMES = {"five_hour": "plan's 5-hour window", "seven_day": "plan's weekly window",
              "seven_day_spend": "own use of the week"}


def _minutes(seconds: float | None) -> str:
    if seconds is None:
        return "an unknown time"
    minutes = seconds / 60
    return f"{minutes:.1f} minutes" if minutes < 10 else f"{round(minutes)} minutes"


def _at(now: int) -> str:
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(now))


def closing(project, binding: dict, now: int, head=None):
    """(the Runway that makes the bound goal's next turn its tranche's last, its pace, the
    goal), or None; notes in `binding` where the tranche starts (the caller writes it when
    that changed). Read-only: `head` is the one the Stop's charge left, else the ledger's
    head as any reader takes it."""
    from forge_runtime.goal.store.ledger import Ledger
    from forge_runtime.goal.views import forecast, tranche

    ledger = Ledger(project.ledger_root, binding["nonce"])
    head = head or ledger.current()
    if head.goal["status"] != "active":
        return None
    pace, first = tranche.pace(ledger, head, binding.get(tranche.SEQ_KEY))
    if first is not None:
        binding[tranche.SEQ_KEY] = first["seq"]
    way = forecast.closing(forecast.runways(head.goal, pace, now))
    return None if way is None else (way, pace, head.goal)


def after_charge(project, event: dict, binding: dict, result, stuck: dict | None):
    """A Stop's reply once its turns are charged, for a goal still running: the stuck
    warning (`stuck`, events.stuck_reply), the last-turn notice, both in one message, or
    None."""
    from forge_runtime.goal.rules import charging

    if result.outcome != charging.CHARGED or result.goal["status"] != "active":
        return stuck
    told = _told(project, event, binding, result.head)
    if told is None:
        return stuck
    if stuck is not None:
        from forge_runtime import hints

        told = "\n".join(hints.split_rendered(stuck["systemMessage"])[0]) + "\n" + told
    return {"systemMessage": told,
            "hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": told}}


def at_prompt(project, event: dict) -> dict | None:
    """UserPromptSubmit's model context when a prompt into a bound session starts its
    goal's last turn, or None."""
    from forge_runtime.goal.store import sessions

    binding = sessions.read_binding(project.ledger_root, event["session_id"]) or {}
    if not isinstance(binding.get("nonce"), str):
        return None
    told = _told(project, event, binding)
    if told is None:
        return None
    return {"hookSpecificOutput": {"hookEventName": "UserPromptSubmit",
                                   "additionalContext": told}}


def _told(project, event: dict, binding: dict, head=None) -> str | None:
    """The notice when the bound goal's next turn is its tranche's last, or None; a
    tranche start found anew is kept in the session's binding. `head`: the ledger's head
    as the Stop's charge left it (None: read it)."""
    import time

    from forge_runtime.errors import ForgeError
    from forge_runtime.goal.store import sessions
    from forge_runtime.goal.views import tranche

    now = int(time.time())
    kept = binding.get(tranche.SEQ_KEY)
    try:  # advice only: a ledger it cannot read is the charge's and the next Stop's to refuse
        found = closing(project, binding, now, head)
        if binding.get(tranche.SEQ_KEY) != kept:
            sessions.write_binding(project.ledger_root, event["session_id"], binding)
    except (ForgeError, OSError):
        return None
    if found is None:
        return None
    way, pace, current = found
    return notice(current, way, pace, now)
