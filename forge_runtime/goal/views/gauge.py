"""The budget at a glance: a small gauge and the numbers, for the status line and the CLI.

    forge ▰▰▰▰▰▰▱▱▱▱ 12/20 · 3/7 steps · next: handle quoted commas
    forge [######----] 12/20 - 3/7 steps - next: handle quoted commas     (not UTF-8)
    forge ▰▰▱▱▱▱▱▱▱▱ 3/20 · unsandboxed · next: write the parser    (by the opt-out)
    forge ▰▰▰▰▱▱▱▱▱▱ 12/20 · 1.2M/3M tok · 41/240 min · next: ...    (with ceilings)
    forge ▰▰▰▱▱▱▱▱▱▱ 7/20 · $1.20/$5 · next: ...                      (a dollar ceiling)
    forge ▰▰▰▰▰▰▱▱▱▱ 7/20 · 5h 62%/80% · week 3%/10% · next: ...     (plan ceilings)
    forge ▰▰▰▰▰▰▱▱▱▱ 12/20 · 2.6M/3M tok · tok ceiling in ~3 turns ~14:20 UTC · next: ...
    forge ▰▰▰▰▰▰▰▰▰▱ 19/20 · last turn · next: ...                   (the forecast)

The gauge fills by whichever of the tranche's ceilings is nearest.

Pure formatting: callers read the goal and the checkpoint and say whether colour and
Unicode may be used (`unicode_ok`, and the CLI's `use_colour`), so the same goal always
looks the same on every surface.
"""

from __future__ import annotations

import os

CELLS = 10
UNSANDBOXED = "unsandboxed"  # a goal run by the project's opt-out (sandbox.posture.OPTED_OUT)
ATTENTION = "forge: ledger needs attention"
STEP_LIMIT = 48

_RED, _GREEN, _YELLOW, _DIM = "31", "32", "33", "2"


_COERCED = ("C.UTF-8", "C.utf8", "UTF-8")


def unicode_ok(environ: dict | None = None) -> bool:
    """True when the terminal's locale is UTF-8 (the first of LC_ALL, LC_CTYPE, LANG that
    is set decides, as the C library does); with none set, ASCII.

    Python itself sets LC_CTYPE=C.UTF-8 when its locale resolves to C (PEP 538: LANG=C, or
    a locale that is not installed), which says nothing about the terminal, so that value
    is passed over and LANG decides.
    """
    env = os.environ if environ is None else environ
    names = ["LC_ALL", "LC_CTYPE", "LANG"]
    if not env.get("LC_ALL") and env.get("LC_CTYPE") in _COERCED:
        names.remove("LC_CTYPE")
    for name in names:
        value = env.get(name)
        if value:
            return "utf8" in value.lower().replace("-", "")
    return False


def paint(text: str, code: str, colour: bool) -> str:
    return f"\033[{code}m{text}\033[0m" if colour else text


def attention(colour: bool = False) -> str:
    """The line for a goal whose ledger or state does not check out (never the error)."""
    return paint(ATTENTION, _RED, colour)


def filled_cells(used: int, ceiling: int) -> int:
    """How many of the gauge's cells are spent: any spent turn shows, full only at the end."""
    if ceiling <= 0 or used >= ceiling:
        return CELLS
    return max(1 if used > 0 else 0, min(CELLS - 1, used * CELLS // ceiling))


def bar(used: int, ceiling: int, unicode: bool = True) -> str:
    filled = filled_cells(used, ceiling)
    if unicode:
        return "▰" * filled + "▱" * (CELLS - filled)
    return "[" + "#" * filled + "-" * (CELLS - filled) + "]"


def tokens_text(count: int) -> str:
    """A token count at a glance: 950, 12k, 1.2M."""
    for size, suffix in ((1_000_000, "M"), (1_000, "k")):
        if count >= size:
            value = count / size
            text = f"{value:.1f}" if value < 10 else f"{value:.0f}"
            return text.removesuffix(".0") + suffix
    return str(count)


def measures(goal: dict, at: str | None = None) -> list[tuple[int, int | None, str]]:
    """(used, ceiling or None, unit) for the goal's turns, tokens and tranche minutes: tokens
    once any are recorded or a ceiling is set, minutes only with a ceiling."""
    from forge_runtime.goal.budget.ceilings import minutes_used, now

    found: list[tuple[int, int | None, str]] = [
        (goal["turn_count"], goal["turn_ceiling"], "turns")]
    tokens, token_ceiling = goal.get("token_count", 0), goal.get("token_ceiling")
    if tokens or isinstance(token_ceiling, int):
        found.append((tokens, token_ceiling if isinstance(token_ceiling, int) else None,
                      "tok"))
    usd_ceiling = goal.get("usd_ceiling")
    if isinstance(usd_ceiling, int):
        found.append((goal.get("picousd", 0), usd_ceiling, "usd"))
    if isinstance(goal.get("minute_ceiling"), int):
        found.append((minutes_used(goal, at or now()) or 0, goal["minute_ceiling"], "min"))
    return found + plan_measures(goal)


# how the gauge names each plan ceiling (goal/budget/plan.py), and the stop message
_PLAN_LABELS = {"five_hour": ("5h", "the plan's 5-hour window"),
                "seven_day": ("7d", "the plan's weekly window"),
                "seven_day_spend": ("week", "the week that the goal itself used")}


def plan_figure(goal: dict, name: str) -> int:
    """The basis points the goal's last charged reading shows for a plan ceiling."""
    if name == "seven_day_spend":
        return goal.get("plan_week", 0)
    window = ((goal.get("plan_seen") or {}).get(goal.get("plan_host")) or {}).get(name)
    return window["used"] if isinstance(window, dict) else 0


def plan_measures(goal: dict) -> list[tuple[int, int | None, str]]:
    """(basis points, ceiling, label) of each plan ceiling the goal has."""
    ceilings = goal.get("plan_ceilings")
    if not isinstance(ceilings, dict):
        return []
    return [(plan_figure(goal, name), ceilings[name], _PLAN_LABELS[name][0])
            for name in _PLAN_LABELS if isinstance(ceilings.get(name), int)]


def plan_words(goal: dict, name: str) -> str:
    """A plan ceiling reached, in the stop message's words."""
    from forge_runtime.goal.budget.plan import percent

    figure, ceiling = plan_figure(goal, name), goal["plan_ceilings"][name]
    words = (f"reached {percent(figure)} of {_PLAN_LABELS[name][1]} (the plan ceiling: "
             f"{percent(ceiling)})")
    window = ((goal.get("plan_seen") or {}).get(goal.get("plan_host")) or {}).get(name)
    if isinstance(window, dict):
        import time

        words += time.strftime("; it resets at %Y-%m-%d %H:%M UTC",
                               time.gmtime(window["resets_at"]))
    return words


def _nearest(found: list[tuple[int, int | None, str]]) -> tuple[int, int]:
    """The (used, ceiling) of the measure nearest its ceiling."""
    bounded = [(used, ceiling) for used, ceiling, _ in found if ceiling]
    return max(bounded, key=lambda pair: (min(pair[0], pair[1]) / pair[1], pair[0] >= pair[1]))


def dollars_text(picos: int) -> str:
    """Dollars at a glance: $0.42, $1.20, $5, $1.2k."""
    value = picos / 10**12
    if value >= 1000:
        return "$" + tokens_text(int(value))
    return f"${value:.2f}".replace(".00", "") if value >= 1 else f"${value:.2f}"


def _measure_text(used: int, ceiling: int | None, unit: str) -> str:
    if unit in ("5h", "7d", "week"):
        from forge_runtime.goal.budget.plan import percent

        return f"{unit} {percent(used)}/{percent(ceiling or 0)}"
    if unit == "usd":
        return dollars_text(used) + (f"/{dollars_text(ceiling)}" if ceiling else "")
    if unit == "tok":
        shown = tokens_text(used) + (f"/{tokens_text(ceiling)}" if ceiling else "")
        return f"{shown} tok"
    return f"{used}/{ceiling} {unit}"


def stuck_turns(record: dict) -> int:
    """Charged turns without progress, as the goal's last charge record counted them."""
    from forge_runtime.goal.rules.charging import STUCK_AFTER

    unchanged = record.get("unchanged", 0) if record.get("kind") == "charge" else 0
    return unchanged if isinstance(unchanged, int) and unchanged >= STUCK_AFTER else 0


def ended_words(goal: dict, unicode: bool = True) -> str:
    """How a goal that is over ended, as the ledger recorded it (charging.end): `goal met`,
    `goal verified`, `goal ended: impossible`; a ledger written before ends were named says
    `goal met` or `goal cleared`."""
    ended = goal.get("ended")
    if goal["status"] == "complete":
        done = "goal verified" if ended == "verified" else \
            f"goal {ended}" if isinstance(ended, str) and ended != "met" else "goal met"
        return ("✔ " if unicode else "") + done
    return f"goal ended: {ended}" if isinstance(ended, str) else "goal cleared"


# how the gauge names the ceiling a forecast reaches first (goal/views/forecast.py)
_RUNWAY_UNITS = {"tokens": "tok", "usd": "$", "minutes": "min", "five_hour": "5h",
                 "seven_day": "7d", "seven_day_spend": "week"}


def runway_text(ways: list, now: int) -> str | None:
    """The forecast at a glance (goal/views/forecast.py's runways, soonest first): `last turn`,
    `ends ~14:20 UTC` for the turn ceiling, `tok ceiling in ~3 turns ~14:20 UTC` for
    another; None when it adds nothing to the numbers beside it."""
    if not ways:
        return None
    first = ways[0]
    unit = _RUNWAY_UNITS.get(first.ceiling)
    if first.turns_left <= 0:  # the clock ran out before a Stop could say so
        return f"{unit or 'turn'} ceiling reached"
    if first.turns_left == 1:
        return "last turn" + (f" ({unit})" if unit else "")
    clock = None if first.at is None else "~" + clock_text(first.at, now)
    if unit is None:
        return None if clock is None else f"ends {clock}"
    return f"{unit} ceiling in ~{first.turns_left} turns" + (f" {clock}" if clock else "")


def clock_text(at: int, now: int) -> str:
    """A forecast time as a person reads it: `14:20 UTC` within a day, else with the date."""
    import time

    shape = "%H:%M UTC" if at - now < 86400 else "%Y-%m-%d %H:%M UTC"
    return time.strftime(shape, time.gmtime(at))


def line(goal: dict, checkpoint=None, stuck: int = 0, *, unicode: bool = True,
         colour: bool = False, outlook: str | None = None) -> str:
    """The one-line summary of a goal: gauge, turns, steps, stuck or spent, next step.

    `checkpoint` is a `checkpoint.Checkpoint` (or None when state.md cannot be read);
    `stuck` the charged turns without progress (`stuck_turns`); `outlook` the forecast
    of a running goal (`runway_text`).
    """
    status = goal["status"]
    found = measures(goal)
    used, ceiling = _nearest(found)
    dot = " · " if unicode else " - "
    numbers = f"{goal['turn_count']}/{goal['turn_ceiling']}"
    if status in ("complete", "cancelled"):
        return paint(f"forge {ended_words(goal, unicode)}{dot}{numbers} turns", _DIM, colour)
    spent = status == "exhausted"
    tone = _RED if spent else _YELLOW if stuck else _GREEN
    parts = [f"forge {paint(bar(used, ceiling, unicode), tone, colour)} {numbers}"]
    parts += [_measure_text(*measure) for measure in found[1:]]
    if outlook and not spent:
        parts.append(paint(outlook, _YELLOW, colour) if outlook.startswith("last turn")
                     else outlook)
    if checkpoint is not None and checkpoint.total:
        parts.append(f"{checkpoint.done}/{checkpoint.total} steps")
    if goal.get("sandbox") == UNSANDBOXED:
        parts.append(paint(UNSANDBOXED, _RED, colour))
    if spent:
        parts.append(paint("budget spent", _RED, colour))
    elif stuck:
        parts.append(paint(f"stuck {stuck} turns", _YELLOW, colour))
    step = checkpoint.step(STEP_LIMIT) if checkpoint is not None else None
    if step:
        parts.append(f"next: {step}")
    return dot.join(parts)
