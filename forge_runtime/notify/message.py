"""The one message a goal's end sends: what ended, with which figures, why, and the way on.

    forge: goal exhausted (turns)                                  <- title (ASCII)
    Goal: the file done.txt exists
    Ended: exhausted at its turns ceiling (FORGE_GOAL_BUDGET_EXHAUSTED)
    Why: used 20 of 20 turns (1 x 20); forge stopped it.
    Spent: 20/20 turns · 41k tokens · $0.42/$5
    Where: goal 3f2a... in acme-api on build-box
    Next: /goal the file done.txt exists
      adds one more tranche of 20 turns
    Or: /goal clear

The way on is the one the person's session was given: the hint of the hook's reply that
names the end's code (the Stop's `Next: /goal ...`, a refusal's `Fix:`), else what forge
says of such an end elsewhere (events.exhausted_hint for a spent budget, `forge goal
status` for the rest). Built in the sender (notify/sender.py), never in a hook.
"""

from __future__ import annotations

import os

from forge_runtime import hints
from forge_runtime.goal.budget.ceilings import minutes_used, now
from forge_runtime.goal.budget.plan import percent
from forge_runtime.goal.views.gauge import dollars_text, plan_figure, plan_measures, tokens_text
from forge_runtime.records import record

# the ends a message tells of (the ledger's `ended`, and forge's refusals and warnings)
EXHAUSTED, USAGE_LIMIT, TAMPERED, MOVED, WEDGED, STUCK = (
    "exhausted", "usage limit", "tampered", "moved", "wedged", "stuck")
SAMPLE = "sample"  # `forge notify test`'s message: no goal ended
# the code each end is told with (None: the host's own verdict, which has none)
CODES = {EXHAUSTED: "FORGE_GOAL_BUDGET_EXHAUSTED", USAGE_LIMIT: "FORGE_GOAL_USAGE_LIMIT",
         "verified": "FORGE_GOAL_VERIFIED", "met, unverified": "FORGE_GOAL_UNVERIFIED",
         "plan figures missing": "FORGE_GOAL_PLAN_UNAVAILABLE",
         TAMPERED: "FORGE_GOAL_LEDGER_TAMPERED", MOVED: "FORGE_GOAL_LEDGER_MOVED",
         WEDGED: "FORGE_GOAL_WEDGED", STUCK: "FORGE_GOAL_STUCK_WARNING"}
# how loudly: the goal stopped short of done, or forge cannot vouch for it
URGENT = (EXHAUSTED, USAGE_LIMIT, TAMPERED, MOVED, WEDGED, "plan figures missing")
TITLES = {EXHAUSTED: "goal exhausted", USAGE_LIMIT: "goal stopped at the usage limit",
          TAMPERED: "goal ledger tampered", MOVED: "goal ledger moved",
          WEDGED: "goal ended: a hook wedged", STUCK: "goal stuck",
          "verified": "goal verified", "met": "goal met",
          "met, unverified": "goal met, unverified",
          "plan figures missing": "goal ended: plan figures missing",
          "cleared": "goal cleared", "impossible": "goal ended: impossible",
          "unknown": "goal ended", SAMPLE: "a sample notification (forge notify test)"}
# ntfy's tags (emoji short codes) for each kind of end
TAGS = {"urgent": "rotating_light", "done": "white_check_mark", "other": "information_source"}
TEXT_LIMIT = 1900  # Discord's `content` holds 2,000 characters


class Message(record("Message", "title text priority tags data")):
    """A rendered message: `title` (ASCII, for headers), `text` (the body), `priority`
    (high or default), ntfy `tags`, and `data` (the figures, for JSON receivers)."""

    __slots__ = ()


def build(job: dict) -> Message:
    """The message of a notification job (notify/trigger.py)."""
    end, goal = job["end"], job.get("goal") or {}
    code = CODES.get(end)
    hint = way_on(job, code)
    title = "forge: " + TITLES.get(end, f"goal ended: {end}")
    if end == EXHAUSTED and job.get("ceiling") not in (None, "turns"):
        title += f" ({job['ceiling']})"
    elif end == EXHAUSTED:
        title += " (turns)"
    lines = [f"Goal: {hints.sanitize(goal.get('objective') or '(unknown)')}",
             f"Ended: {_ended_words(job)}" + (f" ({code})" if code else ""),
             f"Why: {_clip(why(job))}"]
    figures = spent(goal)
    if figures:
        lines.append("Spent: " + " · ".join(figures))
    lines.append(f"Where: {where(job)}")
    lines += next_lines(hint)
    text = "\n".join(lines)
    urgent = end in URGENT
    data = {"end": end, "code": code, "nonce": job.get("nonce"),
            "objective": goal.get("objective"), "ceiling": job.get("ceiling"),
            "next": hint.next_action, "figures": figure_data(goal),
            "project": os.path.basename(os.fspath(job.get("project") or "")),
            "host": _machine()}
    tag = "urgent" if urgent else "done" if end in ("verified", "met") else "other"
    return Message(title, text, "high" if urgent else "default", TAGS[tag], data)


def way_on(job: dict, code: str | None):
    """The hint the person's session was given for this end: the refusal's own, else the
    one in the hook's reply that names the end's code, else forge's usual way on."""
    for text in ([job["hint"]] if job.get("hint") else []) + [
            text for text in job.get("replies") or () if code and code in text]:
        try:
            return hints.split_rendered(text)[1]
        except ValueError:
            continue
    end, goal = job["end"], job.get("goal") or {}
    if end in (EXHAUSTED, USAGE_LIMIT) and goal.get("objective"):
        from forge_runtime.goal.events.replies import exhausted_hint

        return exhausted_hint(goal)
    if end in ("met", "verified"):
        return hints.done("the goal is complete; forge goal status shows how it ended")
    nonce = job.get("nonce")
    return hints.next_("forge goal status" + (f" --nonce {nonce}" if nonce else ""),
                       "shows the goal, how it ended and its way on")


def next_lines(hint) -> list[str]:
    """The hint's lines; for an error only its `Fix:` (the message says the why)."""
    if hint.marker != hints.FIX:
        return hint.lines()
    lines = [f"Fix: {hint.text}"]
    if hint.rationale:
        lines.append(f"  {hint.rationale}")
    return lines + [f"Or: {other}" for other in hint.alternatives]


def why(job: dict) -> str:
    """Why the goal ended: the ceiling spent, in the stop message's words; else what the
    ledger's record or the refusal says."""
    goal = job.get("goal") or {}
    if job["end"] in (EXHAUSTED, USAGE_LIMIT) and "turn_count" in goal:
        from forge_runtime.goal.events.replies import spent_words

        return spent_words(goal, job.get("ceiling"))
    return str(job.get("why") or job["end"])


def _ended_words(job: dict) -> str:
    end = job["end"]
    if end == EXHAUSTED:
        return f"exhausted at its {job.get('ceiling') or 'turns'} ceiling"
    if end in ("met", "cleared", "impossible", "unknown"):
        return f"{end} (the host's verdict)"
    if end == SAMPLE:
        return "nothing: a sample of what a goal's end sends"
    return end


def spent(goal: dict) -> list[str]:
    """The goal's figures against its ceilings: turns, tokens, dollars, minutes, plan."""
    if "turn_count" not in goal:
        return []
    found = [f"{goal['turn_count']}/{goal.get('turn_ceiling')} turns"]
    tokens, ceiling = goal.get("token_count", 0), goal.get("token_ceiling")
    if tokens or isinstance(ceiling, int):
        found.append(tokens_text(tokens) + (f"/{tokens_text(ceiling)}"
                                            if isinstance(ceiling, int) else "") + " tokens")
    usd = goal.get("usd_ceiling")
    if "picousd" in goal or isinstance(usd, int):
        found.append(dollars_text(goal.get("picousd", 0))
                     + (f"/{dollars_text(usd)}" if isinstance(usd, int) else ""))
    if isinstance(goal.get("minute_ceiling"), int):
        found.append(f"{minutes_used(goal, now()) or 0}/{goal['minute_ceiling']} min")
    found += [f"{label} {percent(used)}/{percent(ceiling)} of the plan"
              for used, ceiling, label in plan_measures(goal)]
    return found


def figure_data(goal: dict) -> dict:
    """The figures for a JSON receiver: turns, tokens, dollars, plan shares (percent)."""
    if "turn_count" not in goal:
        return {}
    usd = goal.get("usd_ceiling")
    plan = goal.get("plan_ceilings") if isinstance(goal.get("plan_ceilings"), dict) else {}
    return {"turns": {"used": goal["turn_count"], "ceiling": goal.get("turn_ceiling")},
            "tokens": {"used": goal.get("token_count", 0),
                       "ceiling": goal.get("token_ceiling")},
            "usd": {"used": goal.get("picousd", 0) / 10**12,
                    "ceiling": usd / 10**12 if isinstance(usd, int) else None},
            "plan": {name: {"used": plan_figure(goal, name) / 100, "ceiling": points / 100}
                     for name, points in plan.items()}}


def where(job: dict) -> str:
    """The goal and the project and machine it ran on: a person with several finds it."""
    nonce = job.get("nonce")
    project = os.path.basename(os.fspath(job.get("project") or "")) or "?"
    return (f"goal {nonce} in " if nonce else "") + f"{project} on {_machine()}"


def _machine() -> str:
    return os.uname().nodename if hasattr(os, "uname") else "this machine"


def _clip(text: str, limit: int = 400) -> str:
    text = " ".join(str(text).split())
    return text if len(text) <= limit else text[:limit - 1] + "…"
