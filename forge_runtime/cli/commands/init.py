"""`forge init [--force] [--hooks]`: install forge's files into this project."""

from __future__ import annotations

from forge_runtime import hints
from forge_runtime.result import Result


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "init", parents=[common],
        help="install forge's workflows, skills and state template into .forge/",
        description="Install forge's workflows, skills, hook helpers and state template into "
                    ".forge/. Safe to run again: files you edited are kept unless --force.")
    parser.add_argument("--force", action="store_true",
                        help="also replace shipped files you edited (never .forge/local/)")
    parser.add_argument("--hooks", action="store_true",
                        help="wire forge's hooks into .claude/settings.json (for a pip install)")
    parser.set_defaults(handler=run)


def run(args) -> Result:
    from forge_runtime import hook_settings, initializer
    from forge_runtime.project import find_project

    project = find_project()
    outcomes = initializer.Installer(project, force=args.force).run()
    lines = [f"{outcome.action:<9} {outcome.path}" for outcome in outcomes
             if outcome.action != initializer.UNCHANGED]
    kept = [o.path for o in outcomes if o.action == initializer.KEPT]
    data: dict = {"project": str(project.root),
                  "files": [{"path": o.path, "action": o.action} for o in outcomes]}
    if args.hooks:
        path, changed = hook_settings.wire_hooks(project.root)
        shown = path.relative_to(project.root).as_posix()
        lines.append(f"{'wired' if changed else 'unchanged':<9} {shown} (forge's five hooks)")
        data["settings"] = {"path": str(path), "changed": changed}
    if kept:
        lines.append(f"Kept {len(kept)} file(s) you edited; forge init --force replaces them.")
    if not lines:
        lines.append(f"forge is already installed in {project.root}; nothing changed.")
    or_ = ["forge init --force"] if kept else None
    return Result(hints.next_("forge doctor", "check that forge is ready in this project",
                              or_=or_), lines=lines, data=data)
