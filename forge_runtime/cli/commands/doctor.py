"""`forge doctor`: check the install and this project, naming the fix for each problem."""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

from forge_runtime import hints
from forge_runtime.errors import EXIT_OK, EXIT_USAGE
from forge_runtime.result import Result


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "doctor", parents=[common], help="check the install and this project",
        description="Check Python, forge's dependencies, the plugin files or hook wiring, "
                    "the project's .forge/ state, the Claude Code binary and the kernel layer "
                    "(the host's sandbox, and settings that would switch forge off).")
    parser.set_defaults(handler=run)


def run(args) -> Result:
    from forge_runtime.cli.commands.sandbox import codex_posture
    from forge_runtime.doctor import run_checks
    from forge_runtime.project import find_project
    from forge_runtime.sandbox import posture

    project = find_project()
    checks = run_checks(project)
    goal_line = posture.goal_line(project, codex_posture(project))
    lines = [goal_line]
    for check in checks:
        lines.append(f"{'ok' if check.ok else 'FAIL':<4}  {check.name:<12} {check.detail}")
        if check.fix:
            lines.append(f"      {'':<12} fix: {check.fix}")
    failed = [check for check in checks if not check.ok]
    data = {"ok": not failed, "goal_posture": goal_line,
            "checks": [check.as_dict() for check in checks]}
    if not failed:
        return Result(hints.done(f"all {len(checks)} checks passed"), lines, data, EXIT_OK)
    fixes = list(dict.fromkeys(check.fix for check in failed if check.fix))
    hint = hints.error(f"{len(failed)} of {len(checks)} checks failed: "
                       f"{', '.join(check.name for check in failed)}",
                       fixes[0], or_=fixes[1:])
    return Result(hint, lines, data, EXIT_USAGE)
