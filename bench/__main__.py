"""`python -m bench [--quick] [--out DIR]`: measure, print the table, write JSON and Markdown."""

from __future__ import annotations

import argparse
import sys
import tempfile
from pathlib import Path

from bench import concurrency, imports, report, scenarios, suite, targets

PLUGIN_ROOT = Path(__file__).resolve().parent.parent

FULL = {"runs": 30, "warmup": 3, "memory_runs": 3, "rounds": 10, "import_runs": 3}
QUICK = {"runs": 3, "warmup": 1, "memory_runs": 1, "rounds": 2, "import_runs": 1}


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="a few runs per scenario: proves the bench works, numbers are rough")
    parser.add_argument("--runs", type=int, help="measured runs per scenario")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent,
                        help="where results.json and RESULTS.md go (default: bench/)")
    parser.add_argument("--only", action="append", default=[], metavar="KEY",
                        help="run only the scenarios whose key starts with KEY (repeatable)")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter the hooks run with, as FORGE_PYTHON "
                             "(default: this one)")
    parser.add_argument("--no-imports", action="store_true",
                        help="skip the -X importtime breakdown")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    plan = QUICK if args.quick else FULL
    runs = args.runs or plan["runs"]
    settings = suite.Settings(runs=runs, warmup=plan["warmup"],
                              memory_runs=plan["memory_runs"], python=args.python,
                              plugin_root=PLUGIN_ROOT)
    chosen = [s for s in scenarios.all_scenarios()
              if not args.only or s.key == targets.FLOOR_KEY
              or any(s.key.startswith(prefix) for prefix in args.only)]
    with tempfile.TemporaryDirectory(prefix="forge-bench-") as scratch:
        base = Path(scratch)
        outcomes = suite.run_all(chosen, settings, base)
        together = concurrency.measure(settings, base, rounds=plan["rounds"])
        profiles = ({} if args.no_imports
                    else profile_imports(outcomes, settings, base, plan["import_runs"]))
    result = report.Report(outcomes, targets.evaluate(outcomes), python=settings.python,
                           mode="quick" if args.quick else "full", runs=runs,
                           warmup=plan["warmup"], concurrency=together, imports=profiles)
    report.print_text(result)
    args.out.mkdir(parents=True, exist_ok=True)
    report.write_json(result, args.out / "results.json")
    (args.out / "RESULTS.md").write_text(report.markdown(result), encoding="utf-8")
    sys.stderr.write(f"bench: wrote {args.out / 'results.json'} and {args.out / 'RESULTS.md'}\n")
    return 0


def profile_imports(outcomes, settings, base: Path, runs: int) -> dict[str, dict]:
    """The import breakdown of every measured hook process."""
    from bench.workspace import Workspace

    space = Workspace.create(settings.plugin_root, settings.python, base, "imports")
    startup = imports.baseline(space.floor())
    return {o.scenario.key: imports.breakdown(o.plan.command, startup,
                                              before_each=o.plan.before_each, runs=runs)
            for o in outcomes if o.status == suite.MEASURED and o.scenario.is_hook}


if __name__ == "__main__":
    raise SystemExit(main())
