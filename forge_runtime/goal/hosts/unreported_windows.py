"""Plan windows a goal watches that the host does not report: a plan with no 5-hour window
(the host reports the weekly one only), or a login that reports none (an API key). forge
cannot hold a goal to a window it never sees, so the person hears it where forge first can:

- at the person's `/goal`, when forge has a reading of the session then (its status line
  keeps them for a session with a goal or a pending `/goal`): the prompt is refused, before
  the model sees it, with the window named and the way on (`require_reported`);
- else (a session's first `/goal`: no reading yet) at the first tool call, whose reading is
  the figures of the answer that asked for it (goal/hosts/plan_freshness.py): the call is denied
  (`denial`), and the turn's Stop ends the goal's autonomy (goal/events/).

A window the session's readings have shown once counts as reported (plan_readings REPORTED):
the host leaves a window out of its status line once its reset time passed with no answer
since, which says nothing of the plan.
"""

from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.goal.budget.plan import watched

UNREPORTED_CODE = "FORGE_GOAL_PLAN_UNREPORTED"
_NAMES = {"five_hour": "5-hour window", "seven_day": "weekly window"}


def unreported(ceilings, shown) -> list[str]:
    """The windows `ceilings` watch that are not among the windows `shown`."""
    return [name for name in watched(ceilings) if name not in shown]


def require_reported(project, event: dict, limits: dict) -> None:
    """Refuse a person's `/goal` whose plan ceilings (`limits`, as the goal would seal
    them) watch a window the host has not reported in this Claude Code session; nothing
    when forge has no reading of the session yet, or one it does not vouch for (the Stop
    fails closed on that)."""
    from forge_runtime.goal.hosts import plan_readings
    from forge_runtime.goal.hosts.host_adapter import adapter

    if adapter(event) is not None:  # Codex's /goal runs no hook: its first tool call tells
        return
    try:
        kept = plan_readings.claude_with_notes(str(project.ledger_root), event["session_id"])
    except ForgeError:
        return
    if kept is None:
        return
    shown = kept.get(plan_readings.REPORTED)
    shown = shown if isinstance(shown, list) else list(kept["windows"])
    missing = unreported(limits.get("plan_ceilings"), shown)
    if missing:
        fix, rationale = way_on(limits, shown)
        raise ForgeError(f"{UNREPORTED_CODE}: {_what(missing, shown)}, so forge could not "
                         "hold the goal to it", fix, rationale=rationale,
                         exit_code=EXIT_REFUSED)


def denial(goal: dict, missing: list[str], shown) -> str:
    """A tool call's denial: the figures of the answer that asked for it (`shown`, the
    windows they hold) lack windows the goal watches (`missing`)."""
    from forge_runtime import hints

    fix, rationale = way_on(goal, shown)
    return hints.error(
        f"{UNREPORTED_CODE}: {_what(missing, shown)} in the answer that asked for this "
        f"tool call, so forge cannot hold goal {goal.get('nonce') or '(not yet activated)'} "
        "to it; forge denies the call, and the turn's Stop ends the goal's autonomy",
        fix, rationale).render()


def _what(missing: list[str], shown) -> str:
    named = " and ".join(f"the plan's {_NAMES[name]}" for name in missing)
    reported = [_NAMES[name] for name in _NAMES if name in shown]
    host = (f"the host reports no figure of it (it reports the {' and the '.join(reported)} "
            "only)") if reported else \
        "the host reports no plan windows at all (an API key login reports none)"
    return f".forge/guard.yaml's goal.plan watches {named}, and {host}"


def way_on(goal: dict, shown) -> tuple[str, str]:
    """(the command, why) that lets the person's `/goal` run."""
    from forge_runtime import hints

    command = f"/goal {hints.sanitize(goal.get('objective') or '')}".rstrip()
    if any(name in shown for name in _NAMES):
        return command, ("after taking what the host does not report out of goal.plan in "
                         ".forge/guard.yaml: this plan has no such window to hold a goal to")
    return command, ("in a session of a subscription login, whose answers report the "
                     "plan's windows, or after taking goal.plan out of .forge/guard.yaml")
