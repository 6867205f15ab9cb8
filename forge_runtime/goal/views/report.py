"""One goal's story from its verified records: tranches, turns and what each spent, late
charges, stuck warnings, turns the host started after the end (`overrun`), and where it
stopped (`forge goal report`, `forge goal status`).

Pure reading: callers pass the records (`Ledger.history()`), oldest first.
"""

from __future__ import annotations

from forge_runtime.goal.budget.ceilings import epoch
from forge_runtime.goal.budget.pricing import dollars
from forge_runtime.goal.budget.usage import FIELDS, Tally
from forge_runtime.goal.rules.charging import STUCK_AFTER
from forge_runtime.goal.store import merge
from forge_runtime.goal.views.gauge import plan_figure

_ENDINGS = {"exhaust": "exhausted", "complete": "met", "cancel": "cleared"}
# a ceiling's name in the ledger, as a person reads it
CEILING_WORDS = {"usd": "dollar", "five_hour": "5-hour window", "seven_day": "weekly window",
                 "seven_day_spend": "own week of the plan", "usage_limit": "host's usage limit"}


def spent_by_model(records: list[dict]) -> dict:
    """Every charge's tokens, per model, summed over the goal (with those another clone
    spent, which a join took in: merge.joined_spending)."""
    tally = Tally()
    for record in records:
        spending = merge.joined_spending(record) if record.get("kind") == merge.MERGE \
            else [record] if record.get("kind") in ("charge", "overrun") else []
        for one in spending:
            for model, spent in ((one.get("usage") or {}).get("by_model") or {}).items():
                tally.add(model, spent)
    return tally.by_model


def _minutes(start: str, end: str) -> int:
    return (epoch(end) - epoch(start)) // 60


def story(records: list[dict]) -> dict:
    """The goal's tranches, each with its turns (tokens, late, stuck), how it ended, and how
    long it ran by the ledger's own timestamps; the goal's totals per model; where it is."""
    tranches: list[dict] = []
    for record in records:
        kind, goal = record["kind"], record["goal"]
        if kind == "activate":
            tranches.append({"activation": goal["activation_count"], "started": record["at"],
                             "turns": [], "ended": None, "token_ceiling":
                             goal.get("token_ceiling"), "minute_ceiling":
                             goal.get("minute_ceiling"), "usd_ceiling": goal.get("usd_ceiling"),
                             "prices": (goal.get("prices") or {}).get("version")})
            continue
        if not tranches:  # a ledger starts with an activation; verified ones do
            continue
        current = tranches[-1]
        if kind == "charge":
            usage = record.get("usage") or {}
            unchanged = record.get("unchanged", 0)
            current["turns"].append({
                "turn": goal["turn_count"], "at": record["at"],
                "tokens": usage.get("counted", 0), "by_model": usage.get("by_model", {}),
                "picousd": usage.get("picousd"),
                "late": record.get("late") is True,
                "stuck": isinstance(unchanged, int) and unchanged > 0
                and unchanged % STUCK_AFTER == 0})
        elif kind == "overrun":  # a turn the host started after the end: not a charge
            usage = record.get("usage") or {}
            current.setdefault("overrun", []).append(
                {"at": record["at"], "tokens": usage.get("counted", 0),
                 "by_model": usage.get("by_model", {}), "picousd": usage.get("picousd")})
        elif kind == "checkpoint":
            current["checkpoint"] = record.get("next_step")
        elif kind in _ENDINGS:
            how = goal.get("ended") if kind != "exhaust" else None
            current["ended"] = {"how": how if isinstance(how, str) else _ENDINGS[kind],
                                "at": record["at"],
                                "ceiling": record.get("ceiling", "turns")
                                if kind == "exhaust" else None,
                                "reason": record.get("reason"),
                                "late_turns": record.get("late_turns", 0),
                                "owed": len(record.get("owed") or [])}
    for tranche in tranches:
        last = (tranche["ended"] or {}).get("at") or \
            (tranche["turns"][-1]["at"] if tranche["turns"] else tranche["started"])
        tranche["minutes"] = _minutes(tranche["started"], last)
        tranche["tokens"] = sum(turn["tokens"] for turn in tranche["turns"])
        tranche["picousd"] = sum(turn["picousd"] or 0 for turn in tranche["turns"])
    head = records[-1]["goal"] if records else {}
    return {"goal": head, "tranches": tranches, "by_model": spent_by_model(records),
            "running": running(records)}


# what each ceiling measures, as the goal names the figure and its ceiling
MEASURES = (("turns", "turn_count", "turn_ceiling"), ("tokens", "token_count", "token_ceiling"),
            ("dollars", "picousd", "usd_ceiling"))


def running(records: list[dict]) -> list[dict]:
    """After each record, each measure the goal had a ceiling on (turns, tokens, dollars,
    the plan's shares in basis points) as [total, ceiling]: the ledger's own counts, a
    ceiling None where the tranche had none."""
    def plan_of(goal: dict) -> dict:
        ceilings = goal.get("plan_ceilings")
        return ceilings if isinstance(ceilings, dict) else {}

    windows = sorted({window for record in records for window in plan_of(record["goal"])})
    points = []
    for record in records:
        goal = record["goal"]
        point = {"seq": record.get("seq"), "at": record.get("at")}
        for name, figure, ceiling in MEASURES:
            point[name] = [goal.get(figure, 0), goal.get(ceiling)]
        for window in windows:
            point[f"plan {window}"] = [plan_figure(goal, window), plan_of(goal).get(window)]
        points.append(point)
    return points


def model_lines(by_model: dict, tokens_text) -> list[str]:
    """One line per model: what it spent, field by field, and its dollars when priced."""
    names = {"input": "in", "output": "out", "cache_creation": "cache write",
             "cache_read": "cache read"}
    return [f"{model}  " + " · ".join(f"{tokens_text(spent.get(field, 0))} {names[field]}"
                                      for field in FIELDS)
            + (f" · {dollars(spent['picousd'])}" if "picousd" in spent else "")
            for model, spent in sorted(by_model.items())]


def text(told: dict, tokens_text) -> list[str]:
    """The story as lines for a person."""
    goal = told["goal"]
    priced = "picousd" in goal
    lines = [f"goal        {goal.get('nonce')}", f"objective   {goal.get('objective')}",
             f"status      {goal.get('status')} at {goal.get('turn_count')} of "
             f"{goal.get('turn_ceiling')} turns, {tokens_text(goal.get('token_count', 0))} "
             "tokens counted" + (f", {dollars(goal['picousd'])}" if priced else "")]
    if priced:
        lines.append(f"prices      {(goal.get('prices') or {}).get('version')} "
                     "(API prices, whatever the plan)")
    for tranche in told["tranches"]:
        ceilings = [f"{tokens_text(tranche['token_ceiling'])} tok"
                    if isinstance(tranche["token_ceiling"], int) else None,
                    dollars(tranche["usd_ceiling"])
                    if isinstance(tranche.get("usd_ceiling"), int) else None,
                    f"{tranche['minute_ceiling']} min"
                    if isinstance(tranche["minute_ceiling"], int) else None]
        bounds = ", ".join(part for part in ceilings if part)
        lines.append(f"tranche {tranche['activation']}   from {tranche['started']}  "
                     f"{len(tranche['turns'])} turns · {tokens_text(tranche['tokens'])} tok · "
                     + (f"{dollars(tranche['picousd'])} · " if priced else "")
                     + f"{tranche['minutes']} min" + (f"  (ceilings: {bounds})" if bounds else ""))
        for turn in tranche["turns"]:
            notes = [note for note, on in (("charged late", turn["late"]),
                                           ("stuck warning", turn["stuck"])) if on]
            cost = f"  {dollars(turn['picousd']):>8}" if turn["picousd"] is not None else ""
            lines.append(f"  turn {turn['turn']:>4}  {turn['at']}  "
                         f"{tokens_text(turn['tokens']):>6} tok{cost}"
                         + (f"  {'; '.join(notes)}" if notes else ""))
        ended = tranche["ended"]
        if ended is not None:
            ceiling = CEILING_WORDS.get(ended["ceiling"], ended["ceiling"])
            detail = f"on its {ceiling} ceiling" if ended["how"] == "exhausted" else \
                ended.get("reason") or ""
            extra = [f"{ended['late_turns']} late"] if ended["late_turns"] else []
            if ended["owed"]:
                extra.append(f"{ended['owed']} owed to the next tranche")
            how = ended["how"] if ended["how"] in _ENDINGS.values() else f"ended: {ended['how']}"
            lines.append(f"  {how} {detail}".rstrip()
                         + (f" ({', '.join(extra)})" if extra else "")
                         + (f"; next step then: {tranche['checkpoint']}"
                            if tranche.get("checkpoint") else ""))
    lines += model_lines(told["by_model"], tokens_text)
    return lines
