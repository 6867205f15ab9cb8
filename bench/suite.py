"""Run every scenario, each in a fresh project, and keep what happened to each.

Scenarios are measured interleaved: round after round, one run of each. The floor and
every hook then share the same moments of the machine's load, which keeps their ratios
honest on a busy or throttled machine.
"""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path

from bench.measure import Measurement, Run, probe_peak, run_once, summarise
from bench.scenarios import NotAvailable, Plan, Scenario
from bench.workspace import Workspace

MEASURED = "measured"
NOT_AVAILABLE = "not available"
INVALID = "invalid"


@dataclass
class Outcome:
    scenario: Scenario
    status: str
    reason: str = ""
    note: str = ""
    measurement: Measurement | None = None
    plan: Plan | None = None
    samples: list[Run] = field(default_factory=list, repr=False)

    @property
    def median_ms(self) -> float | None:
        return self.measurement.wall.median if self.measurement else None


@dataclass(frozen=True)
class Settings:
    runs: int
    warmup: int
    memory_runs: int
    python: str
    plugin_root: Path
    fixtures: Path


def _fresh(plan: Plan) -> Run:
    if plan.before_each:
        plan.before_each()
    return run_once(plan.command)


def prepare(scenario: Scenario, settings: Settings, base: Path) -> Outcome:
    """Build the scenario's inputs and check that one run does what the scenario claims."""
    space = Workspace.create(settings.plugin_root, settings.python, base, scenario.key,
                             settings.fixtures)
    try:
        plan = scenario.prepare(space)
    except NotAvailable as exc:
        return Outcome(scenario, NOT_AVAILABLE, str(exc))
    except Exception as exc:  # forge changed under the bench: say so, measure the rest
        return Outcome(scenario, INVALID, f"could not prepare: {exc.__class__.__name__}: {exc}")
    problem = plan.expect(_fresh(plan))
    status = INVALID if problem else MEASURED
    return Outcome(scenario, status, problem or "", plan.note, plan=plan)


def _finish(outcome: Outcome, settings: Settings) -> None:
    plan = outcome.plan
    problems = [p for p in map(plan.expect, outcome.samples) if p]
    if problems:
        outcome.status = INVALID
        outcome.reason = f"{len(problems)} measured run(s) went wrong, e.g. {problems[0]}"
        return
    peaks = []
    try:
        for _ in range(settings.memory_runs if plan.command.probe_argv else 0):
            if plan.before_each:
                plan.before_each()
            peak, probed = probe_peak(plan.command)
            problem = plan.expect(probed)
            if problem:
                raise RuntimeError(f"the probed run went wrong: {problem}")
            peaks.append(peak)
    except RuntimeError as exc:
        peaks = []
        outcome.note = "; ".join(filter(None, [outcome.note, f"peak memory unknown: {exc}"]))
    outcome.measurement = summarise(outcome.samples, peaks)


def run_all(scenarios: list[Scenario], settings: Settings, base: Path,
            progress=sys.stderr) -> list[Outcome]:
    outcomes = []
    for scenario in scenarios:
        outcome = prepare(scenario, settings, base)
        if outcome.status != MEASURED:
            progress.write(f"bench: {scenario.title}: {outcome.status}: {outcome.reason}\n")
        outcomes.append(outcome)
    live = [o for o in outcomes if o.status == MEASURED]
    progress.write(f"bench: {len(live)} scenarios, {settings.warmup} warm-up + "
                   f"{settings.runs} interleaved rounds\n")
    for round_ in range(settings.warmup + settings.runs):
        for outcome in live:
            run = _fresh(outcome.plan)
            if round_ >= settings.warmup:
                outcome.samples.append(run)
    for outcome in live:
        _finish(outcome, settings)
    return outcomes
