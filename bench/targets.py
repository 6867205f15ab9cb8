"""The targets of issues 6 and 14, checked against one bench run.

Time targets are ratios of medians to the interpreter floor (`python3 -c pass`) measured
in the same run, because ratios hold on a noisy machine where milliseconds do not.
"""

from __future__ import annotations

from dataclasses import dataclass

from bench.suite import MEASURED, Outcome

FLOOR_KEY = "floor"
PEAK_LIMIT_MB = 40.0

# (scenario key, limit as a multiple of the floor, why this path has this limit)
FLOOR_LIMITS = (
    ("pre-tool-use-unguarded", 1.5, "hook, session without a goal"),
    ("user-prompt-ordinary", 1.5, "hook, session without a goal"),
    ("stop-no-goal", 1.5, "hook, session without a goal"),
    ("stop-no-goal-beside-goal", 1.5, "hook, session without a goal"),
    ("stop-no-goal-continuation", 1.5, "hook, session without a goal"),
    ("session-start-no-goal", 1.5, "hook, session without a goal"),
    ("post-tool-use-agent", 1.5, "hook, session without a goal"),
    ("session-end-no-goal", 1.5, "hook, session without a goal"),
    ("statusline-no-goal", 1.5, "status line, session without a goal"),
    ("pre-tool-use-bash-checked", 1.5, "the guard's allow path"),
    ("pre-tool-use-role-deny", 2.0, "the guard's deny path"),
    ("pre-tool-use-bash-ledger", 2.0, "the guard's deny path"),
    ("pre-tool-use-goal-1mb", 2.0, "a goal's mid-turn budget check"),
    ("pre-tool-use-goal-usd-1mb", 2.0, "a goal's mid-turn budget check"),
    ("stop-charge-20", 2.0, "a charge"),
    ("stop-charge-200", 2.0, "a charge"),
    ("stop-charge-2000", 2.0, "a charge"),
    ("stop-charge-published-200", 2.0, "a charge"),  # publishing on: never the network
    ("stop-charge-publish-due-200", 2.0, "a charge"),
    ("user-prompt-goal", 4.0, "a person's /goal"),
    ("stop-activate", 4.0, "a person's /goal"),
)
GROWTH = ("stop-charge-2000", "stop-charge-20", 1.25)
# The brief parser is linear: 100x the input may cost at most 150x the whole command.
BRIEF_GROWTH = ("brief-check-1mb", "brief-check-10kb", 150.0)
BRIEF_LIMIT_MS = 500.0
# Artifact listings as whole processes (issue 12): an absolute limit, and the cost at 2,000
# against 100 (20 times the artifacts: a ratio below 20 is better than linear).
LISTING_LIMIT_MS = (("list-2000", 250.0), ("tree-2000", 250.0))
LISTING_GROWTH = ("list-2000", "list-100", 20.0)
# The hooks of a priced goal (issue 35): the charge, and the mid-turn check under a dollar
# ceiling, price with the compiled table alone, never importing genai-prices or its stack.
PRICED_HOOKS = ("stop-charge-20", "stop-charge-200", "stop-charge-2000",
                "pre-tool-use-goal-usd-1mb")
# (scenario key, limit in ms as a whole process, why): issue 13's target for a CLI command
ABSOLUTE_LIMITS = (
    ("gate-status-10000-unchanged", 300.0, "gate status, 10,000 unchanged files"),
)


@dataclass(frozen=True)
class Check:
    """One target: what it asks, what was measured, and whether it holds (None: unmeasured)."""

    subject: str
    limit: str
    measured: str
    met: bool | None
    margin: str = ""

    def as_json(self) -> dict:
        return {"subject": self.subject, "limit": self.limit, "measured": self.measured,
                "met": self.met, "margin": self.margin}


def peak_mb(outcome: Outcome) -> float | None:
    if outcome.measurement is None or outcome.measurement.peak_kib is None:
        return None
    return outcome.measurement.peak_kib * 1024 / 1e6


def _margin(value: float, limit: float, unit: str) -> str:
    if value <= limit:
        return f"{limit - value:.2f}{unit} to spare"
    return f"missed by {value - limit:.2f}{unit} ({(value / limit - 1) * 100:.0f}% over)"


def _unmeasured(outcome: Outcome | None) -> str:
    if outcome is None:
        return "not run"
    return f"{outcome.status}: {outcome.reason}"


def evaluate(outcomes: list[Outcome]) -> list[Check]:
    by_key = {o.scenario.key: o for o in outcomes}
    floor = by_key.get(FLOOR_KEY)
    floor_ms = floor.median_ms if floor and floor.status == MEASURED else None
    checks = []
    for key, limit, why in FLOOR_LIMITS:
        outcome = by_key.get(key)
        subject = f"{why}: {outcome.scenario.title if outcome else key}"
        if outcome is None or outcome.status != MEASURED or floor_ms is None:
            checks.append(Check(subject, f"<= {limit}x floor", _unmeasured(outcome), None))
            continue
        ratio = outcome.median_ms / floor_ms
        checks.append(Check(subject, f"<= {limit}x floor", f"{ratio:.2f}x", ratio <= limit,
                            _margin(ratio, limit, "x")))
    for key, limit_ms, why in ABSOLUTE_LIMITS:
        outcome = by_key.get(key)
        subject = f"{why}: {outcome.scenario.title if outcome else key}"
        if outcome is None or outcome.status != MEASURED:
            checks.append(Check(subject, f"< {limit_ms:.0f} ms", _unmeasured(outcome), None))
            continue
        checks.append(Check(subject, f"< {limit_ms:.0f} ms", f"{outcome.median_ms:.1f} ms",
                            outcome.median_ms < limit_ms,
                            _margin(outcome.median_ms, limit_ms, " ms")))
    big, small, limit = GROWTH
    big_o, small_o = by_key.get(big), by_key.get(small)
    subject = "charging a 2,000-turn ledger vs a 20-turn one"
    if big_o and small_o and big_o.status == small_o.status == MEASURED:
        ratio = big_o.median_ms / small_o.median_ms
        measured = f"{ratio:.2f}x"
        if floor_ms is not None:  # the part forge adds, without the interpreter's share
            measured += (f" (over the floor: {big_o.median_ms - floor_ms:+.1f} ms vs "
                         f"{small_o.median_ms - floor_ms:+.1f} ms)")
        checks.append(Check(subject, f"<= {limit}x", measured, ratio <= limit,
                            _margin(ratio, limit, "x")))
    else:
        missing = big_o if not big_o or big_o.status != MEASURED else small_o
        checks.append(Check(subject, f"<= {limit}x", _unmeasured(missing), None))
    checks += _brief_checks(by_key)
    checks += _listing_checks(by_key)
    for outcome in outcomes:
        if not outcome.scenario.is_hook or outcome.status != MEASURED:
            continue
        peak = peak_mb(outcome)
        subject = f"peak memory: {outcome.scenario.title}"
        if peak is None:
            checks.append(Check(subject, f"< {PEAK_LIMIT_MB:.0f} MB", "not probed", None))
            continue
        checks.append(Check(subject, f"< {PEAK_LIMIT_MB:.0f} MB", f"{peak:.1f} MB",
                            peak < PEAK_LIMIT_MB, _margin(peak, PEAK_LIMIT_MB, " MB")))
    return checks


def _brief_checks(by_key: dict[str, Outcome]) -> list[Check]:
    """`forge brief check`: 1 MB under BRIEF_LIMIT_MS, and linear against 10 KB."""
    big_key, small_key, limit = BRIEF_GROWTH
    big, small = by_key.get(big_key), by_key.get(small_key)
    checks = []
    subject = "forge brief check on a 1 MB messy brief"
    if big is None or big.status != MEASURED:
        checks.append(Check(subject, f"< {BRIEF_LIMIT_MS:.0f} ms", _unmeasured(big), None))
    else:
        checks.append(Check(subject, f"< {BRIEF_LIMIT_MS:.0f} ms", f"{big.median_ms:.0f} ms",
                            big.median_ms < BRIEF_LIMIT_MS,
                            _margin(big.median_ms, BRIEF_LIMIT_MS, " ms")))
    subject = "forge brief check, 1 MB vs 10 KB (linear parser)"
    if big and small and big.status == small.status == MEASURED:
        ratio = big.median_ms / small.median_ms
        checks.append(Check(subject, f"<= {limit:.0f}x", f"{ratio:.2f}x", ratio <= limit,
                            _margin(ratio, limit, "x")))
    else:
        missing = big if not big or big.status != MEASURED else small
        checks.append(Check(subject, f"<= {limit:.0f}x", _unmeasured(missing), None))
    return checks


def _listing_checks(by_key: dict[str, Outcome]) -> list[Check]:
    """`forge list`/`tree --json` at 2,000 artifacts under their limit, and list's growth."""
    checks = []
    for key, limit in LISTING_LIMIT_MS:
        outcome = by_key.get(key)
        subject = outcome.scenario.title if outcome else key
        if outcome is None or outcome.status != MEASURED:
            checks.append(Check(subject, f"< {limit:.0f} ms", _unmeasured(outcome), None))
            continue
        checks.append(Check(subject, f"< {limit:.0f} ms", f"{outcome.median_ms:.0f} ms",
                            outcome.median_ms < limit, _margin(outcome.median_ms, limit, " ms")))
    big, small, limit = LISTING_GROWTH
    big_o, small_o = by_key.get(big), by_key.get(small)
    subject = "forge list --json at 2,000 artifacts vs 100"
    if big_o and small_o and big_o.status == small_o.status == MEASURED:
        ratio = big_o.median_ms / small_o.median_ms
        checks.append(Check(subject, f"<= {limit:.0f}x (linear)", f"{ratio:.2f}x",
                            ratio <= limit, _margin(ratio, limit, "x")))
    else:
        checks.append(Check(subject, f"<= {limit:.0f}x (linear)", _unmeasured(
            big_o if not big_o or big_o.status != MEASURED else small_o), None))
    return checks


def import_checks(outcomes: list[Outcome], profiles: dict[str, dict]) -> list[Check]:
    """A priced goal's hooks import none of genai-prices, pydantic or httpx (their import
    profiles, bench/imports.py; unmeasured when the run profiled no imports)."""
    from bench.imports import PRICING_ONLY

    by_key = {o.scenario.key: o for o in outcomes}
    limit = "none of " + ", ".join(PRICING_ONLY)
    checks = []
    for key in PRICED_HOOKS:
        outcome = by_key.get(key)
        subject = f"a priced goal's imports: {outcome.scenario.title if outcome else key}"
        profile = profiles.get(key)
        if profile is None:
            checks.append(Check(subject, limit, _unmeasured(outcome) if outcome is None
                                or outcome.status != MEASURED else "imports not profiled",
                                None))
            continue
        found = profile["pricing_imports"]
        checks.append(Check(subject, limit, ", ".join(found) or "none", not found))
    return checks
