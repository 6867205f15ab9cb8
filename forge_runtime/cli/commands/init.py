"""`forge init [--host claude|codex|all] [--force] [--hooks] [--statusline |
--remove-statusline [--scope S]]`: install forge into this project, and optionally its hooks
and its status line."""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

import sys

from forge_runtime import hints
from forge_runtime.errors import ForgeError
from forge_runtime.result import Result

HOSTS = ("claude", "codex", "all")


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
    parser.add_argument("--host", choices=HOSTS, default="claude",
                        help="the host(s) to install for: claude (default), codex (also "
                             "forge's skills in .agents/skills/ and its hooks in "
                             ".codex/hooks.json), or all")
    shown = parser.add_mutually_exclusive_group()
    shown.add_argument("--statusline", action="store_true",
                       help="show the goal's budget in Claude Code's status line, after "
                            "your own status line if you have one")
    shown.add_argument("--remove-statusline", action="store_true",
                       help="take forge's part out of the status line again")
    parser.add_argument("--scope", choices=("local", "project", "user"), default="local",
                        help="the settings file for the status line: .claude/settings.local"
                             ".json (default), .claude/settings.json or ~/.claude/settings.json")
    parser.set_defaults(handler=run)


def _status_line(args, root) -> tuple[str, dict]:
    """Install or remove forge's status line; the line that says so, and its JSON."""
    from forge_runtime import statusline_settings

    if args.statusline:
        path, changed, own = statusline_settings.install(root, args.scope)
        what = "forge's status line" + (f", after your own: {hints.sanitize(own)}" if own
                                        else "")
        action = "installed" if changed else "unchanged"
    else:
        path, changed = statusline_settings.remove(root, args.scope)
        what, action = "forge's status line", "removed" if changed else "unchanged"
        if not changed:
            what += " was not there"
    shown = path.relative_to(root).as_posix() if path.is_relative_to(root) else str(path)
    return f"{action:<9} {shown} ({what})", {"path": str(path), "changed": changed}


def _kernel_layer(project) -> tuple[str, dict]:
    """Turn on the kernel layer a person's /goal needs (project scope) when the host can run
    it and neither it nor the project's opt-out is in force; the line that says what
    happened and how to turn it off, and its JSON. Never fails `init`."""
    from forge_runtime.guard import rules
    from forge_runtime.sandbox import layer, posture, scopes

    off = (f"turn it off: forge sandbox disable, or let goals run without it: "
           f"{posture.OPT_OUT_LINE} in .forge/guard.yaml")
    try:
        if posture.ledger_protected(project):
            return f"{'unchanged':<9} the kernel layer is in force ({off})", {"outcome": "on"}
        if rules.for_project(project).goal.get("require_sandbox") is False:
            return (f"{'unchanged':<9} no kernel layer: .forge/guard.yaml opts goals out "
                    f"({posture.OPT_OUT_LINE})"), {"outcome": "opted-out"}
        path, _ = layer.enable(project, scopes.PROJECT)
    except ForgeError as exc:
        ways = (f"`{exc.fix}`, then `{posture.ENABLE}`, or opt out" if exc.fix != posture.OPT_OUT
                else "opt out")
        return (f"{'skipped':<9} the kernel layer: {exc.message}; a /goal is refused until "
                f"then: {ways}: `{posture.OPT_OUT}`"), \
            {"outcome": "skipped", "problem": exc.message, "fix": exc.fix}
    shown = path.relative_to(project.root).as_posix()
    return (f"{'enabled':<9} {shown} (the host's kernel sandbox and forge's deny rules, "
            f"which a /goal needs; {off})"), {"outcome": "enabled", "path": str(path)}


def run(args) -> Result:
    from forge_runtime import hook_settings, initializer
    from forge_runtime.project import find_project

    project = find_project()
    codex = args.host in ("codex", "all")
    if args.hooks or codex or args.statusline:  # refused before anything is written
        again = "forge init" + (" --hooks" if args.hooks else "") + \
            ("" if args.host == "claude" else f" --host {args.host}") + \
            (f" --statusline --scope {args.scope}" if args.statusline else "")
        refused = hook_settings.interpreter_refused(sys.executable, project.root, again)
        if refused is not None:
            raise refused
    outcomes = initializer.Installer(project, force=args.force, agent_skills=codex).run()
    lines = [f"{outcome.action:<9} {outcome.path}" for outcome in outcomes
             if outcome.action != initializer.UNCHANGED]
    kept = [o.path for o in outcomes if o.action == initializer.KEPT]
    data: dict = {"project": str(project.root),
                  "files": [{"path": o.path, "action": o.action} for o in outcomes]}
    if args.hooks:
        path, changed = hook_settings.wire_hooks(project.root)
        shown = path.relative_to(project.root).as_posix()
        lines.append(f"{'wired' if changed else 'unchanged':<9} {shown} (forge's hooks)")
        data["settings"] = {"path": str(path), "changed": changed}
    if codex:
        path, changed = hook_settings.wire_codex_hooks(project.root)
        lines.append(f"{'wired' if changed else 'unchanged':<9} .codex/hooks.json "
                     f"(forge's {len(hook_settings.CODEX_EVENTS)} Codex hooks)")
        data["codex_hooks"] = {"path": str(path), "changed": changed}
    if args.statusline or args.remove_statusline:
        line, data["statusline"] = _status_line(args, project.root)
        lines.append(line)
    again = "forge init --force" + ("" if args.host == "claude" else f" --host {args.host}")
    if kept:
        lines.append(f"Kept {len(kept)} file(s) you edited; {again} replaces them.")
    if not lines:
        lines.append(f"forge is already installed in {project.root}; nothing changed.")
    if args.host != "codex":  # Codex's kernel layer is its own sandbox (sandbox_mode)
        line, data["sandbox"] = _kernel_layer(project)
        lines.append(line)
    if codex:  # its goals' gates run confined by their recorded posture (gates/confined.py)
        from forge_runtime.cli.commands.sandbox import gate_confinement

        data["gate_confinement"] = gate_confinement(project)
        ready = data["gate_confinement"].startswith("confined")
        lines.append(f"{'ready' if ready else 'skipped':<9} forge's own run of a sandboxed "
                     f"goal's final gates: {data['gate_confinement']}")
    or_ = [again] if kept else None
    return Result(hints.next_("forge doctor", "check that forge is ready in this project",
                              or_=or_), lines=lines, data=data)
