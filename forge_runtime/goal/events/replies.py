"""The texts the goal's hook replies share: the stop messages of a spent budget, an ended
goal and a session past its allowance, their hints, and the stuck warning.

`hints` (with `unicodedata`) is imported where a reply is written: a Stop that charges a
turn and says nothing never needs it.
"""

from __future__ import annotations

from forge_runtime.errors import ForgeError
from forge_runtime.goal.store.ledger import EXHAUSTED, TRANCHE
from forge_runtime.goal.store.objective import normalise

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `hints` is imported where a reply is written
    from forge_runtime import hints


EXHAUSTED_CODE = "FORGE_GOAL_BUDGET_EXHAUSTED"
USAGE_LIMIT_CODE = "FORGE_GOAL_USAGE_LIMIT"
ENDED_TURN_CODE = "FORGE_GOAL_ENDED_TURN"


def stop_session(text: str) -> dict:
    """The Stop reply that ends native autonomy."""
    return {"continue": False, "stopReason": text}


def refusal_text(error: ForgeError) -> str:
    return error.hint().render()


def exhausted_hint(goal: dict) -> hints.Hint:
    """The way on from a spent budget: the same words in the Stop reply and `forge goal status`."""
    from forge_runtime import hints

    return hints.next_(f"/goal {goal['objective']}",
                       f"adds one more tranche of {tranche_words(goal)}", or_=["/goal clear"])


def tranche_words(goal: dict) -> str:
    """What one tranche of this goal holds: `20 turns`, and its token and minute ceilings."""
    from forge_runtime.goal.views.gauge import tokens_text

    words = [f"{TRANCHE} turns"]
    if isinstance(goal.get("token_ceiling"), int):
        words.append(f"{tokens_text(goal['tranche_tokens'])} tokens"
                     if isinstance(goal.get("tranche_tokens"), int) else "its tokens")
    if isinstance(goal.get("tranche_usd"), int):
        from forge_runtime.goal.budget.pricing import dollars

        words.append(dollars(goal["tranche_usd"]))
    if isinstance(goal.get("minute_ceiling"), int):
        words.append(f"{goal['minute_ceiling']} minutes")
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]


def spent_words(goal: dict, ceiling: str | None) -> str:
    """Which ceiling ended the tranche, in the stop message's words."""
    from forge_runtime.goal.budget import ceilings
    from forge_runtime.goal.views.gauge import tokens_text

    if ceiling == ceilings.TOKENS:
        return (f"used {tokens_text(goal.get('token_count', 0))} of "
                f"{tokens_text(goal['token_ceiling'])} tokens (the token ceiling) in "
                f"{goal['turn_count']} turns")
    if ceiling == ceilings.USD:
        from forge_runtime.goal.budget.pricing import dollars

        return (f"spent {dollars(goal.get('picousd', 0))} of {dollars(goal['usd_ceiling'])} "
                f"(the dollar ceiling) in {goal['turn_count']} turns")
    if ceiling == ceilings.MINUTES:
        return (f"ran {ceilings.minutes_used(goal, ceilings.now())} of {goal['minute_ceiling']} "
                f"minutes (the time ceiling) of this tranche in {goal['turn_count']} turns")
    if ceiling in (ceilings.FIVE_HOUR, ceilings.SEVEN_DAY, ceilings.WEEK_SPEND):
        from forge_runtime.goal.views.gauge import plan_words

        return f"{plan_words(goal, ceiling)} in {goal['turn_count']} turns"
    if ceiling == ceilings.USAGE_LIMIT:
        return (f"was stopped by the host at its plan's usage limit after {goal['turn_count']} "
                "turns; forge ended autonomy there, and refuses the host's own continuation "
                "after the limit resets")
    return (f"used {goal['turn_count']} of {goal['turn_ceiling']} turns "
            f"({goal['activation_count']} x 20)")


def pending_words(event: dict) -> str:
    """What the host says is still to wake the session (Claude Code's Stop input: running
    background tasks, scheduled prompts), in words, or ''."""
    tasks = [task for task in event.get("background_tasks") or []
             if isinstance(task, dict) and task.get("status") in ("running", "pending")]
    crons = [cron for cron in event.get("session_crons") or [] if isinstance(cron, dict)]
    if not tasks and not crons:
        return ""
    parts = ([f"{len(tasks)} background task{'s' if len(tasks) != 1 else ''}"] if tasks
             else []) + ([f"{len(crons)} scheduled prompt{'s' if len(crons) != 1 else ''}"]
                         if crons else [])
    return (f" Still pending: {' and '.join(parts)}; forge holds the prompts they send before "
            "they reach the model, and a turn one still starts does no work and goes on the "
            "ledger.")


def exhausted_text(goal: dict, late: int = 0, owed: int = 0, ceiling: str | None = None,
                   overrun: int = 0, pending: str = "") -> str:
    """The stop message; `ceiling` names the one spent (else the first the goal reached)."""
    from forge_runtime.goal.budget import ceilings

    ceiling = ceiling or ceilings.reached(goal, ceilings.now())
    code = USAGE_LIMIT_CODE if ceiling == ceilings.USAGE_LIMIT else EXHAUSTED_CODE
    head = f"{code}: goal {goal['nonce']} {spent_words(goal, ceiling)}; forge stopped it."
    if late:
        head += (f" {late} of this tranche's turns were charged late (their Stop hooks did "
                 "not finish).")
    if owed:
        head += f" {owed} more ran past the ceiling; the next tranche starts with them."
    if overrun:
        head += " " + overrun_words(overrun)
    return head + pending + "\n" + exhausted_hint(goal).render()


def overrun_words(overrun: int) -> str:
    return (f"{overrun} turn{'s' if overrun != 1 else ''} the host started after the goal "
            "ended (its own continuation after a usage limit, a scheduled wake-up, a cron, a "
            "background task's notice; no person's prompt) did no work and went on the ledger "
            "as over budget.")


def ended_turn_text(goal: dict, overrun: int) -> str:
    """The stop message for a turn the host started for a goal that had ended: at the
    host's usage limit (FORGE_GOAL_USAGE_LIMIT: the host continues such a goal by itself
    once the limit resets), or otherwise."""
    from forge_runtime.goal.budget import ceilings

    if goal["status"] == EXHAUSTED and ceilings.usage_limited(goal):
        return (f"{USAGE_LIMIT_CODE}: goal {goal['nonce']} ended when the host stopped it at "
                "its plan's usage limit; this turn is the host's own continuation after the "
                "limit reset (no person's prompt), so forge denies its work and stops it. "
                f"{overrun_words(max(overrun, 1))}\n" + exhausted_hint(goal).render())
    return (f"{ENDED_TURN_CODE}: goal {goal['nonce']} is {goal['status']}; this turn was "
            "started by the host, not by a person's prompt, so forge denies its work and "
            f"stops it. {overrun_words(max(overrun, 1))}\n" + ended_hint(goal).render())


def ended_hint(goal: dict) -> hints.Hint:
    """The way on from a goal that ended: another tranche for a spent one, else its story."""
    if goal["status"] == "exhausted":
        return exhausted_hint(goal)
    from forge_runtime import hints

    return hints.next_("forge goal status", "see how the goal ended and the turns the host "
                       "started after it")


def stuck_reply(goal: dict, unchanged: int) -> dict:
    from forge_runtime import hints
    from forge_runtime.goal.rules.charging import STUCK_CODE

    text = (f"{STUCK_CODE}: the checklist and next step in .forge/local/state.md have not "
            f"changed for {unchanged} charged turns ({goal['turn_count']} of "
            f"{goal['turn_ceiling']} used). Tick finished steps or rethink the plan.")
    text += "\n" + hints.next_("forge goal status", "see the budget and next step").render()
    return {"systemMessage": text,
            "hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": text}}


def on_unbound_goal(condition: str, why: str = "its binding is missing") -> dict | None:
    """The reply for a session in which the host's native goal `condition` runs
    (hosts/native_goal.py) while forge counts no turn of it: its binding deleted, a goal
    set before forge was installed, or a goal forge recorded as ended on a verdict the host
    did not keep (the transcript is a file an agent can append to). End it; the person's
    `/goal` binds or reopens it with the count it had."""
    from forge_runtime import hints

    objective = normalise(condition)
    if not objective:
        return None
    return stop_session(hints.error(
        f"FORGE_GOAL_UNBUDGETED: this session's native /goal runs while forge counts none "
        f"of its turns ({why})", f"/goal {objective}",
        "binds this session again; the objective keeps its count").render())
