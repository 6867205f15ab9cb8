"""`forge gate run`: run gates one by one, stream each one's output to its log, and write
its receipt.

The boundary is hashed just before the command starts, so the receipt speaks for the files
the gate actually judged: a gate that rewrites files it covers (a formatter) or an edit made
while it ran leaves a receipt that is stale at once, which is the truth.
"""

from __future__ import annotations

import hashlib
import os
import signal
import subprocess
import sys
import time
from collections.abc import Callable

from forge_runtime.errors import EXIT_USAGE, ForgeError
from forge_runtime.gates import config, receipts
from forge_runtime.gates.status import Tree

TICK_SECONDS = 0.5
KILL_GRACE_SECONDS = 5.0
TIMEOUT_EXIT = 124  # what `timeout(1)` reports, so a receipt reads the same either way

START, TICK, END = "start", "tick", "end"
Progress = Callable[[str, str], None]  # (line, START|TICK|END): a tick redraws the live line


def select(gates: list[config.Gate], names: list[str]) -> list[config.Gate]:
    """The gates `names` asks for (all of them when empty); an unknown name is an error."""
    if not names:
        return gates
    known = {gate.name: gate for gate in gates}
    unknown = [name for name in names if name not in known]
    if unknown:
        raise ForgeError(f"no gate named {', '.join(unknown)} in .forge/gates.yaml "
                         f"(gates: {', '.join(known)})", "forge gate status",
                         exit_code=EXIT_USAGE)
    return [known[name] for name in dict.fromkeys(names)]


def run(project, names: list[str], progress: Progress) -> list[dict]:
    """Run the chosen gates in file order and return their new receipts."""
    chosen = select(config.load(project), names)
    tree = Tree(project, chosen)
    done = []
    for index, gate in enumerate(chosen, start=1):
        if index > 1:
            tree.refresh()
        boundary_hash, files = tree.boundary_of(gate)
        label = f"[{index}/{len(chosen)}] {gate.name}"
        receipt = _run_one(project, gate, label, progress)
        receipt.update(boundary_hash=boundary_hash, files=files)
        receipts.write(project, receipt)
        done.append(receipt)
    tree.save()
    return done


def _now() -> str:
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())


def _run_one(project, gate: config.Gate, label: str, progress: Progress) -> dict:
    log = receipts.log_path(project, gate.name)
    started_at = _now()
    progress(f"{label}: running {gate.command}", START)
    exit_code, timed_out, duration = execute(
        project, gate, log, gate.command, gate.timeout,
        lambda elapsed: progress(f"{label}: running {gate.command} ({elapsed:.0f} s)", TICK))
    verdict = "timed out" if timed_out else \
        "passed" if exit_code == 0 else f"failed (exit {exit_code})"
    progress(f"{label}: {verdict} in {duration:.1f} s", END)
    return {"gate": gate.name, "command": gate.command, "definition": gate.definition_digest,
            "exit_code": exit_code, "timed_out": timed_out, "duration_s": duration,
            "started_at": started_at, "finished_at": _now(),
            "output_sha256": _file_digest(log), "log": receipts.shown(project, log)}


def execute(project, gate: config.Gate, log, command: str | list[str], timeout: float | None,
            tick: Callable[[float], None], env: dict[str, str] | None = None,
            pass_fds: tuple[int, ...] = ()) -> tuple[int, bool, float]:
    """Run `command` for `gate` in the project root with its output in `log`: (exit code,
    whether it was killed for running past `timeout`, seconds it took). A string runs in
    the platform's shell, a list as it is (confined.py's bubblewrap argv); `env` replaces
    forge's own environment (confined.py's clean one for forge's own run), `pass_fds` are
    inherited."""
    os.makedirs(os.path.dirname(log), exist_ok=True)
    started = time.monotonic()
    # never through a link: a person's run (or forge's own) must not write where one points
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0)
    with os.fdopen(os.open(log, flags, 0o644), "wb") as output:
        child = subprocess.Popen(command, shell=isinstance(command, str), cwd=project.root,
                                 stdout=output, stderr=subprocess.STDOUT,
                                 stdin=subprocess.DEVNULL, start_new_session=True,
                                 env={**os.environ, "FORGE_GATE": gate.name} if env is None
                                 else env, pass_fds=pass_fds)
        try:
            exit_code, timed_out = _wait(child, timeout, started, tick)
        except BaseException:  # Ctrl-C: its own session would not hear it, so end it here
            _stop(child)
            raise
    return exit_code, timed_out, round(time.monotonic() - started, 3)


def _wait(child: subprocess.Popen, timeout: float | None, started: float,
          tick: Callable[[float], None]) -> tuple[int, bool]:
    """The child's exit code, and whether it was killed for running past `timeout`."""
    while True:
        try:
            return child.wait(TICK_SECONDS), False
        except subprocess.TimeoutExpired:
            elapsed = time.monotonic() - started
            if timeout is not None and elapsed >= timeout:
                _stop(child)
                return TIMEOUT_EXIT, True
            tick(elapsed)


def _stop(child: subprocess.Popen) -> None:
    """End the gate's whole process group: a test runner's workers must not outlive it."""
    if not hasattr(os, "killpg"):  # Windows: no process groups to signal
        child.kill()
        child.wait()
        return
    for sig, grace in ((signal.SIGTERM, KILL_GRACE_SECONDS), (signal.SIGKILL, None)):
        try:
            os.killpg(child.pid, sig)
        except ProcessLookupError:
            return
        try:
            child.wait(grace)
            return
        except subprocess.TimeoutExpired:
            continue


def _file_digest(path) -> str:
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for block in iter(lambda: handle.read(1 << 20), b""):
            digest.update(block)
    return digest.hexdigest()


def terminal_progress(stream=None) -> Progress:
    """Progress for a person: one redrawn line on a terminal, plain lines otherwise."""
    stream = stream or sys.stdout
    live = hasattr(stream, "isatty") and stream.isatty()

    def show(line: str, kind: str) -> None:
        if live:
            stream.write("\r\033[K" + line + ("\n" if kind == END else ""))
        elif kind != TICK:
            stream.write(line + "\n")
        stream.flush()

    return show
