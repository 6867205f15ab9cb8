"""Turn one bench run into a terminal table, a JSON document and a Markdown page."""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
from dataclasses import dataclass, field
from datetime import UTC, datetime

from bench.suite import MEASURED, Outcome
from bench.targets import FLOOR_KEY, Check, peak_mb

HEADER = ("Scenario", "median ms", "p10-p90 ms", "x floor", "+ms", "CPU ms", "peak MB")


@dataclass
class Report:
    outcomes: list[Outcome]
    checks: list[Check]
    python: str
    mode: str
    runs: int
    warmup: int
    concurrency: dict | None = None
    imports: dict[str, dict] = field(default_factory=dict)
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))

    @property
    def floor_ms(self) -> float | None:
        for outcome in self.outcomes:
            if outcome.scenario.key == FLOOR_KEY and outcome.status == MEASURED:
                return outcome.median_ms
        return None

    def ratio(self, outcome: Outcome) -> float | None:
        if outcome.status != MEASURED or not self.floor_ms:
            return None
        return outcome.median_ms / self.floor_ms


_DESCRIBE = ("import json, platform, sys; print(json.dumps({'python': "
             "platform.python_version(), 'implementation': platform.python_implementation(), "
             "'executable': sys.executable}))")


def machine(python: str) -> dict:
    """The machine, and the interpreter the hooks ran with (which may not be this one)."""
    described = subprocess.run([python, "-c", _DESCRIBE], capture_output=True, text=True,
                               check=True)
    return {**json.loads(described.stdout), "platform": platform.platform(),
            "cpus": os.cpu_count()}


# -- rows -------------------------------------------------------------------------------------

def _row(report: Report, outcome: Outcome) -> tuple[str, ...]:
    if outcome.status != MEASURED:
        return (outcome.scenario.title, f"{outcome.status}: {outcome.reason}")
    wall = outcome.measurement.wall
    peak = peak_mb(outcome)
    return (outcome.scenario.title, f"{wall.median:.1f}", f"{wall.p10:.1f}-{wall.p90:.1f}",
            f"{report.ratio(outcome):.2f}", f"{wall.median - report.floor_ms:+.1f}",
            f"{outcome.measurement.cpu.median:.1f}",
            "-" if peak is None else f"{peak:.1f}")


def _verdict(check: Check) -> str:
    return {True: "met", False: "MISSED", None: "not measured"}[check.met]


def _concurrency_line(result: dict) -> str:
    if result.get("status") != MEASURED:
        return f"Concurrency: {result.get('status')}: {result.get('reason')}"
    chain = "the chain verifies" if result["chain_verified"] else \
        f"THE CHAIN FAILS VERIFICATION: {result['chain_problem']}"
    return (f"Concurrency: {result['processes']} Stop hooks charging one goal at once "
            f"(from turn {result['start_turns']}), {result['rounds']} rounds: "
            f"{result['round_wall_ms']:.0f} ms per round, "
            f"{result['turns_per_second']:.1f} turns/s; {result['lost']} lost, "
            f"{result['duplicated']} duplicated ({result['charged']} of {result['expected']} "
            f"turns recorded), {result['failed_processes']} hook failures; {chain}")


# -- terminal ---------------------------------------------------------------------------------

def text(report: Report) -> str:
    rows = [_row(report, outcome) for outcome in report.outcomes]
    full = [row for row in rows if len(row) == len(HEADER)]
    widths = [max(len(row[i]) for row in [HEADER, *full]) for i in range(len(HEADER))]

    def line(row: tuple[str, ...]) -> str:
        if len(row) != len(HEADER):
            return f"{row[0]:<{widths[0]}}  {row[1]}"
        return "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                         for i, (cell, w) in enumerate(zip(row, widths, strict=True)))

    out = [f"forge bench ({report.mode}: {report.runs} runs after {report.warmup} warm-up, "
           f"medians; x floor = median / median of `python3 -c pass`, +ms = median - that median)",
           "",
           line(HEADER), "  ".join("-" * w for w in widths)]
    out += [line(row) for row in rows]
    if report.concurrency:
        out += ["", _concurrency_line(report.concurrency)]
    out += ["", "Targets (issue 6):"]
    out += [f"  [{_verdict(c)}] {c.subject}: {c.measured} (limit {c.limit})"
            + (f", {c.margin}" if c.margin else "") for c in report.checks]
    return "\n".join(out)


# -- JSON -------------------------------------------------------------------------------------

def _outcome_json(report: Report, outcome: Outcome) -> dict:
    data = {"key": outcome.scenario.key, "group": outcome.scenario.group,
            "title": outcome.scenario.title, "status": outcome.status,
            "hook": outcome.scenario.is_hook}
    if outcome.reason:
        data["reason"] = outcome.reason
    if outcome.note:
        data["note"] = outcome.note
    if outcome.status == MEASURED:
        ratio = report.ratio(outcome)
        data.update(wall_ms=outcome.measurement.wall.as_json(),
                    cpu_ms=outcome.measurement.cpu.as_json(),
                    ratio_to_floor=None if ratio is None else round(ratio, 3),
                    over_floor_ms=round(outcome.measurement.wall.median - report.floor_ms, 3),
                    peak_mb=None if peak_mb(outcome) is None else round(peak_mb(outcome), 2))
    if outcome.scenario.key in report.imports:
        data["imports"] = report.imports[outcome.scenario.key]
    return data


def as_json(report: Report) -> dict:
    return {"created": report.created, "mode": report.mode, "runs": report.runs,
            "warmup": report.warmup, "machine": machine(report.python),
            "floor_ms": report.floor_ms,
            "scenarios": [_outcome_json(report, o) for o in report.outcomes],
            "concurrency": report.concurrency,
            "targets": [check.as_json() for check in report.checks]}


def write_json(report: Report, path) -> None:
    path.write_text(json.dumps(as_json(report), indent=2) + "\n", encoding="utf-8")


# -- Markdown ---------------------------------------------------------------------------------

def _md_cell(text_: str) -> str:
    return text_.replace("|", "\\|")


def _floor_note(report: Report) -> list[str]:
    by_key = {o.scenario.key: o for o in report.outcomes if o.status == MEASURED}
    if FLOOR_KEY not in by_key or "floor-no-site" not in by_key:
        return []
    site = by_key[FLOOR_KEY].median_ms - by_key["floor-no-site"].median_ms
    return [f"Of the floor's {by_key[FLOOR_KEY].median_ms:.1f} ms, {site:.1f} ms is `site` "
            "(this interpreter's site-packages and its `.pth` files), which every hook pays "
            "too. With a leaner site-packages the floor drops and the same cost of forge is a "
            "larger multiple of it, so read `+ms` alongside `x floor`."]


def markdown(report: Report) -> str:
    info = machine(report.python)
    out = [
        "# forge bench results", "",
        f"`python -m bench` on {report.created}: {report.mode} mode, {report.runs} runs after "
        f"{report.warmup} warm-up per scenario; hooks on {info['implementation']} "
        f"{info['python']}, {info['platform']}, {info['cpus']} CPUs. Times are wall-clock "
        "medians of whole processes started the way the host starts them (launcher, stdin "
        "JSON, a git project as working directory), scenarios interleaved run by run; "
        "`x floor` divides by the median of `python3 -c pass` from the same run and `+ms` "
        "subtracts it. Peak memory is the process's own high-water resident set (VmHWM, "
        "read by the process itself; it includes about 0.5 MB for the probe).", "",
        *_floor_note(report), "",
        "| " + " | ".join(HEADER) + " |",
        "|" + "|".join(["---"] + ["---:"] * (len(HEADER) - 1)) + "|",
    ]
    for outcome in report.outcomes:
        row = _row(report, outcome)
        cells = [*row, *[""] * (len(HEADER) - len(row))]
        out.append("| " + " | ".join(_md_cell(cell) for cell in cells) + " |")
    if report.concurrency:
        out += ["", _concurrency_line(report.concurrency) + "."]
    out += ["", "## Targets (issue 6)", "", "| Target | Limit | Measured | Verdict |",
            "|---|---|---|---|"]
    out += [f"| {_md_cell(c.subject)} | {c.limit} | {_md_cell(c.measured)} | "
            f"{_verdict(c)}{(', ' + c.margin) if c.margin else ''} |" for c in report.checks]
    if report.imports:
        out += ["", "## Where the time goes", "",
                "Imports beyond what `python3 -c pass` loads, from one `-X importtime` profile "
                "per process (smallest of a few runs; profiling inflates every figure, so "
                "compare them with each other, not with the table above).", ""]
        titles = {o.scenario.key: o.scenario.title for o in report.outcomes}
        for key, data in report.imports.items():
            heavy = ", ".join(f"`{h['module']}` {h['ms']:.1f} ms (from {h['imported_by']})"
                              for h in data["heaviest"]) or "nothing beyond the floor"
            out.append(f"- **{titles.get(key, key)}**: {data['imports_ms']:.1f} ms of imports, "
                       f"{data['forge_code_ms']:.1f} ms in forge's own modules; "
                       f"heaviest: {heavy}.")
    return "\n".join(out) + "\n"


def print_text(report: Report, stream=None) -> None:
    (stream or sys.stdout).write(text(report) + "\n")
