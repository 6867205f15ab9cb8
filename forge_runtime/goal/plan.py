"""The plan's allowance: what a host reports of a subscription's 5-hour and weekly windows,
and how much of them a goal may use (issue 35).

A *reading* is one shape for both hosts:

    {"host": "claude" | "codex", "at": <epoch s>,
     "windows": {"five_hour": {"used": <basis points>, "resets_at": <epoch s>},
                 "seven_day": {...}}}

`used` is in basis points (a percent times 100) so that the ledger holds integers only;
`windows` is empty when the host reports none (an API key login). Where it comes from:

- Claude Code hands its status line `rate_limits.five_hour/seven_day` (`used_percentage`,
  `resets_at`), read from the API's `anthropic-ratelimit-unified-*` headers on subscription
  logins; no hook input carries them. forge's status line turns its input into a reading
  (`from_statusline`) and keeps it (plan_store.py).
- Codex writes its `token_count` events' `rate_limits` (primary and secondary, with each
  window's length) into the rollout, which the hooks read anyway (`from_codex`).

What a goal may use (`goal: {plan: {five_hour: 80, seven_day: 40, seven_day_spend: 10}}`,
sealed at each activation as `plan_ceilings`, in basis points): a window at or past its
share stops the goal; `seven_day_spend` stops it once the goal's own use of the current
week (`plan_week`: the weekly window's rise between the readings its charges carried,
counted from the reading its `/goal` prompt found; a new window's whole use after the week
resets) reaches it. A figure can only add: a reading lower than
the one the goal last charged within the same window counts as the higher one
(`merged`), so a figure the agent wrote grants nothing.

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

def same_window(earlier: dict, later: dict) -> bool:
    """Two figures of one window (its reset did not move on)."""
    return later["resets_at"] <= earlier["resets_at"] + SAME_WINDOW_SLACK_S


def merged(seen: dict | None, reading: dict) -> dict:
    """`reading`'s windows, each no lower than the goal's last charged figure of the same
    window (`seen`, that host's `plan_seen`): a figure only ever adds."""
    windows = {}
    for name, window in reading["windows"].items():
        before = (seen or {}).get(name)
        if isinstance(before, dict) and same_window(before, window) \
                and before["used"] > window["used"]:
            window = {**window, "used": before["used"]}
        windows[name] = window
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


def baseline(goal: dict, reading: dict | None) -> dict:
    """`goal` at an activation, with where its own use of the week starts: the reading the
    person's `/goal` prompt found, for a host the goal has no figure of yet."""
    if not isinstance(goal.get("plan_ceilings"), dict) or not valid(reading) \
            or not reading["windows"] or reading["host"] in (goal.get("plan_seen") or {}):
        return goal
    return {**goal, "plan_seen": {**(goal.get("plan_seen") or {}),
                                  reading["host"]: reading["windows"]},
            "plan_host": reading["host"]}


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
