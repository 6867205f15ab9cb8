"""The plan's allowance: what a host reports of a subscription's 5-hour and weekly windows,
and how much of them a goal may use.

A *reading* is one shape for both hosts:

    {"host": "claude" | "codex", "at": <epoch s>,
     "windows": {"five_hour": {"used": <basis points>, "resets_at": <epoch s>},
                 "seven_day": {...}}}

`used` is in basis points (a percent times 100) so that the ledger holds integers only;
`windows` is empty when the host reports none (an API key login). Where it comes from:

- Claude Code hands its status line `rate_limits.five_hour/seven_day` (`used_percentage`,
  `resets_at`), read from the API's `anthropic-ratelimit-unified-*` headers on subscription
  logins; no hook input carries them. forge's status line turns its input into a reading
  (`from_statusline`) and keeps it (goal/hosts/plan_readings.py).
- Codex writes its `token_count` events' `rate_limits` (primary and secondary, with each
  window's length) into the rollout, which the hooks read anyway (`from_codex`).

What a goal may use (`goal: {plan: {five_hour: 80, seven_day: 40, seven_day_spend: 10}}`,
sealed at each activation as `plan_ceilings`, in basis points): a window at or past its
share stops the goal; `seven_day_spend` stops it once the goal's own use of the current
week (`plan_week`: the weekly window's rise between the readings its charges carried,
counted from the reading its `/goal` prompt found; a new window's whole use after the week
resets) reaches it. A figure can only add: a reading lower than
the one the goal last charged within the same window counts as the higher one, one that
leaves a window out keeps that window's last figure, and one that claims a window reset
before its reset time is the same window (`risen`, the one rule for the ledger and for
what forge keeps of what it read); so a figure the agent wrote grants nothing.

Plain arithmetic, importing nothing: the ledger checks every transition with it, and the
status line and every PreToolUse of a goal with plan ceilings come here.
"""

FIVE_HOUR, SEVEN_DAY, WEEK_SPEND = "five_hour", "seven_day", "seven_day_spend"
WINDOWS = (FIVE_HOUR, SEVEN_DAY)
CEILINGS = (FIVE_HOUR, SEVEN_DAY, WEEK_SPEND)
CLAUDE, CODEX = "claude", "codex"
# Codex names its windows primary/secondary; their length says which is which
_CODEX_MINUTES = {300: FIVE_HOUR, 10080: SEVEN_DAY}
# a window whose reset moved later by more than this is a new window (hosts round resets)
SAME_WINDOW_SLACK_S = 600
# a reading taken later than this after the moment it is read is from the future: not a
# host's (the status line and the hooks share one clock)
CLOCK_SLACK_S = 300
_YEAR_S = 366 * 86400


def _basis_points(percent) -> int | None:
    """A percentage as the ledger keeps it; None for what is not a finite number >= 0."""
    if isinstance(percent, bool) or not isinstance(percent, (int, float)):
        return None
    if not 0 <= percent <= 10_000:  # also rejects NaN; past 100 % happens (overage)
        return None
    return round(percent * 100)


def _window(used, resets_at, at: int) -> dict | None:
    points = _basis_points(used)
    if points is None or isinstance(resets_at, bool) or not isinstance(resets_at, (int, float)):
        return None
    resets_at = int(resets_at)
    if not at - _YEAR_S < resets_at < at + _YEAR_S:
        return None
    return {"used": points, "resets_at": resets_at}


def from_statusline(payload: dict, at: int) -> dict:
    """The reading in Claude Code's status-line input (`rate_limits`, absent on an API key
    login: then no windows)."""
    limits = payload.get("rate_limits") if isinstance(payload, dict) else None
    windows = {}
    if isinstance(limits, dict):
        for name in WINDOWS:
            figure = limits.get(name)
            if isinstance(figure, dict):
                window = _window(figure.get("used_percentage"), figure.get("resets_at"), at)
                if window is not None:
                    windows[name] = window
    return {"host": CLAUDE, "at": int(at), "windows": windows}


def from_codex(rate_limits: dict, at: int) -> dict:
    """The reading in a Codex rollout `token_count` event's `rate_limits`: `primary` and
    `secondary`, each `{used_percent, window_minutes, resets_at}`, named by their length."""
    windows = {}
    if isinstance(rate_limits, dict):
        for key in ("primary", "secondary"):
            figure = rate_limits.get(key)
            if not isinstance(figure, dict):
                continue
            name = _CODEX_MINUTES.get(figure.get("window_minutes"))
            window = _window(figure.get("used_percent"), figure.get("resets_at"), at)
            if name is not None and window is not None:
                windows[name] = window
    return {"host": CODEX, "at": int(at), "windows": windows}


def valid(reading) -> bool:
    """A reading of the shape above (what a charge may carry into the ledger)."""
    if not isinstance(reading, dict) or reading.get("host") not in (CLAUDE, CODEX) \
            or not isinstance(reading.get("at"), int) or isinstance(reading.get("at"), bool):
        return False
    windows = reading.get("windows")
    if not isinstance(windows, dict) or set(windows) - set(WINDOWS):
        return False
    return all(isinstance(window, dict) and set(window) == {"used", "resets_at"}
               and all(isinstance(window[key], int) and not isinstance(window[key], bool)
                       and window[key] >= 0 for key in window)
               for window in windows.values())


# -- what a goal has used ---------------------------------------------------------------------

def same_window(earlier: dict, later: dict, at: float | None = None,
                slack: int = SAME_WINDOW_SLACK_S) -> bool:
    """Two figures of one window: its reset did not move on, or (`at`, when the later
    figure was read) it was read before the earlier window could end. A window resets at
    its reset time, never sooner, so a figure that says otherwise resets nothing."""
    return later["resets_at"] <= earlier["resets_at"] + slack or (
        at is not None and at < earlier["resets_at"] - slack)


def from_future(reading: dict, now: float) -> bool:
    """A reading taken after `now` (epoch s): no host wrote it."""
    return reading["at"] > now + CLOCK_SLACK_S


def risen(before: dict | None, after: dict | None, at: float,
          slack: int = SAME_WINDOW_SLACK_S) -> dict | None:
    """One window's figure once a reading read at `at` shows it as `after` (None: the
    reading leaves it out), the last figure being `before` (None: none yet). The one rule
    for every copy of the plan's figures forge keeps: within one window a figure only rises
    until that window's reset time; a window the reading leaves out keeps its last figure;
    and one that claims a reset before the reset time is the same window (`same_window`),
    which keeps its reset time, so a claimed reset neither lowers a figure nor holds it into
    the window after. Plain arithmetic on `used` and `resets_at`, whatever unit `used` is in.

    `slack` is how far a reset time may move, either way, and still be the same window:
    the ledger's SAME_WINDOW_SLACK_S for the hosts' rounding; 0 where forge's own clock
    alone decides (plan_readings, codex_plan), so a reset claimed before its time counts
    for nothing and a window keeps the reset time it was first seen with."""
    if before is None or after is None:
        return before if after is None else after
    if not same_window(before, after, at, slack):
        return after
    moved_on = after["resets_at"] > before["resets_at"] + slack
    return {"used": max(before["used"], after["used"]),
            "resets_at": before["resets_at"] if moved_on
            else max(before["resets_at"], after["resets_at"])}


def merged(seen: dict | None, reading: dict, slack: int = SAME_WINDOW_SLACK_S) -> dict:
    """`reading`'s windows, each no lower than the goal's last charged figure of the same
    window (`seen`, that host's `plan_seen`), with the windows it leaves out as last
    charged, whether or not their reset time has passed (`risen`): a figure only ever adds.
    An ended window is kept because the goal's own week counts a new week from the last
    weekly figure (`week_used`), and `over` tells it ended by its time. The ledger checks
    every charge with this arithmetic, so what it gives for a chain written before never
    changes (its SAME_WINDOW_SLACK_S included)."""
    windows = {name: window for name, window in (seen or {}).items()
               if name in WINDOWS and isinstance(window, dict)}
    for name, window in reading["windows"].items():
        windows[name] = risen(windows.get(name), window, reading["at"], slack)
    return windows


def week_used(seen: dict | None, windows: dict, week: int) -> int:
    """The goal's own use of the current week (basis points) after a charge whose reading
    shows `windows`, from `week` before it: plus the weekly window's rise since the goal's
    last figure in the same window; a new window's whole use once the week has reset (the
    goal's use of the week before is over with it)."""
    after = windows.get(SEVEN_DAY)
    if not isinstance(after, dict):
        return week
    before = (seen or {}).get(SEVEN_DAY)
    if not isinstance(before, dict):
        return week  # the goal's first figure is where its own use starts
    if same_window(before, after):
        return week + max(0, after["used"] - before["used"])
    return after["used"]


def advanced(goal: dict, reading: dict) -> dict:
    """`goal` after a charge that carried `reading`: its host's windows (merged), the host
    the goal last ran on, and the goal's own use of the week."""
    seen = dict(goal.get("plan_seen") or {})
    before = seen.get(reading["host"])
    windows = merged(before, reading)
    seen[reading["host"]] = windows
    return {**goal, "plan_seen": seen, "plan_host": reading["host"],
            "plan_week": week_used(before, windows, goal.get("plan_week", 0))}


def joined(main: dict, side: dict, main_at: str, side_at: str) -> dict:
    """The plan fields of a goal two clones charged, joined (goal/store/merge.py): `main` and
    `side` are the goal as each chain has it, `main_at` and `side_at` the times of their
    last records. Either way round, the same fields:

    - `plan_seen`, per host and window: the later window, or within one window the higher
      figure (a figure only adds, as `merged`).
    - `plan_host`: the host of the later chain's head (the host the goal last ran on; of
      two heads at one second, the host named last in sorted order).
    - `plan_week`: the larger of the two, not their sum. Both clones count the goal's use
      of the week as the rise of one account-wide weekly window from the figure the goal
      had where they parted, so each count already holds whatever the other clone spent
      on that account meanwhile: a sum would count the concurrent turns twice and stop the
      goal at a fraction of its share, and "main's plus the side's own rise" is that sum.
      The larger is the rise of that one window from the shared figure to the later one.
      When both clones ran on one host but one saw the week reset, the other's count is of
      a week that is over: the count of the later week is kept. Limit: two clones on two
      different plan accounts each count only their own, and the larger is kept.
    """
    main_seen, side_seen = main.get("plan_seen") or {}, side.get("plan_seen") or {}
    fields = {}
    seen = {host: _joined_windows(main_seen.get(host) or {}, side_seen.get(host) or {})
            for host in sorted({*main_seen, *side_seen})}
    if seen:
        fields["plan_seen"] = seen
    hosts = [(at, goal["plan_host"]) for goal, at in ((main, main_at), (side, side_at))
             if goal.get("plan_host")]
    if hosts:
        fields["plan_host"] = max(hosts)[1]
    weeks = [(goal.get("plan_week", 0), _week_of(goal)) for goal in (main, side)]
    if "plan_week" in main or "plan_week" in side:
        (ours, our_week), (theirs, their_week) = weeks
        fields["plan_week"] = max(ours, theirs)
        if main.get("plan_host") == side.get("plan_host") and our_week and their_week \
                and not _same_week(our_week, their_week):
            fields["plan_week"] = ours if our_week["resets_at"] > their_week["resets_at"] \
                else theirs
    return fields


def _joined_windows(mine: dict, theirs: dict) -> dict:
    """One host's figures as two chains have them, joined window by window."""
    windows = {}
    for name in sorted({*mine, *theirs}):
        one, other = mine.get(name), theirs.get(name)
        if not (one and other):
            windows[name] = one or other
            continue
        earlier, later = sorted((one, other), key=lambda w: (w["resets_at"], w["used"]))
        windows[name] = {"used": max(one["used"], other["used"]),
                         "resets_at": later["resets_at"]} \
            if same_window(earlier, later) else later
    return windows


def _week_of(goal: dict) -> dict | None:
    """The weekly window a goal's `plan_week` counts: its host's last weekly figure."""
    week = ((goal.get("plan_seen") or {}).get(goal.get("plan_host")) or {}).get(SEVEN_DAY)
    return week if isinstance(week, dict) else None


def _same_week(one: dict, other: dict) -> bool:
    return same_window(one, other) and same_window(other, one)


def baseline(goal: dict, reading: dict | None) -> dict:
    """`goal` at an activation, with where its own use of the week starts: the reading the
    person's `/goal` prompt found, for a host the goal has no figure of yet."""
    if not isinstance(goal.get("plan_ceilings"), dict) or not valid(reading) \
            or not reading["windows"] or reading["host"] in (goal.get("plan_seen") or {}):
        return goal
    return {**goal, "plan_seen": {**(goal.get("plan_seen") or {}),
                                  reading["host"]: reading["windows"]},
            "plan_host": reading["host"]}


def no_higher(found, reading) -> dict | None:
    """`found`, an earlier reading (what a `/goal` prompt found, goal/store/prompt_notes.py),
    with no window higher, nor resetting later, than the same window of
    `reading` (the host's figures now): within a window they only rise. Windows `reading`
    lacks are left out; None when either is not a reading of the same host."""
    if not valid(found) or not valid(reading) or found["host"] != reading["host"]:
        return None
    windows = {}
    for name, window in found["windows"].items():
        now = reading["windows"].get(name)
        if now is None:
            continue
        if same_window(window, now):
            window = {"used": min(window["used"], now["used"]),
                      "resets_at": min(window["resets_at"], now["resets_at"])}
        windows[name] = window
    return {**found, "windows": windows}


def watched(ceilings) -> list[str]:
    """The windows plan ceilings watch: each one named, the weekly one for the goal's own
    week too."""
    if not isinstance(ceilings, dict):
        return []
    return [name for name in WINDOWS
            if name in ceilings or (name == SEVEN_DAY and WEEK_SPEND in ceilings)]


def unwatched(goal: dict) -> list[str]:
    """The windows the goal's plan ceilings watch of which the host it last ran on has
    given no figure: forge cannot hold it to those."""
    windows = (goal.get("plan_seen") or {}).get(goal.get("plan_host")) or {}
    return [name for name in watched(goal.get("plan_ceilings")) if name not in windows]


def over(goal: dict, at: int) -> list[str]:
    """The plan ceilings the goal has reached at `at` (epoch s): a window of the host it
    last ran on at its share (until that window resets), the goal's own use of the week."""
    ceilings = goal.get("plan_ceilings")
    if not isinstance(ceilings, dict):
        return []
    windows = (goal.get("plan_seen") or {}).get(goal.get("plan_host")) or {}
    names = [name for name in WINDOWS
             if isinstance(ceilings.get(name), int) and isinstance(windows.get(name), dict)
             and windows[name]["resets_at"] > at and windows[name]["used"] >= ceilings[name]]
    spend, week = ceilings.get(WEEK_SPEND), windows.get(SEVEN_DAY)
    if isinstance(spend, int) and goal.get("plan_week", 0) >= spend and not (
            isinstance(week, dict) and week["resets_at"] <= at):  # that week is over
        names.append(WEEK_SPEND)
    return names


# -- the person's ceilings --------------------------------------------------------------------

def ceilings_from(config: dict | None) -> dict | None:
    """`goal.plan` of .forge/guard.yaml (percent of a window, points of the week) as the
    goal seals it (basis points); None when it sets none."""
    if not isinstance(config, dict):
        return None
    sealed = {name: _basis_points(config[name]) for name in CEILINGS
              if config.get(name) is not None}
    return {name: points for name, points in sealed.items() if points is not None} or None


def percent(points: int) -> str:
    """Basis points as a person reads them: `62%`, `62.5%`."""
    whole, part = divmod(points, 100)
    return f"{whole}%" if part == 0 else f"{points / 100:g}%"
