"""`forge sandbox enable|status|disable`: the host's kernel sandbox as forge's second layer."""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

from forge_runtime import hints
from forge_runtime.errors import EXIT_OK, EXIT_USAGE
from forge_runtime.project import find_project
from forge_runtime.result import Result
from forge_runtime.sandbox.scopes import PROJECT, SCOPES

SCOPE_HELP = ("the settings file: project (.claude/settings.json, the default), user "
              "(~/.claude/settings.json) or managed (/etc/claude-code/managed-settings.d/"
              "50-forge.json, needs root; the only scope whose hooks survive disableAllHooks)")


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "sandbox", parents=[common], help="protect the ledger in the kernel (host sandbox)",
        description="Turn on Claude Code's Bash sandbox with deny rules for the goal ledger, "
                    "forge's guard files and the settings that could switch forge off, so "
                    "that no Bash command, however obfuscated, and no file tool can change "
                    "them. Needs bubblewrap >= 0.8.0 and socat on Linux.")
    actions = parser.add_subparsers(dest="sandbox_action", metavar="ACTION", required=True)
    enable = actions.add_parser("enable", parents=[common],
                                help="merge the sandbox and deny rules into a settings file")
    enable.add_argument("--scope", choices=SCOPES, default=PROJECT, help=SCOPE_HELP)
    enable.set_defaults(handler=run_enable)
    disable = actions.add_parser("disable", parents=[common],
                                 help="take out exactly what enable added")
    disable.add_argument("--scope", choices=SCOPES, default=PROJECT, help=SCOPE_HELP)
    disable.set_defaults(handler=run_disable)
    shown = actions.add_parser("diff", parents=[common],
                               help="what changed in a settings file since enable wrote it")
    shown.add_argument("--scope", choices=SCOPES, default=PROJECT, help=SCOPE_HELP)
    shown.set_defaults(handler=run_diff)
    status = actions.add_parser("status", parents=[common],
                                help="what protects forge now, and the fix for the worst gap")
    status.set_defaults(handler=run_status)


def _project():
    return find_project()


def run_enable(args) -> Result:
    from forge_runtime.sandbox import layer

    path, changed = layer.enable(_project(), args.scope)
    line = (f"the host's sandbox and forge's deny rules are in {path}" if changed
            else f"{path} already holds the sandbox and forge's deny rules; nothing changed")
    return Result(hints.next_("forge sandbox status",
                              "the host reloads settings within about a second; check the "
                              "posture it reads"),
                  [line], {"path": str(path), "changed": changed, "scope": args.scope}, EXIT_OK)


def run_disable(args) -> Result:
    from forge_runtime.sandbox import layer

    project = _project()
    path, outcome = layer.disable(project, args.scope)
    line = {"restored": f"{path} is back to its bytes from before forge sandbox enable",
            "removed": f"removed what forge added from {path}; later edits kept",
            "untouched": f"{path} holds nothing forge added any more; left as it is",
            "nothing": f"forge sandbox enable has not written {path}; nothing to undo"}[outcome]
    lines = [line]
    left = layer.left_in(project, args.scope)
    if left:  # the file had them before the enable undone: whose they are, forge cannot say
        lines.append(f"still in {path}, as the file held them before that enable (yours, or "
                     f"an earlier enable's you kept while editing it; forge left them): "
                     f"{', '.join(left)}")
    return Result(hints.done(lines[-1]), lines, {"path": str(path), "outcome": outcome,
                                                 "scope": args.scope, "left": left}, EXIT_OK)


def run_diff(args) -> Result:
    from forge_runtime.sandbox import layer

    path, lines = layer.diff(_project(), args.scope)
    if not lines:
        line = f"{path} is as forge sandbox enable wrote it, or forge has no record of it"
        return Result(hints.done(line), [line], {"path": str(path), "diff": []}, EXIT_OK)
    return Result(hints.next_(f"forge sandbox disable --scope {args.scope}",
                              "once the file holds only what you want kept of it"),
                  lines, {"path": str(path), "diff": lines, "scope": args.scope}, EXIT_OK)


def codex_posture(project) -> dict | None:
    """Codex's own sandbox, for a project that forge wired for Codex (`.codex/` exists):
    there the kernel layer is Codex's, not Claude Code's."""
    if not (project.root / ".codex").is_dir():
        return None
    from forge_runtime.hosts.codex import codex_sandbox_posture

    return codex_sandbox_posture(project.root)


def gate_confinement(project) -> str:
    """How forge runs a sandboxed goal's final gates here, in a few words (gates/confined.py),
    on either host: a machine that cannot confine them verifies no such goal."""
    from forge_runtime.gates import confined

    problem = confined.readiness(project)
    if problem is None:
        return "confined (bubblewrap, no Unix sockets, no network, a clean environment)"
    return f"cannot be confined, so no sandboxed goal is verified here: {problem}"


def status_lines(posture, project, tools, host: dict | None, codex: dict | None = None,
                 gates: str = "") -> list[str]:
    """The posture as lines, one per thing a person checks; `gates`: how forge's own run of
    a sandboxed goal's final gates goes here (`gate_confinement`)."""
    from forge_runtime.sandbox import layer
    from forge_runtime.sandbox.posture import KEYS

    lines = []
    for key in KEYS:
        value, path = posture.effective.get(key, (None, None))
        shown = "unset" if path is None else f"{str(value).lower()} ({path})"
        lines.append(f"sandbox.{key}: {shown}")
    ledger = bool(layer.ledger_rules(project) & posture.deny)
    lines.append(f"deny rule for the ledger: {'yes' if ledger else 'no'}")
    hooks_off, where = posture.effective.get("disableAllHooks", (None, None))
    lines.append(f"disableAllHooks: {'true (' + str(where) + ')' if hooks_off else 'no'}")
    for path, name, value in posture.env:
        lines.append(f"env override: {name}={value} ({path})")
    lines.append(f"tools: {tools.describe()}")
    if host is None:
        lines.append("host: no claude binary found to ask")
    else:
        lines.append("host (claude sandbox status): " + ", ".join(
            f"{key}={host[key]}" for key in ("enabled", "enabledSource", "strictMode", "error")
            if key in host))
    lines.append(f"forge's own run of a sandboxed goal's final gates: {gates}")
    if codex is not None:
        protected = "yes" if codex["ledger_kernel_protected"] else "no"
        lines.append(f"codex: sandbox_mode {codex['sandbox_mode']} ({codex['source']}); "
                     f"ledger kernel-protected: {protected}; {codex['detail']}")
    return lines


def run_status(args) -> Result:
    from forge_runtime.sandbox import posture, tools

    project = _project()
    found_tools = tools.find()
    state = posture.read(project)
    host = posture.host_status(project)
    found = posture.gaps(state, project, found_tools)
    codex = codex_posture(project)
    goal_line = posture.goal_line(project, codex)
    gates = gate_confinement(project)
    data = {"goal_posture": goal_line, "codex": codex,
            "protected": posture.ledger_protected(project),
            "effective": {key: value for key, (value, _) in state.effective.items()},
            "env_overrides": [{"file": str(p), "name": n, "value": v} for p, n, v in state.env],
            "tools": found_tools.describe(), "host": host, "gate_confinement": gates,
            "gaps": [{"rank": gap.rank, "message": gap.message, "fix": gap.fix}
                     for gap in found]}
    lines = [goal_line, *status_lines(state, project, found_tools, host, codex, gates)]
    return Result(posture.final_hint(found), lines, data, EXIT_USAGE if found else EXIT_OK)
