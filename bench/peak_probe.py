"""Run `-m module args`, `-c code` or a script like the interpreter would, then report peak
memory.

Usage: python [-I] [-S] peak_probe.py -m MODULE [ARGS...] | -c CODE [ARGS...] | SCRIPT [ARGS...]
with FORGE_BENCH_PEAK_FILE naming the file that receives the peak resident set in KiB. (The
bench's stand-in for the hooks' Python passes the launcher's `-I -S` to the interpreter.)

Runs as a plain script (standard library only, works under -S) in the process being
measured, because only the process itself can read its own high-water mark: the kernel's
`ru_maxrss` for a child also counts the parent it was spawned from (see measure.py). A forge
hook ends its process with `os._exit` (forge_runtime/launch.py), past any `finally` here, so
the report is also written on the way out through it.
"""

import os
import sys


def _peak_kib() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as status:
            for line in status:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource

    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak // 1024 if sys.platform == "darwin" else peak


def _run(flag: str, target: str, args: list[str]) -> None:
    if flag == "-m":
        import runpy

        sys.path[0] = os.getcwd()
        sys.argv = [target, *args]
        runpy.run_module(target, run_name="__main__", alter_sys=True)
    elif flag == "-c":
        sys.path[0] = ""
        sys.argv = ["-c", *args]
        exec(compile(target, "<string>", "exec"), {"__name__": "__main__"})
    else:
        import runpy

        sys.argv = [flag, target, *args]
        runpy.run_path(flag, run_name="__main__")


def _report() -> None:
    with open(os.environ["FORGE_BENCH_PEAK_FILE"], "w", encoding="ascii") as out:
        out.write(f"{_peak_kib()}\n")


def main() -> None:
    flag, target, *args = sys.argv[1:]
    end_process = os._exit

    def report_and_end(status: int) -> None:
        _report()
        end_process(status)

    os._exit = report_and_end
    code: object = 0
    try:
        _run(flag, target, args)
    except SystemExit as exc:
        code = exc.code
    finally:
        _report()
    raise SystemExit(code)


if __name__ == "__main__":
    main()
