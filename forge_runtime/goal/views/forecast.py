"""When a goal's budget runs out at its current pace: turns, tokens, dollars, minutes and
the plan's share, from the ledger's own figures.

The pace is this tranche's: what the goal spent between the record that started the
tranche (`start`, its activation; goal/views/tranche.py finds it) and the goal as it stands, per
charged turn, and the seconds those turns took from the tranche's clock start to the last
charge. A tranche with no charged turn yet has no time or plan pace; its tokens and
dollars a turn are then the goal's whole average, so a new tranche of a long goal is not
blind. A figure forge has not measured (no turn, no second, no reading in the same
window) gives no forecast for its ceiling, never a reassuring one.

Each ceiling's runway is how many more turns start before it is reached (the next one
counted: 1 means the next turn is the last) and, with a time pace, about when. Plain
arithmetic over goal fields and record times, importing ceilings.py and plan.py (and the
gauge's number formats for the words): `now` is passed in (epoch seconds), never read
here, so a forecast is the same wherever it is drawn.
"""

from __future__ import annotations

from forge_runtime.goal.budget.ceilings import MINUTES, TOKENS, TURNS, USD, epoch
from forge_runtime.goal.budget.plan import SAME_WINDOW_SLACK_S, SEVEN_DAY, WEEK_SPEND, WINDOWS
from forge_runtime.records import record

# the least time a tranche's charges must span to give a time pace: record times are to
# the second, so turns a few seconds apart say nothing of minutes a turn
MEASURED_S = 60


class Pace(record("Pace", "turns seconds tokens picousd plan")):
    """What the tranche's `turns` charged turns spent: `seconds` from the tranche's clock
    start to the last charge (None: not known, or less than MEASURED_S), `tokens`,
    `picousd`, and per plan ceiling the rise of its figure in basis points (`plan`; a
    ceiling whose rise is not known is left out)."""

    __slots__ = ()

    def per_turn(self, figure: str) -> float | None:
        """`seconds`, `tokens` or `picousd` a turn at this pace; None when not measured."""
        value = getattr(self, figure)
        if not self.turns or value is None:
            return None
        return value / self.turns


class Runway(record("Runway", "ceiling turns_left at")):
    """One ceiling at the current pace: `turns_left` more turns start before it is reached
    (1: the next turn is the last), `at` about when (epoch seconds; None without a time
    pace)."""

    __slots__ = ()


def _figure(goal: dict, name: str, host: str | None) -> dict | int | None:
    """A plan ceiling's figure on `goal`: the goal's own week (points), or the window of
    `host` ({"used", "resets_at"})."""
    if name == WEEK_SPEND:
        week = goal.get("plan_week")
        return week if isinstance(week, int) else None
    window = ((goal.get("plan_seen") or {}).get(host) or {}).get(name)
    return window if isinstance(window, dict) else None


def plan_rise(start_goal: dict, goal: dict) -> dict:
    """Per plan ceiling of `goal`, how far its figure rose since `start_goal` (basis
    points): a window only within the same window (a reset in between says nothing of the
    pace), the goal's own week only within the same week."""
    ceilings = goal.get("plan_ceilings")
    if not isinstance(ceilings, dict):
        return {}
    host = goal.get("plan_host")
    rises = {}
    for name in ceilings:
        before, after = _figure(start_goal, name, host), _figure(goal, name, host)
        if name == WEEK_SPEND:
            week_before = _figure(start_goal, SEVEN_DAY, host)
            week_after = _figure(goal, SEVEN_DAY, host)
            if isinstance(before, int) and isinstance(after, int) and after >= before and \
                    _same(week_before, week_after):
                rises[name] = after - before
        elif name in WINDOWS and _same(before, after) and before and after:
            rises[name] = max(0, after["used"] - before["used"])
    return rises


def _same(before, after) -> bool:
    """Two figures of one window (or both absent: a week counted with no weekly figure)."""
    if before is None or after is None:
        return before is after
    return abs(after["resets_at"] - before["resets_at"]) <= SAME_WINDOW_SLACK_S


def pace_of(start: dict | None, goal: dict, last_at: str | None) -> Pace:
    """The pace of `goal`'s tranche: `start` is the record that started it (its `goal` and
    `at`), `last_at` the time of the goal's last charge. With no `start`, the goal's whole
    average of tokens and dollars a turn, and no time or plan pace."""
    if start is None or not isinstance(start.get("goal"), dict):
        return Pace(goal["turn_count"], None, goal.get("token_count", 0),
                    goal.get("picousd", 0) if "picousd" in goal else None, {})
    began = start["goal"]
    turns = goal["turn_count"] - began["turn_count"]
    if turns <= 0:
        whole = pace_of(None, goal, None)
        return Pace(whole.turns, None, whole.tokens, whole.picousd, {})
    clock = goal.get("tranche_started") if isinstance(goal.get("tranche_started"), str) \
        else start.get("at")
    try:
        seconds = epoch(last_at) - epoch(clock) if last_at and clock else None
    except (ValueError, TypeError):  # not a time forge wrote
        seconds = None
    return Pace(turns, seconds if seconds is not None and seconds >= MEASURED_S else None,
                goal.get("token_count", 0) - began.get("token_count", 0),
                goal.get("picousd", 0) - began.get("picousd", 0) if "picousd" in goal
                else None,
                plan_rise(began, goal))


def _turns_to(room: float, per_turn: float | None) -> int | None:
    """Turns until `room` is used up at `per_turn` a turn (the one that crosses counted)."""
    if per_turn is None or per_turn <= 0:
        return None
    if room <= 0:
        return 0
    whole = int(room // per_turn)
    return whole + 1 if whole * per_turn < room else whole


def runways(goal: dict, pace: Pace, now: int) -> list[Runway]:
    """The runway of each ceiling `goal` has (turns, tokens, dollars, minutes, plan share)
    at `pace`, seen at `now`; ceilings without a measured pace are left out (but the turn
    ceiling, which needs none). Soonest first, the turn ceiling first of equals."""
    seconds = pace.per_turn("seconds")

    def when(turns: int | None) -> int | None:
        return None if turns is None or seconds is None else int(now + turns * seconds)

    left = goal["turn_ceiling"] - goal["turn_count"]
    found = [Runway(TURNS, left, when(left))]
    for ceiling, used, figure in ((TOKENS, goal.get("token_count", 0), "tokens"),
                                  (USD, goal.get("picousd", 0), "picousd")):
        limit = goal.get("token_ceiling" if ceiling == TOKENS else "usd_ceiling")
        turns = _turns_to(limit - used, pace.per_turn(figure)) \
            if isinstance(limit, int) else None
        if turns is not None:
            found.append(Runway(ceiling, turns, when(turns)))
    minutes, clock = goal.get("minute_ceiling"), goal.get("tranche_started")
    if isinstance(minutes, int) and isinstance(clock, str):
        try:
            deadline = epoch(clock) + minutes * 60
        except ValueError:
            deadline = None
        if deadline is not None:
            turns = _turns_to(deadline - now, seconds)
            if turns is not None:
                found.append(Runway(MINUTES, turns, deadline))
    found += _plan_runways(goal, pace, now, when)
    order = {name: index for index, name in enumerate((TURNS, TOKENS, USD, MINUTES))}
    return sorted(found, key=lambda way: (way.turns_left, order.get(way.ceiling, 9)))


def _plan_runways(goal: dict, pace: Pace, now: int, when) -> list[Runway]:
    """The plan ceilings' runways: the share left at the tranche's rise a turn. A window
    that resets before the forecast reaches its share is left out: the next window starts
    from its own figure."""
    ceilings = goal.get("plan_ceilings")
    if not isinstance(ceilings, dict) or not pace.turns:
        return []
    host = goal.get("plan_host")
    found = []
    for name, limit in ceilings.items():
        rise = (pace.plan or {}).get(name)
        figure = _figure(goal, name, host)
        if not isinstance(rise, int) or not isinstance(limit, int) or figure is None:
            continue
        used = figure if isinstance(figure, int) else figure["used"]
        turns = _turns_to(limit - used, rise / pace.turns)
        if turns is None:
            continue
        at = when(turns)
        if isinstance(figure, dict) and at is not None and figure["resets_at"] <= at:
            continue
        found.append(Runway(name, turns, at))
    return found


def closing(ways: list[Runway]) -> Runway | None:
    """The ceiling reached within the next turn at this pace (the turn ceiling first), or
    None: that turn is the tranche's last."""
    return next((way for way in ways if way.turns_left == 1), None)


def as_data(pace: Pace, ways: list[Runway]) -> dict:
    """The forecast for JSON: the pace a turn and each ceiling's runway, `at` as UTC."""
    seconds = pace.per_turn("seconds")
    picos = pace.per_turn("picousd")
    return {"pace": {"turns": pace.turns,
                     "seconds_per_turn": None if seconds is None else round(seconds, 1),
                     "tokens_per_turn": None if pace.per_turn("tokens") is None
                     else round(pace.per_turn("tokens")),
                     "usd_per_turn": None if picos is None else round(picos / 10**12, 6),
                     "plan_per_turn": {name: round(rise / pace.turns / 100, 4)
                                       for name, rise in (pace.plan or {}).items()}
                     if pace.turns else {}},
            "ceilings": [{"ceiling": way.ceiling, "turns_left": way.turns_left,
                          "at": utc(way.at)} for way in ways],
            "last_turn": closing(ways) is not None}


def utc(at: int | None) -> str | None:
    """Epoch seconds as a record's time (`YYYY-MM-DDTHH:MM:SSZ`)."""
    if at is None:
        return None
    import time

    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))


# a ceiling as the forecast names it
CEILING_NAMES = {TURNS: "the turn ceiling", TOKENS: "the token ceiling",
                 USD: "the dollar ceiling", MINUTES: "the time ceiling",
                 "five_hour": "the plan's 5-hour share", "seven_day": "the plan's weekly share",
                 WEEK_SPEND: "the goal's share of the week"}


def pace_words(pace: Pace) -> str:
    """The pace a turn, in words: `4.1 minutes, 150k tokens and $0.42 a turn (12 turns of
    this tranche)`."""
    from forge_runtime.goal.views.gauge import dollars_text, tokens_text

    seconds, tokens, picos = (pace.per_turn(figure) for figure in
                              ("seconds", "tokens", "picousd"))
    parts = []
    if seconds is not None:
        minutes = seconds / 60
        parts.append(f"{minutes:.1f} minutes" if minutes < 10 else f"{round(minutes)} minutes")
    if tokens is not None:
        parts.append(f"{tokens_text(round(tokens))} tokens")
    if picos is not None:
        parts.append(dollars_text(round(picos)))
    if not parts:
        return "not measured yet (no charged turn)"
    said = ", ".join(parts[:-1]) + " and " + parts[-1] if len(parts) > 1 else parts[0]
    return f"{said} a turn (over {pace.turns} charged turns)"


def runway_words(way: Runway, now: int) -> str:
    """One ceiling's runway in words: `the token ceiling in ~3 turns, about 14:20 UTC`."""
    name = CEILING_NAMES.get(way.ceiling, way.ceiling)
    if way.turns_left <= 0:
        return f"{name}: reached"
    if way.turns_left == 1:
        said = f"{name}: the next turn is the tranche's last"
    else:
        count = way.turns_left if way.ceiling == TURNS else f"~{way.turns_left}"
        said = f"{name} in {count} turns"
    from forge_runtime.goal.views.gauge import clock_text

    return said + ("" if way.at is None else f", about {clock_text(way.at, now)}")
