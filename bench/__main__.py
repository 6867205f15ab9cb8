"""`python -m bench [--quick] [--host] [--out DIR]`: measure, print the table, write JSON and
Markdown."""

from __future__ import annotations

import argparse
import dataclasses
import sys
import tempfile
from pathlib import Path

from bench import (
    adversarial,
    artifacts,
    concurrency,
    host_latency,
    imports,
    lean,
    mix,
    registry,
    report,
    scenarios,
    suite,
    targets,
)
from bench.workspace import Workspace, ram_dir

PLUGIN_ROOT = Path(__file__).resolve().parent.parent
FULL = {"runs": 30, "warmup": 3, "memory_runs": 3, "rounds": 10, "import_runs": 3,
        "split_runs": 15, "adversarial_runs": 5, "host_sessions": 10, "host_warmup": 1}
# The quick run (CI's) proves that every part of the bench works, not its numbers: each
# measured scenario still gets its validated preparation run (which warms it up as a
# warm-up round would), two measured runs for its spread, one probed for memory, one
# import profile and one concurrency round. It leaves out the 2,000-turn and
# 2,000-artifact rows, which run the code of their 200-turn and 100-artifact rows on a
# bigger input (building a 2,000-turn ledger alone takes half a minute), and its lean
# pass keeps the floor rows and the hooks of a session without a goal: the other hook
# rows run the same code as in the main pass, under a second interpreter.
QUICK = {"runs": 2, "warmup": 0, "memory_runs": 1, "rounds": 1, "import_runs": 1,
         "split_runs": 1, "adversarial_runs": 1, "host_sessions": 1, "host_warmup": 0}
QUICK_LEFT_OUT = ("stop-charge-2000", "stop-catch-up-1-2000", "stop-catch-up-20-2000",
                  "goal-verify-2000", "list-2000", "tree-2000", "goal-publish-2000",
                  "stop-activate-remote-2000")
QUICK_LEAN = ("pre-tool-use-unguarded", "user-prompt-ordinary", "stop-no-goal",
              "session-start-no-goal", "post-tool-use-agent", "session-end-no-goal")
THIS_INTERPRETER = "This interpreter"
LEAN_INTERPRETER = "Lean interpreter (the plugin's forge-env shape)"


def parse_args(argv: list[str]) -> argparse.Namespace:
    parser = argparse.ArgumentParser(prog="python -m bench", description=__doc__)
    parser.add_argument("--quick", action="store_true",
                        help="a few runs per scenario: proves the bench works, numbers are rough")
    parser.add_argument("--runs", type=int, help="measured runs per scenario")
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent,
                        help="where results.json and RESULTS.md go (default: bench/)")
    parser.add_argument("--only", action="append", default=[], metavar="KEY",
                        help="run only the scenarios whose key starts with KEY (repeatable; "
                             "`artifacts` adds the MCP round trip and concurrent forge new; "
                             "`mix`: forge's processes and ms per 100 tool calls of a session; "
                             "`adversarial`: the slow-input corpus; `host-latency`: as --host; "
                             "`bootstrap` alone: the time to build the hooks' forge-env with pip "
                             "and with uv, printed only)")
    parser.add_argument("--python", default=sys.executable,
                        help="the interpreter the hooks run with, as FORGE_PYTHON "
                             "(default: this one)")
    parser.add_argument("--no-lean", action="store_true",
                        help="skip the second pass of the hooks under a lean interpreter")
    parser.add_argument("--host", action="store_true",
                        help="also run real Claude Code sessions with forge and with a "
                             "bare-Python hook plugin, and compare the hook durations the "
                             "host logs (part of a full run)")
    parser.add_argument("--host-sessions", type=int, metavar="N",
                        help="sessions per plugin for --host (default: 10, --quick: 1)")
    parser.add_argument("--no-imports", action="store_true",
                        help="skip the -X importtime breakdown")
    return parser.parse_args(argv)


def profile_imports(outcomes, settings: suite.Settings, base: Path, plan: dict
                    ) -> dict[str, dict]:
    """The import breakdown of every measured hook process (a failed one is left out,
    with a line on stderr: it explains numbers, it is not one)."""
    floor = Workspace.create(settings.plugin_root, settings.python, base, "imports").floor()
    startup = imports.baseline(floor)
    profiles = {}
    for outcome in outcomes:
        if outcome.status != suite.MEASURED or not outcome.scenario.is_hook:
            continue
        try:
            profiles[outcome.scenario.key] = imports.breakdown(
                outcome.plan.command, startup, floor, before_each=outcome.plan.before_each,
                runs=plan["import_runs"], split_runs=plan["split_runs"])
        except RuntimeError as exc:
            sys.stderr.write(f"bench: no import profile for {outcome.scenario.title}: {exc}\n")
    return profiles


def module_costs(profiles: dict[str, dict], settings: suite.Settings, base: Path,
                 runs: int) -> dict[str, float]:
    """What the heaviest modules the hooks pull in cost, each imported alone."""
    modules = list(dict.fromkeys(heavy["module"] for data in profiles.values()
                                 for heavy in data["heaviest"]))
    floor = Workspace.create(settings.plugin_root, settings.python, base, "modules").floor()
    return imports.alone_costs(modules, floor, runs=runs)


def measure_pass(label: str, chosen, settings: suite.Settings, base: Path, plan: dict,
                 with_imports: bool) -> report.Pass:
    sys.stderr.write(f"bench: {label} ({settings.python})\n")
    base.mkdir()
    outcomes = suite.run_all(chosen, settings, base)
    profiles = profile_imports(outcomes, settings, base, plan) if with_imports else {}
    costs = module_costs(profiles, settings, base, plan["split_runs"]) if profiles else {}
    checks = targets.evaluate(outcomes) + targets.import_checks(outcomes, profiles)
    return report.Pass(label, settings.python, outcomes, checks, profiles, costs)


def _left_out_of_the_quick_run(space: Workspace) -> scenarios.Plan:
    raise scenarios.NotAvailable("left out of the quick run: the same code as a smaller "
                                 "row, on a bigger input (run `python -m bench` for it)")


def quick(scenario: scenarios.Scenario) -> scenarios.Scenario:
    """The scenario as the quick run measures it: itself, or reported as left out."""
    if scenario.key not in QUICK_LEFT_OUT:
        return scenario
    return dataclasses.replace(scenario, prepare=_left_out_of_the_quick_run)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(sys.argv[1:] if argv is None else argv)
    if args.only == ["bootstrap"]:    # builds environments, not hooks: a table of its own
        from bench import bootstrap

        return bootstrap.main(args.runs or (1 if args.quick else 3))
    plan = QUICK if args.quick else FULL
    runs = args.runs or plan["runs"]
    chosen = [s for s in registry.all_scenarios()
              if not args.only or s.group == "floor"
              or any(s.key.startswith(prefix) for prefix in args.only)]
    trimmed = args.quick and not args.only  # rows asked for by name are always measured
    if trimmed:
        chosen = [quick(s) for s in chosen]
    with tempfile.TemporaryDirectory(prefix="forge-bench-") as scratch, \
            tempfile.TemporaryDirectory(prefix="forge-bench-fixtures-", dir=ram_dir()) as fixed:
        base = Path(scratch)
        settings = suite.Settings(runs=runs, warmup=plan["warmup"],
                                  memory_runs=plan["memory_runs"], python=args.python,
                                  plugin_root=PLUGIN_ROOT, fixtures=Path(fixed))
        passes = [measure_pass(THIS_INTERPRETER, chosen, settings, base / "main", plan,
                               not args.no_imports)]
        # The host's sessions (about 7 s a pair): in a full run, or when asked for.
        wants_host = args.host or "host-latency" in args.only or not (args.only or args.quick)
        lean_python = lean.create(base, args.python) if wants_host or not args.no_lean \
            else None
        if not args.no_lean:
            lean_settings = dataclasses.replace(settings, python=lean_python)
            hooks_only = [s for s in chosen if s.group == "floor" or s.is_hook and (
                not trimmed or s.key in QUICK_LEAN)]
            passes.append(measure_pass(LEAN_INTERPRETER, hooks_only, lean_settings,
                                       base / "lean", plan, not args.no_imports))
        together = concurrency.measure(settings, base, rounds=plan["rounds"])
        # The MCP round trip and concurrent `forge new` (about 20 s): in a full run, or when
        # asked for with --only artifacts; the quick run CI uses leaves them out.
        wanted = "artifacts" in args.only or not (args.only or args.quick)
        at_scale = artifacts.measure(settings, base, rounds=plan["rounds"]) if wanted else None
        # What a session pays per 100 tool calls, in the plugin's own lean interpreter when
        # there is one: in a full run, or when asked for with --only mix.
        mix_settings = dataclasses.replace(settings, python=lean_python) if lean_python \
            else settings
        session_mix = mix.measure(mix_settings, base, rounds=plan["rounds"]) \
            if "mix" in args.only or not (args.only or args.quick) else None
        slow = adversarial.measure(settings, base, plan["adversarial_runs"]) \
            if not args.only or any(p.startswith("adv") for p in args.only) else None
        on_host = None
        if wants_host:
            sys.stderr.write("bench: host-measured latency (real Claude Code sessions)\n")
            on_host = host_latency.measure(lean_python, PLUGIN_ROOT, base / "host",
                                           args.host_sessions or plan["host_sessions"],
                                           plan["host_warmup"])
            on_host["interpreter"] = report.describe(lean_python)
        result = report.Report(passes, mode="quick" if args.quick else "full", runs=runs,
                               warmup=plan["warmup"], concurrency=together,
                               artifacts=at_scale, adversarial=slow, host_latency=on_host,
                               session_mix=session_mix)
        report.print_text(result)
        args.out.mkdir(parents=True, exist_ok=True)
        report.write_json(result, args.out / "results.json")
        (args.out / "RESULTS.md").write_text(report.markdown(result), encoding="utf-8")
    sys.stderr.write(f"bench: wrote {args.out / 'results.json'} and {args.out / 'RESULTS.md'}\n")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
