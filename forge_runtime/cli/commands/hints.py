"""`forge hints audit`: check every hint command forge can enumerate ahead of time."""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

from forge_runtime import hints
from forge_runtime.errors import EXIT_USAGE
from forge_runtime.result import Result


def register(subparsers, common) -> None:
    parser = subparsers.add_parser("hints", parents=[common],
                                   help="check forge's next-action hints")
    parser.set_defaults(handler=overview)
    actions = parser.add_subparsers(dest="hints_command", metavar="ACTION")
    audit = actions.add_parser(
        "audit", parents=[common],
        help="check hint commands in workflows, skills, agents, source and live answers",
        description="Check that every hint command in the shipped and installed workflows "
                    "and skills, the plugin's agents and forge's source has no placeholder "
                    "and, when it is a forge command, parses with forge's own parser; then "
                    "run every artifact operation as a CLI command (text and JSON) and as an "
                    "MCP tool over a seeded workspace, check each answer's hint, and report "
                    "the coverage (below 100% fails).")
    audit.set_defaults(handler=run_audit)


def overview(args) -> Result:
    return Result(hints.next_("forge hints audit", "check every hint forge can enumerate"),
                  lines=["forge hints: checks on forge's next-action hints."])


def run_audit(args) -> Result:
    from forge_runtime import resources
    from forge_runtime.hint_audit import audit
    from forge_runtime.project import find_project
    from forge_runtime.surface_audit import audit_live

    bundle = resources.bundle_root()
    project = find_project()
    roots = [(bundle / name, name) for name in ("workflows", "skills", "agents")]
    roots += [(project.forge_dir / name, f".forge/{name}") for name in ("workflows", "skills")
              if (project.forge_dir / name).is_dir()]
    result = audit(roots, resources.PACKAGE_DIR)
    live = audit_live()
    lines = [f"{finding.where}: `{finding.command}` {finding.problem}"
             for finding in result.findings]
    lines += [f"{where}: {problem}" for where, problem in live.findings]
    lines.append(f"Checked {result.checked} hint commands in {result.files} files; "
                 f"{result.dynamic} built at run time are checked when commands run.")
    lines.append(f"Ran {live.runs} answers of the artifact operations (CLI text, CLI JSON, "
                 f"MCP): coverage {live.coverage:.0%}"
                 + (f", no example for {', '.join(live.uncovered)}" if live.uncovered else ""))
    data = {"checked": result.checked, "files": result.files, "dynamic": result.dynamic,
            "findings": [vars(finding) for finding in result.findings],
            "live": {"runs": live.runs, "coverage": live.coverage, "uncovered": live.uncovered,
                     "findings": [{"where": where, "problem": problem}
                                  for where, problem in live.findings]}}
    if live.findings or live.coverage < 1:
        return Result(hints.error(
            f"{len(live.findings)} live answer(s) break the hint contract, coverage "
            f"{live.coverage:.0%}", "forge hints audit",
            "fix the operations listed above (examples: forge_runtime/surface_audit.py), "
            "then run the audit again"), lines, data, EXIT_USAGE)
    if not result.findings:
        return Result(hints.done("every enumerable hint command is complete and parses"),
                      lines, data)
    # An installed copy broken where the shipped file is fine is stale: init restores it.
    shipped = {(f.where.split(":")[0], f.command) for f in result.findings}
    stale = any(f.where.startswith(".forge/")
                and (f.where.split(":")[0].removeprefix(".forge/"), f.command) not in shipped
                for f in result.findings)
    fix = hints.error(
        f"{len(result.findings)} hint command(s) are broken",
        "forge init --force" if stale else "forge hints audit",
        "restores the shipped copies of the installed files" if stale
        else "edit the places listed above, then run the audit again")
    return Result(fix, lines, data, EXIT_USAGE)
