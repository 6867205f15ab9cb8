"""`forge gate init|run|status|evidence`: the project's final gates and their receipts."""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

import sys

from forge_runtime import hints
from forge_runtime.errors import EXIT_USAGE, ForgeError
from forge_runtime.result import Result

EXAMPLE = """\
# forge's final gates: each gate's command, and the files whose change makes its receipt
# stale (globs relative to the project root; `**` spans directories). See `forge gate --help`.
gates:
  tests:
    command: python3 -m pytest -q
    boundary: ["**/*.py", pyproject.toml]
    timeout: 900
"""


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "gate", parents=[common], help="final gates and their receipts",
        description="Run the final gates of .forge/gates.yaml and see which receipts are stale.")
    actions = parser.add_subparsers(dest="gate_action", metavar="ACTION", required=True,
                                    parser_class=type(parser))
    init = actions.add_parser("init", parents=[common], help="write an example gates file",
                              description="Write an example .forge/gates.yaml to edit.")
    init.set_defaults(handler=init_gates)
    run = actions.add_parser("run", parents=[common], help="run gates and write receipts",
                             description="Run the named gates (default: all) and write a "
                                         "receipt for each.")
    run.add_argument("names", nargs="*", metavar="NAME", help="gates to run (default: all)")
    run.set_defaults(handler=run_gates)
    status = actions.add_parser("status", parents=[common], help="fresh, stale, failing",
                                description="Each gate: fresh, stale, failing or never run.")
    status.set_defaults(handler=show_status)
    evidence = actions.add_parser(
        "evidence", parents=[common], help="a fresh receipt as evidence for an artifact",
        description="Turn a gate's fresh, passing receipt into evidence linked to an artifact.")
    evidence.add_argument("name", metavar="NAME", help="the gate")
    evidence.add_argument("--for", dest="artifact", required=True, metavar="ID",
                          help="the artifact it supports, e.g. PRD-001")
    evidence.set_defaults(handler=make_evidence)


def _project():
    from forge_runtime.project import find_project

    return find_project()


def init_gates(args) -> Result:
    from forge_runtime.gates import config
    from forge_runtime.initializer import write_atomically

    project = _project()
    path = config.gates_path(project)
    if path.exists():
        return Result(hints.next_("forge gate status", "the gates file exists; it is kept"),
                      [f"{path.relative_to(project.root).as_posix()} exists"],
                      {"path": str(path), "written": False})
    write_atomically(path, EXAMPLE.encode("utf-8"))
    return Result(hints.next_("forge gate status", "edit the example's command and boundary "
                                                   "first"),
                  [f"wrote {path.relative_to(project.root).as_posix()}"],
                  {"path": str(path), "written": True})


def _state_lines(states) -> list[str]:
    width = max((len(s.gate.name) for s in states), default=0)
    return [f"{s.gate.name:<{width}}  {s.state:<9}  {s.why}" for s in states]


def show_status(args) -> Result:
    from forge_runtime.gates import status as core

    project = _project()
    states = core.assess(project)
    return Result(core.way_on(states, project), _state_lines(states),
                  {"gates": [s.as_json() for s in states], "to_run": core.to_run(states)})


def run_gates(args) -> Result:
    from forge_runtime.gates import runner
    from forge_runtime.gates import status as core

    project = _project()
    progress = runner.terminal_progress(sys.stderr if args.json else sys.stdout)
    receipts = runner.run(project, args.names, progress)
    failed = [r for r in receipts if r["exit_code"] != 0]
    lines = [f"{r['gate']}: exit {r['exit_code']} in {r['duration_s']:.1f} s, "
             f"{r['files']} file(s), log {r['log']}" for r in receipts]
    data = {"receipts": receipts}
    if failed:
        first = failed[0]
        lines.extend(_tail(project, first["log"]))
        error = ForgeError(f"gate {', '.join(r['gate'] for r in failed)} failed",
                           core.run_command([r["gate"] for r in failed]), exit_code=EXIT_USAGE,
                           code="FORGE_GATE_FAILED",
                           rationale=f"after fixing what {first['log']} shows")
        return Result(error.hint(), lines, {**data, "code": error.code}, error.exit_code)
    return Result(hints.next_("forge gate status", "every gate run passed"), lines, data)


def _tail(project, log: str, count: int = 20) -> list[str]:
    """The last lines of a failed gate's output, so the cause is on screen."""
    try:
        text = (project.root / log).read_text(encoding="utf-8", errors="replace")
    except OSError:
        return []
    tail = text.splitlines()[-count:]
    if not tail:
        return [f"--- {log} is empty"]
    return [f"--- last lines of {log}", *("  " + hints.sanitize(line) for line in tail)]


def make_evidence(args) -> Result:
    from forge_runtime.gates import evidence

    project = _project()
    evidence_id = evidence.record(project, args.name, args.artifact)
    return Result(hints.next_(f"forge score {args.artifact}",
                              f"gate {args.name} is now evidence {evidence_id} for "
                              f"{args.artifact}"),
                  [f"evidence {evidence_id} supports {args.artifact}"],
                  {"evidence": evidence_id, "for": args.artifact})
