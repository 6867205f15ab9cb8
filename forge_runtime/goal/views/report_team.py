"""A team's goals at a glance: every verified chain (team_goals.py) as one row each, and
the totals per person, branch, model and week (`forge goal report --remote NAME`).

Spend belongs to the tranche it was charged in, and a tranche to whoever opened it: its
`activate` record says who, on which branch and host (goal/rules/activator.py), so a goal one
person started and another continued in a fresh clone is split between them. Every figure
is the ledger's own: a charge's turn, tokens (`counted`) and picodollars, a join's `turns`,
`spent` and `spent_usd`, the goal's own use of the plan's week (`plan_week`, its rises
summed, a week's reset starting the count again); so without `since` a goal's tranches add
up to exactly the counts its head carries. `since` keeps the tranches activated then or
later (ISO week and day of the activation, UTC).

Pure reading: callers pass verified chains, oldest record first.
"""

from __future__ import annotations

import datetime

from forge_runtime.goal.budget.ceilings import epoch
from forge_runtime.goal.budget.plan import percent
from forge_runtime.goal.budget.pricing import dollars
from forge_runtime.goal.budget.usage import counted
from forge_runtime.goal.store import merge
from forge_runtime.goal.sync.team_goals import gather
from forge_runtime.goal.views.gauge import tokens_text
from forge_runtime.goal.views.report import CEILING_WORDS
from forge_runtime.hints import sanitize

UNKNOWN = "unknown"
GROUPS = ("person", "branch", "model", "week")
_ENDS = {"complete": "met", "cancelled": "cleared"}


def _blank() -> dict:
    return {"turns": 0, "tokens": 0, "picousd": 0, "plan": 0}


def _records_within(record: dict):
    """`record`, and every record a join carries in its side (joins inside joins too)."""
    yield record
    if record.get("kind") == merge.MERGE and isinstance(record.get("side"), list):
        for one in record["side"]:
            yield from _records_within(one)


def _week_rise(before: dict | None, after: dict) -> int:
    """What the goal's own use of the plan's week rose by from `before` to `after`."""
    old, new = (before or {}).get("plan_week", 0), after.get("plan_week", 0)
    return new - old if new >= old else new  # a new week counts from its start


def tranches(chain: list[dict]) -> list[dict]:
    """The goal's tranches, oldest first: who opened each (`by`, `branch`, `host`, `at`)
    and what was charged in it (`turns`, `tokens`, `picousd`, `plan` in basis points,
    `by_model`)."""
    opened: dict[str, dict] = {}
    for record in chain:
        for one in _records_within(record):
            goal = one.get("goal") or {}
            if one.get("kind") == "activate" and goal.get("activation_id") not in opened:
                opened[goal["activation_id"]] = {
                    "activation": goal["activation_id"], "at": one["at"],
                    "by": one.get("by") or UNKNOWN, "branch": one.get("branch") or UNKNOWN,
                    "host": one.get("host") or goal.get("plan_host") or UNKNOWN,
                    **_blank(), "by_model": {}}
    before = None
    for record in chain:
        goal = record["goal"]
        kind = record["kind"]
        if kind in ("charge", merge.OVERRUN):
            usage = record.get("usage") or {}
            _add(opened, goal, kind == "charge", usage.get("counted", 0),
                 usage.get("picousd", 0), usage.get("by_model") or {})
        elif kind == merge.MERGE:
            _add_join(opened, record)
        opened[goal["activation_id"]]["plan"] += _week_rise(before and before["goal"], goal)
        before = record
    return sorted(opened.values(), key=lambda tranche: tranche["at"])


def _add(opened: dict, goal: dict, turn: bool, tokens: int, picousd: int,
         by_model: dict) -> None:
    tranche = opened[goal["activation_id"]]
    tranche["turns"] += turn
    tranche["tokens"] += tokens
    tranche["picousd"] += picousd
    for model, spent in by_model.items():
        totals = tranche["by_model"].setdefault(model, {"tokens": 0, "picousd": 0})
        totals["tokens"] += _model_tokens(spent)
        totals["picousd"] += spent.get("picousd", 0)


def _model_tokens(spent: dict) -> int:
    return counted({"model": spent})


def _add_join(opened: dict, record: dict) -> None:
    """A join's turns and spending, each to the tranche of the side record it came from
    (the first that names the turn, as the join itself takes them: merge.expected)."""
    first: dict[str, dict] = {}
    for one in record["side"]:
        for inner in _records_within(one):
            if inner.get("kind") in ("charge", merge.OVERRUN):
                first.setdefault(inner["turn"], inner)
    spent, spent_usd = record["spent"], record.get("spent_usd") or {}
    for turn in [*record["turns"], *record.get("overruns", ())]:
        source = first[turn]
        paid = turn in spent or turn in spent_usd
        _add(opened, source["goal"], turn in record["turns"], spent.get(turn, 0),
             spent_usd.get(turn, 0),
             ((source.get("usage") or {}).get("by_model") or {}) if paid else {})


def ending(chain: list[dict]) -> str:
    """How the goal ended, in a person's words (`running` while active)."""
    goal = chain[-1]["goal"]
    status = goal.get("status")
    if status == "active":
        return "running"
    if status == "exhausted":
        last = None
        for record in chain:
            for one in _records_within(record):
                if one.get("kind") == "exhaust" and \
                        one["goal"].get("activation_id") == goal.get("activation_id"):
                    last = one
        ceiling = (last or {}).get("ceiling", "turns")
        if ceiling == "usage_limit":
            return "stopped at the host's usage limit"
        return f"exhausted on its {CEILING_WORDS.get(ceiling, ceiling)} ceiling"
    ended = goal.get("ended")
    return ended if isinstance(ended, str) and ended else _ENDS.get(status, str(status))


def iso_week(at: str) -> str:
    """The ISO week of a record's time: 2026-W49."""
    year, week, _ = datetime.date(int(at[0:4]), int(at[5:7]), int(at[8:10])).isocalendar()
    return f"{year}-W{week:02d}"


def row(counted, since: int | None = None) -> dict | None:
    """One goal's line of the report, from its tranches activated at or after `since`
    (epoch seconds); None when it has none."""
    chain = counted.chain
    goal = chain[-1]["goal"]
    kept = [tranche for tranche in tranches(chain)
            if since is None or epoch(tranche["at"]) >= since]
    if not kept:
        return None
    figures = _blank()
    by_model: dict[str, dict] = {}
    for tranche in kept:
        for key in figures:
            figures[key] += tranche[key]
        for model, spent in tranche["by_model"].items():
            totals = by_model.setdefault(model, {"tokens": 0, "picousd": 0})
            totals["tokens"] += spent["tokens"]
            totals["picousd"] += spent["picousd"]
    people = list(dict.fromkeys(tranche["by"] for tranche in kept))
    return {"nonce": goal["nonce"], "objective": goal.get("objective"),
            "activated": kept[0]["at"], "by": people[0], "people": people,
            "branches": list(dict.fromkeys(tranche["branch"] for tranche in kept)),
            "hosts": list(dict.fromkeys(tranche["host"] for tranche in kept)),
            "models": sorted(by_model, key=lambda model: (-by_model[model]["tokens"], model)),
            **figures, "priced": "picousd" in goal, "ended": ending(chain),
            "status": goal.get("status"), "where": counted.where,
            "tranches": kept, "by_model": by_model}


def totals(rows: list[dict]) -> dict:
    """Figures per person, branch and week (of each tranche's activation), per model (what
    its usage says), and for everything (`all`): each with the goals it touched."""
    groups: dict[str, dict] = {group: {} for group in GROUPS}
    everything = {**_blank(), "goals": len(rows)}
    for one in rows:
        for key in _blank():
            everything[key] += one[key]
        for tranche in one["tranches"]:
            for group, name in (("person", tranche["by"]), ("branch", tranche["branch"]),
                                ("week", iso_week(tranche["at"]))):
                _count(groups[group], name, one["nonce"], tranche)
        for model, spent in one["by_model"].items():
            _count(groups["model"], model, one["nonce"], spent)
    for name, group in groups.items():
        for figures in group.values():
            figures["goals"] = len(figures.pop("nonces"))
            if name == "model":  # a model's usage says its tokens and dollars, no more
                del figures["turns"], figures["plan"]
    return {"all": everything, **{group: dict(sorted(found.items()))
                                  for group, found in groups.items()}}


def _count(group: dict, name: str, nonce: str, figures: dict) -> None:
    kept = group.setdefault(name, {**_blank(), "nonces": set()})
    kept["nonces"].add(nonce)
    for key in _blank():
        kept[key] += figures.get(key, 0)


def parse_since(text: str, now: int) -> int:
    """Epoch seconds of `--since`: an ISO date or time (UTC unless it says), or a span
    back from `now`: 7d, 2w, 12h. ValueError for anything else."""
    spans = {"h": 3600, "d": 86400, "w": 7 * 86400}
    if len(text) > 1 and text[-1] in spans and text[:-1].isdigit():
        return now - int(text[:-1]) * spans[text[-1]]
    when = datetime.datetime.fromisoformat(text)
    if when.tzinfo is None:
        when = when.replace(tzinfo=datetime.UTC)
    return int(when.timestamp())


def build(project, remote_name: str, since: int | None = None) -> dict:
    """The team report over `remote_name` and this clone: rows (most recent activation
    first), refused chains and totals. GitFailed when the remote cannot be read."""
    counted, refused = gather(project, remote_name)
    rows = [one for one in (row(found, since) for found in counted) if one is not None]
    rows.sort(key=lambda one: one["activated"], reverse=True)
    return {"remote": remote_name, "goals": rows, "totals": totals(rows),
            "refused": [dict(zip(found._fields, found, strict=True)) for found in refused]}


def text(report: dict) -> list[str]:
    """The report as lines for a person; every string from a ledger made one safe line
    (an objective or a name is whatever its clone's person or git said)."""
    def figures(one: dict, turns: bool = True) -> str:
        spent = f"{tokens_text(one['tokens'])} tok · {dollars(one['picousd'])}"
        if not turns:
            return spent
        count = f"{one['turns']} turn{'' if one['turns'] == 1 else 's'}"
        return f"{count} · {spent} · plan {percent(one['plan'])}"

    every = report["totals"]["all"]
    lines = [f"goals on {sanitize(report['remote'])} and this clone"
             + (f" activated since {report['since']}" if report.get("since") else "")
             + f": {every['goals']} counted, {len(report['refused'])} refused"]
    for one in report["goals"]:
        lines += [f"{one['nonce'][:12]}  {sanitize(one['objective'])}",
                  f"    {one['activated']}  by {sanitize(', '.join(one['people']))}  on "
                  f"{sanitize(', '.join(one['branches']))}  {sanitize(', '.join(one['hosts']))}"
                  f"  {sanitize(', '.join(one['models']) or 'no model charged')}",
                  f"    {figures(one)}  {sanitize(one['ended'])}  ({one['where']})"]
    for found in report["refused"]:
        lines.append(f"refused {found['nonce'][:12]} ({found['where']}): "
                     f"{sanitize(found['why'])}")
    for group in GROUPS:
        lines.append(f"per {group}")
        lines += [f"    {sanitize(name)}  {one['goals']} goal(s) · "
                  f"{figures(one, group != 'model')}"
                  for name, one in report["totals"][group].items()]
    lines.append(f"total       {every['goals']} goal(s) · {figures(every)}")
    return lines
