"""Turn one bench run into a terminal table, a JSON document and a Markdown page.

A run has one or more passes, each the same scenarios under one interpreter (the one
running the bench, and a lean one shaped like the plugin's own environment), each with
its own floor, table and target checks.
"""

from __future__ import annotations

import json
import os
import platform
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from datetime import UTC, datetime
from pathlib import Path

from bench import adversarial, artifacts, host_latency, mix
from bench.suite import MEASURED, Outcome
from bench.targets import FLOOR_KEY, Check, peak_mb

HEADER = ("Scenario", "median ms", "p10-p90 ms", "x floor", "+ms", "CPU ms", "CPU x floor",
          "peak MB")
NO_SITE_KEY = "floor-no-site"

_DESCRIBE = ("import json, platform; print(json.dumps({'python': platform.python_version(), "
             "'implementation': platform.python_implementation()}))")


def describe(python: str) -> dict:
    """Which interpreter `python` is (never its path: results are committed)."""
    described = subprocess.run([python, "-c", _DESCRIBE], capture_output=True, text=True,
                               check=True)
    return json.loads(described.stdout)


@dataclass
class Pass:
    """The scenarios measured under one interpreter."""

    label: str
    python: str
    outcomes: list[Outcome]
    checks: list[Check]
    imports: dict[str, dict] = field(default_factory=dict)
    module_costs: dict[str, float] = field(default_factory=dict)

    def _median(self, key: str) -> float | None:
        for outcome in self.outcomes:
            if outcome.scenario.key == key and outcome.status == MEASURED:
                return outcome.median_ms
        return None

    @property
    def floor_ms(self) -> float | None:
        return self._median(FLOOR_KEY)

    @property
    def site_ms(self) -> float | None:
        """How much of the floor is `site` (the floor minus `python3 -S -c pass`)."""
        bare = self._median(NO_SITE_KEY)
        return None if bare is None or self.floor_ms is None else self.floor_ms - bare

    def ratio(self, outcome: Outcome) -> float | None:
        if outcome.status != MEASURED or not self.floor_ms:
            return None
        return outcome.median_ms / self.floor_ms

    def cpu_ratio(self, outcome: Outcome) -> float | None:
        """CPU time against the floor's CPU time: steadier than wall time on a busy machine,
        blind to waiting (fsync, locks)."""
        floor = next((o for o in self.outcomes
                      if o.scenario.key == FLOOR_KEY and o.status == MEASURED), None)
        if outcome.status != MEASURED or floor is None:
            return None
        return outcome.measurement.cpu.median / floor.measurement.cpu.median


@dataclass
class Report:
    passes: list[Pass]
    mode: str
    runs: int
    warmup: int
    concurrency: dict | None = None
    artifacts: dict | None = None
    adversarial: dict | None = None
    host_latency: dict | None = None
    session_mix: dict | None = None
    created: str = field(default_factory=lambda: datetime.now(UTC).isoformat(timespec="seconds"))


def _machine_paths() -> list[tuple[str, str]]:
    found = [(str(Path(__file__).resolve().parent.parent), "<plugin root>"),
             (os.path.realpath(tempfile.gettempdir()), "<tmp>"), (tempfile.gettempdir(), "<tmp>"),
             (sys.prefix, "<python prefix>"), (str(Path.home()), "~")]
    return sorted(found, key=lambda pair: -len(pair[0]))


def redact(text: str) -> str:
    """`text` without this machine's paths: failure reasons quote output, and are committed."""
    for path, name in _machine_paths():
        text = text.replace(path, name)
    return text


def machine() -> dict:
    return {"platform": platform.platform(), "cpus": os.cpu_count()}


# -- rows -------------------------------------------------------------------------------------

def _row(run: Pass, outcome: Outcome) -> tuple[str, ...]:
    if outcome.status != MEASURED:
        return (outcome.scenario.title, f"{outcome.status}: {redact(outcome.reason)}")
    wall = outcome.measurement.wall
    peak = peak_mb(outcome)
    return (outcome.scenario.title, f"{wall.median:.1f}", f"{wall.p10:.1f}-{wall.p90:.1f}",
            f"{run.ratio(outcome):.2f}", f"{wall.median - run.floor_ms:+.1f}",
            f"{outcome.measurement.cpu.median:.1f}", f"{run.cpu_ratio(outcome):.2f}",
            "-" if peak is None else f"{peak:.1f}")


def _verdict(check: Check) -> str:
    return {True: "met", False: "MISSED", None: "not measured"}[check.met]


def _concurrency_line(result: dict) -> str:
    if result.get("status") != MEASURED:
        return f"Concurrency: {result.get('status')}: {redact(str(result.get('reason')))}"
    chain = "the chain verifies" if result["chain_verified"] else \
        f"THE CHAIN FAILS VERIFICATION: {redact(str(result['chain_problem']))}"
    return (f"Concurrency: {result['processes']} Stop hooks charging one goal at once "
            f"(from turn {result['start_turns']}), {result['rounds']} rounds: "
            f"{result['round_wall_ms']:.0f} ms per round (one by one: "
            f"{result['one_by_one_ms']:.0f} ms), "
            f"{result['turns_per_second']:.1f} turns/s; {result['lost']} lost, "
            f"{result['duplicated']} duplicated ({result['charged']} of {result['expected']} "
            f"turns recorded), {result['failed_processes']} hook failures; {chain}")


def _pass_heading(run: Pass) -> str:
    info = describe(run.python)
    site = f"; {run.site_ms:.1f} ms of the floor is `site`" if run.site_ms is not None else ""
    floor = f"{run.floor_ms:.1f} ms" if run.floor_ms is not None else "not measured"
    return (f"{run.label}: {info['implementation']} {info['python']}, "
            f"floor `python3 -c pass` {floor}{site}")


# -- terminal ---------------------------------------------------------------------------------

def _text_pass(run: Pass) -> list[str]:
    rows = [_row(run, outcome) for outcome in run.outcomes]
    full = [row for row in rows if len(row) == len(HEADER)]
    widths = [max(len(row[i]) for row in [HEADER, *full]) for i in range(len(HEADER))]

    def line(row: tuple[str, ...]) -> str:
        if len(row) != len(HEADER):
            return f"{row[0]:<{widths[0]}}  {row[1]}"
        return "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                         for i, (cell, w) in enumerate(zip(row, widths, strict=True)))

    out = [_pass_heading(run), "", line(HEADER), "  ".join("-" * w for w in widths)]
    out += [line(row) for row in rows]
    out += ["", "Targets (issues 6 and 14):"]
    out += [f"  [{_verdict(c)}] {c.subject}: {c.measured} (limit {c.limit})"
            + (f", {c.margin}" if c.margin else "") for c in run.checks]
    return out


def _text_host(result: dict) -> list[str]:
    rows = host_latency.cells(result)
    widths = [max(len(row[i]) for row in [host_latency.HEADER, *rows])
              for i in range(len(host_latency.HEADER))]

    def line(row: tuple[str, ...]) -> str:
        return "  ".join(cell.ljust(w) if i == 0 else cell.rjust(w)
                         for i, (cell, w) in enumerate(zip(row, widths, strict=True)))

    out = [redact(host_latency.line(result))]
    if rows:
        out += ["", line(host_latency.HEADER), "  ".join("-" * w for w in widths)]
        out += [line(row) for row in rows]
    return out


def text(report: Report) -> str:
    out = [f"forge bench ({report.mode}: {report.runs} runs after {report.warmup} warm-up, "
           "medians; x floor = median / median of `python3 -c pass` under the same "
           "interpreter, +ms = median - that median)"]
    for run in report.passes:
        out += ["", *_text_pass(run)]
    if report.concurrency:
        out += ["", _concurrency_line(report.concurrency)]
    if report.artifacts:
        out += ["", artifacts.line(report.artifacts)]
    if report.session_mix:
        out += ["", mix.line(report.session_mix)]
    if report.adversarial:
        out += ["", redact(adversarial.line(report.adversarial))]
    if report.host_latency:
        out += ["", *_text_host(report.host_latency)]
    return "\n".join(out)


# -- JSON -------------------------------------------------------------------------------------

def _outcome_json(run: Pass, outcome: Outcome) -> dict:
    data = {"key": outcome.scenario.key, "group": outcome.scenario.group,
            "title": outcome.scenario.title, "status": outcome.status,
            "hook": outcome.scenario.is_hook}
    if outcome.reason:
        data["reason"] = redact(outcome.reason)
    if outcome.note:
        data["note"] = outcome.note
    if outcome.status == MEASURED:
        ratio = run.ratio(outcome)
        peak = peak_mb(outcome)
        data.update(wall_ms=outcome.measurement.wall.as_json(),
                    cpu_ms=outcome.measurement.cpu.as_json(),
                    ratio_to_floor=None if ratio is None else round(ratio, 3),
                    cpu_ratio_to_floor=round(run.cpu_ratio(outcome), 3),
                    over_floor_ms=round(outcome.measurement.wall.median - run.floor_ms, 3),
                    peak_mb=None if peak is None else round(peak, 2))
    if outcome.scenario.key in run.imports:
        data["imports"] = run.imports[outcome.scenario.key]
    return data


def _pass_json(run: Pass) -> dict:
    return {"label": run.label, "interpreter": describe(run.python),
            "floor_ms": run.floor_ms, "site_ms": run.site_ms,
            "scenarios": [_outcome_json(run, o) for o in run.outcomes],
            "targets": [check.as_json() for check in run.checks],
            "module_costs_ms": run.module_costs}


def as_json(report: Report) -> dict:
    return {"created": report.created, "mode": report.mode, "runs": report.runs,
            "warmup": report.warmup, "machine": machine(),
            "passes": [_pass_json(run) for run in report.passes],
            "concurrency": report.concurrency and {
                key: redact(value) if isinstance(value, str) else value
                for key, value in report.concurrency.items()},
            "artifacts": report.artifacts,
            "session_mix": report.session_mix,
            "adversarial": report.adversarial and {
                key: redact(value) if isinstance(value, str) else value
                for key, value in report.adversarial.items()},
            "host_latency": report.host_latency and {
                key: redact(value) if isinstance(value, str) else value
                for key, value in report.host_latency.items()}}


def write_json(report: Report, path: Path) -> None:
    path.write_text(json.dumps(as_json(report), indent=2) + "\n", encoding="utf-8")


# -- Markdown ---------------------------------------------------------------------------------

def _md_cell(text_: str) -> str:
    return text_.replace("|", "\\|")


def _md_pass(run: Pass) -> list[str]:
    out = [f"## {_md_cell(_pass_heading(run))}", "",
           "| " + " | ".join(HEADER) + " |",
           "|" + "|".join(["---"] + ["---:"] * (len(HEADER) - 1)) + "|"]
    for outcome in run.outcomes:
        row = _row(run, outcome)
        cells = [*row, *[""] * (len(HEADER) - len(row))]
        out.append("| " + " | ".join(_md_cell(cell) for cell in cells) + " |")
    out += ["", "Targets (issues 6 and 14):", "", "| Target | Limit | Measured | Verdict |",
            "|---|---|---|---|"]
    out += [f"| {_md_cell(c.subject)} | {c.limit} | {_md_cell(c.measured)} | "
            f"{_verdict(c)}{(', ' + c.margin) if c.margin else ''} |" for c in run.checks]
    if run.imports:
        out += ["", "Where the time goes. Each hook against a process that only imports what "
                "the hook imported (same interpreter, interleaved medians), then the imports "
                "beyond what `python3 -c pass` loads, from `-X importtime` (smallest of a few "
                "runs; profiling inflates every figure, so compare them with each other, not "
                "with the table).", ""]
        titles = {o.scenario.key: o.scenario.title for o in run.outcomes}
        for key, data in run.imports.items():
            heavy = ", ".join(f"`{h['module']}` {h['ms']:.1f} ms (from {h['imported_by']})"
                              for h in data["heaviest"]) or "nothing beyond the floor"
            out.append(f"- **{titles.get(key, key)}**: {data['hook_over_floor_ms']:+.1f} ms "
                       f"over the floor, of which importing its modules alone takes "
                       f"{data['imports_alone_over_floor_ms']:+.1f} ms and the rest (launcher, "
                       f"the hook's own work and I/O, exit) {data['rest_ms']:+.1f} ms. "
                       f"Profiled: {data['imports_ms']:.1f} ms "
                       f"of imports, {data['forge_code_ms']:.1f} ms of it in forge's own "
                       f"modules; heaviest: {heavy}.")
    if run.module_costs:
        costs = ", ".join(f"`{module}` {cost:+.1f}" for module, cost in
                          sorted(run.module_costs.items(), key=lambda item: -item[1]))
        out += ["", "Each of those modules imported alone in a fresh process, median ms over "
                f"the floor (they share dependencies, so they do not add up): {costs}."]
    return out


def _summary(run: Pass) -> str:
    """One line: how many of the pass's targets hold."""
    met = sum(check.met is True for check in run.checks)
    missed = [check for check in run.checks if check.met is False]
    unmeasured = sum(check.met is None for check in run.checks)
    text = f"{run.label}: {met} of {len(run.checks)} targets met"
    if missed:
        text += "; missed: " + "; ".join(f"{c.subject} ({c.measured}, limit {c.limit})"
                                         for c in missed)
    if unmeasured:
        text += f"; {unmeasured} not measured"
    return text + "."


def markdown(report: Report) -> str:
    info = machine()
    out = [
        "# forge bench results", "",
        f"`python -m bench` on {report.created}: {report.mode} mode, {report.runs} runs after "
        f"{report.warmup} warm-up per scenario, on {info['platform']} with {info['cpus']} CPUs. "
        "Times are wall-clock medians of whole processes started the way the host starts "
        "them (the plugin's launcher, stdin JSON, a git project as working directory), "
        "scenarios interleaved run by run; `x floor` divides by the median of "
        "`python3 -c pass` under the same interpreter in the same run, and `+ms` subtracts "
        "it; `CPU x floor` does the same with user + system CPU time, which a busy machine "
        "disturbs less but which leaves out waiting (fsync, locks). Targets are checked on "
        "wall time, what the host waits for. Peak memory is the process's own high-water "
        "resident set (VmHWM, read by the process itself; it includes about 0.5 MB for the "
        "probe).", "",
        "Each pass runs the hooks under one interpreter. A `site` that runs `.pth` code at "
        "start-up makes the floor slow and preloads modules forge would otherwise import "
        "itself, so forge looks cheaper next to it; the lean pass has none of that, like the "
        "`forge-env` the plugin builds. Read `+ms` alongside `x floor`. The two reference "
        "rows run no forge code: what `-m` costs (runpy; the plugin's launcher runs a file "
        "instead), and the least any hook pays that reads its stdin JSON that way.",
    ]
    out += ["", *[f"- {_summary(run)}" for run in report.passes]]
    for run in report.passes:
        out += ["", *_md_pass(run)]
    if report.concurrency:
        out += ["", "## Concurrency", "", _concurrency_line(report.concurrency) + "."]
    if report.artifacts:
        out += ["", "## Artifacts", "", artifacts.line(report.artifacts) + "."]
    if report.session_mix:
        out += ["", "## A session's tool calls", "", mix.line(report.session_mix) + "."]
    if report.adversarial:
        out += ["", "## Slow input", "", redact(adversarial.line(report.adversarial)) + ".",
                "", *adversarial.table(report.adversarial)]
    if report.host_latency:
        out += ["", "## Host-measured hook latency", "",
                redact(host_latency.line(report.host_latency)) + ".", "",
                "Each hook's duration as Claude Code itself logs it (`--debug-file`), in real "
                "sessions (one prompt: Read, Bash, Write, a subagent, then an answer) with "
                "forge and with a reference plugin of the same events and matchers whose "
                "hooks only start the same interpreter, read their input and exit "
                "(`python -I -c`, exec form); sessions alternate between the two. `x bare` "
                "divides forge's median by the reference's, `+ms` subtracts it; samples are "
                "forge / reference. The host's figures include its own spawning and "
                "waiting, so they are larger than the passes above.", "",
                *host_latency.table(report.host_latency)]
    return "\n".join(out) + "\n"


def print_text(report: Report, stream=None) -> None:
    (stream or sys.stdout).write(text(report) + "\n")
