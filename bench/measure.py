"""Time whole processes and find their peak memory, the way the host starts our hooks.

Timing. Each run is one process spawned with its stdin, stdout and stderr on files (no
pipes, so a large output can never stall it), timed with `perf_counter_ns` from just
before the spawn to the moment `os.wait4` reaps it. That is what the host waits for. CPU
time (user + system) comes from the same `wait4` call. Runs follow a warm-up, so `.pyc`
files exist and the page cache is hot, as on the hundredth tool call of a session.
The suite interleaves scenarios run by run, so a burst of load on a shared machine hits
every scenario and the floor alike instead of skewing one of them.

Peak memory. `ru_maxrss` of a child is NOT its own peak on Linux: when a process execs,
the kernel records the high-water mark of the memory it leaves behind, and with vfork
that is the parent's. A 200 MB parent would make `python -S -c pass` look 200 MB large.
So peak memory is measured in separate runs by the process itself: `peak_probe.py`
stands where the interpreter runs our module, runs it exactly like `python -m`/`-c`
would, and then reads `VmHWM` (the high-water resident set of its own, fresh-at-exec
address space) from `/proc/self/status`. Outside Linux it falls back to `ru_maxrss` of
itself. The launcher's `sh` stage is not counted; it is a separate, smaller image.
"""

from __future__ import annotations

import os
import statistics
import subprocess
import tempfile
import time
from dataclasses import dataclass
from pathlib import Path

PROBE = Path(__file__).with_name("peak_probe.py")
PEAK_FILE_VAR = "FORGE_BENCH_PEAK_FILE"


@dataclass(frozen=True)
class Command:
    """One process to measure: what to spawn, and how to spawn it with the peak probe.

    `probe_argv`/`probe_env` run the same code in a process that reports its peak memory;
    None when no probe run is possible for this command.
    """

    argv: tuple[str, ...]
    env: dict[str, str]
    cwd: Path
    stdin: bytes = b""
    probe_argv: tuple[str, ...] | None = None
    probe_env: dict[str, str] | None = None


@dataclass(frozen=True)
class Run:
    """One finished process."""

    wall_ms: float
    cpu_ms: float
    exit_code: int
    stdout: bytes
    stderr: bytes


@dataclass(frozen=True)
class Spread:
    """Median and spread of one series, in milliseconds."""

    median: float
    p10: float
    p90: float
    low: float
    high: float
    count: int

    @classmethod
    def of(cls, values: list[float]) -> Spread:
        if not values:
            raise ValueError("no values to summarise")
        if len(values) == 1:
            only = values[0]
            return cls(only, only, only, only, only, 1)
        deciles = statistics.quantiles(values, n=10, method="inclusive")
        return cls(statistics.median(values), deciles[0], deciles[-1],
                   min(values), max(values), len(values))

    def as_json(self) -> dict:
        return {"median": round(self.median, 3), "p10": round(self.p10, 3),
                "p90": round(self.p90, 3), "min": round(self.low, 3),
                "max": round(self.high, 3), "runs": self.count}


@dataclass
class Measurement:
    """Wall time, CPU time and peak memory of one command over several runs."""

    wall: Spread
    cpu: Spread
    peak_kib: int | None


def _spawn(argv, env, cwd, stdin: bytes) -> Run:
    with tempfile.TemporaryFile() as fin, tempfile.TemporaryFile() as fout, \
            tempfile.TemporaryFile() as ferr:
        fin.write(stdin)
        fin.seek(0)
        start = time.perf_counter_ns()
        proc = subprocess.Popen(list(argv), stdin=fin, stdout=fout, stderr=ferr,
                                env=env, cwd=cwd)
        _, status, usage = os.wait4(proc.pid, 0)
        wall_ns = time.perf_counter_ns() - start
        proc.returncode = os.waitstatus_to_exitcode(status)
        fout.seek(0)
        ferr.seek(0)
        return Run(wall_ms=wall_ns / 1e6,
                   cpu_ms=(usage.ru_utime + usage.ru_stime) * 1e3,
                   exit_code=proc.returncode, stdout=fout.read(), stderr=ferr.read())


def run_once(command: Command) -> Run:
    """Spawn `command` once and wait for it."""
    return _spawn(command.argv, command.env, command.cwd, command.stdin)


def probe_peak(command: Command) -> tuple[int, Run]:
    """The command's peak resident memory in KiB, measured by the probe, and the probed run
    (so the caller can check it did what an unprobed run does)."""
    if command.probe_argv is None:
        raise RuntimeError("this command has no probe")
    with tempfile.TemporaryDirectory() as scratch:
        report = Path(scratch, "peak")
        env = {**(command.probe_env or command.env), PEAK_FILE_VAR: str(report)}
        run = _spawn(command.probe_argv, env, command.cwd, command.stdin)
        if not report.exists():
            raise RuntimeError(f"peak probe wrote nothing (exit {run.exit_code}): "
                               f"{run.stderr.decode(errors='replace').strip()[-300:]}")
        return int(report.read_text().strip()), run


def peak_kib(command: Command) -> int:
    """The command's peak resident memory in KiB."""
    return probe_peak(command)[0]


def summarise(samples: list[Run], peaks: list[int]) -> Measurement:
    """The measurement of one command from its timed runs and its probed peaks."""
    return Measurement(wall=Spread.of([s.wall_ms for s in samples]),
                       cpu=Spread.of([s.cpu_ms for s in samples]),
                       peak_kib=max(peaks) if peaks else None)
