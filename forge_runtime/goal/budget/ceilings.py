"""Which of a tranche's ceilings a goal has reached: turns, tokens, minutes, dollars, the
plan's windows (goal/budget/plan.py), and the host's usage limit.

Plain arithmetic over a goal's fields and record times (`YYYY-MM-DDTHH:MM:SSZ`), importing
only `time` and plan.py (which imports nothing): the ledger checks every transition with it,
and a goal session's PreToolUse asks it before every tool call (events/tool_call.py).
"""

import time

from forge_runtime.goal.budget.plan import FIVE_HOUR, SEVEN_DAY, WEEK_SPEND, over

TURNS, TOKENS, MINUTES, USD = "turns", "tokens", "minutes", "usd"
# the host stopped a turn of the goal for its plan's usage limit (hooks/stop_failure.py,
# goal/events/)
USAGE_LIMIT = "usage_limit"
ALL = (TURNS, TOKENS, MINUTES, USD, FIVE_HOUR, SEVEN_DAY, WEEK_SPEND, USAGE_LIMIT)


def now() -> str:
    """The time a record is written at, to the second, UTC."""
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def epoch(at: str) -> int:
    """Seconds since 1970 of a record's `at` (ledger.now()'s form), by hand: `time.strptime`
    imports `_strptime`, `re` and `locale`, a bare start for every charging Stop."""
    year, month, day = int(at[0:4]), int(at[5:7]), int(at[8:10])
    year -= month <= 2  # days from the civil date (H. Hinnant's algorithm)
    era = year // 400
    year_of_era = year - era * 400
    day_of_year = (153 * (month + (-3 if month > 2 else 9)) + 2) // 5 + day - 1
    day_of_era = year_of_era * 365 + year_of_era // 4 - year_of_era // 100 + day_of_year
    days = era * 146097 + day_of_era - 719468
    return days * 86400 + int(at[11:13]) * 3600 + int(at[14:16]) * 60 + int(at[17:19])


def minutes_used(goal: dict, at: str) -> int | None:
    """Whole minutes of the tranche's clock at `at`; None when the goal has no clock."""
    started = goal.get("tranche_started")
    if not isinstance(started, str):
        return None
    try:
        return (epoch(at) - epoch(started)) // 60
    except ValueError:  # not a time forge wrote
        return None


def usd_reached(goal: dict) -> bool:
    """The goal's dollars (picodollars, `picousd`) have reached its dollar ceiling."""
    ceiling = goal.get("usd_ceiling")
    return isinstance(ceiling, int) and goal.get("picousd", 0) >= ceiling


def usage_limited(goal: dict) -> bool:
    """The host stopped one of the tranche's turns for its usage limit, and the goal does
    not say to go on after one (`after_usage_limit: continue`)."""
    return goal.get("usage_limited") is True and goal.get("after_usage_limit") != "continue"


def plan_reached(goal: dict, at: str) -> list[str]:
    """The plan ceilings (goal/budget/plan.py) the goal has reached at `at`, first first."""
    if not isinstance(goal.get("plan_ceilings"), dict):
        return []
    try:
        return over(goal, epoch(at))
    except (ValueError, TypeError, KeyError):  # not forge's figures: the ledger refuses them
        return []


def reached(goal: dict, at: str) -> str | None:
    """The first of the tranche's ceilings the goal has reached at `at` (turns, tokens,
    dollars, minutes, the plan's windows, the host's usage limit), or None."""
    if goal["turn_count"] >= goal["turn_ceiling"]:
        return TURNS
    tokens = goal.get("token_ceiling")
    if isinstance(tokens, int) and goal.get("token_count", 0) >= tokens:
        return TOKENS
    if usd_reached(goal):
        return USD
    minutes = goal.get("minute_ceiling")
    if isinstance(minutes, int) and (minutes_used(goal, at) or 0) >= minutes:
        return MINUTES
    if usage_limited(goal):
        return USAGE_LIMIT
    return next(iter(plan_reached(goal, at)), None)
