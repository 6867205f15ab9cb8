"""Record one hook invocation (stdin, stdout, exit code, duration) without changing it.

The runner points `FORGE_PYTHON` at a two-line shell script that execs
`python -I -m forge_runtime.hostkit.hookrecord "$@"`; forge's launcher then runs the hook
(`-I -S <plugin>/forge_runtime/entry.py hook`, the event in FORGE_HOOK_EVENT) through this
module, isolated like the real thing. It runs the hook module in this same process (no
extra process, same Python, same environment), passing stdin and stdout through untouched,
and appends one JSON line to `$FORGE_HOSTKIT_HOOK_LOG`. Standard library only: it sits on
the hook's hot path. It sees what goes through `sys.stdin`/`sys.stdout`/`sys.stderr` (as
forge's dispatcher uses them); a hook reading file descriptor 0 directly would find it
drained. `duration_s` is the hook's own run time, interpreter start-up excluded.
"""

from __future__ import annotations

import io
import json
import os
import runpy
import sys
import time

from forge_runtime import launch
from forge_runtime.hostkit import LOG_ENV
from forge_runtime.launch import LAUNCHED_OK


class _Tee(io.TextIOBase):
    """A text stream that writes through to `target` and keeps a copy."""

    def __init__(self, target) -> None:
        self.target = target
        self.copy = io.StringIO()

    def write(self, text: str) -> int:
        self.copy.write(text)
        return self.target.write(text)

    def flush(self) -> None:
        self.target.flush()


def _run(argv: list[str]) -> int:
    """Run `-m module args...` or `script.py args...` as `python` would, returning its exit code.

    Interpreter flags before them (`-I`, `-P`, as a hook command or forge's launcher passes
    them) are the recorder's own already: the shim starts the interpreter with `-I`.
    """
    while argv[:1] and argv[0].startswith("-") and argv[0] != "-m":
        argv = argv[1:]
    if argv[:1] == ["-m"] and len(argv) >= 2:
        sys.argv = [argv[1], *argv[2:]]
        runner = lambda: runpy.run_module(argv[1], run_name="__main__", alter_sys=True)  # noqa: E731
    else:
        sys.argv = list(argv)
        runner = lambda: runpy.run_path(argv[0], run_name="__main__")  # noqa: E731
    try:
        runner()
    except SystemExit as exc:
        code = exc.code
        if code is None:
            return 0
        if isinstance(code, int):
            return code
        sys.stderr.write(f"{code}\n")
        return 1
    return 0


def main(argv: list[str]) -> int:
    launch.ENDS_PROCESS = False  # the hook runs in this process, which records it afterwards
    raw = sys.stdin.buffer.read()
    sys.stdin = io.TextIOWrapper(io.BytesIO(raw), encoding="utf-8")
    out, err = _Tee(sys.stdout), _Tee(sys.stderr)
    sys.stdout, sys.stderr = out, err
    started, started_at = time.monotonic(), time.time()
    try:
        exit_code = _run(argv)
    finally:
        sys.stdout, sys.stderr = out.target, err.target
        sys.stdout.flush()
    # What the host gets: forge's launcher turns the status proving forge ran into 0.
    host_status = 0 if exit_code == LAUNCHED_OK else exit_code
    record = {"argv": argv, "stdin": raw.decode("utf-8", "replace"),
              "stdout": out.copy.getvalue(), "stderr": err.copy.getvalue(),
              "exit_code": host_status, "duration_s": round(time.monotonic() - started, 4),
              "started": started_at}
    log = os.environ.get(LOG_ENV)
    if log:
        with open(log, "a", encoding="utf-8") as handle:
            handle.write(json.dumps(record) + "\n")
    return exit_code


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
