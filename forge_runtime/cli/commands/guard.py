"""`forge guard roles|check`: what the PreToolUse guard allows, asked without a session."""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

import json
import os

from forge_runtime import hints
from forge_runtime.errors import EXIT_OK, EXIT_REFUSED, EXIT_USAGE, ForgeError
from forge_runtime.result import Result

CHECK_EXAMPLE = "forge guard check --role clarifier --tool Write"


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "guard", parents=[common], help="show and test the read-only role guard",
        description="The PreToolUse guard denies tools a role may not use and any write to "
                    "forge's protected paths (the goal ledger, guard files, the goal fields "
                    "of state.md).")
    actions = parser.add_subparsers(dest="guard_action", metavar="ACTION", required=True)
    roles = actions.add_parser("roles", parents=[common],
                               help="list roles, protected paths and sessions in a mode")
    roles.set_defaults(handler=run_roles)
    check = actions.add_parser("check", parents=[common],
                               help="ask the guard about one tool call")
    check.add_argument("--tool", required=True, help="tool name, e.g. Write or Bash")
    check.add_argument("--input", default="{}", help="the tool input as JSON")
    check.add_argument("--role", help="check as this role (as forge's SDK sessions do)")
    check.add_argument("--agent-type", help="check as this subagent, e.g. forge:clarifier")
    check.add_argument("--session", default="forge-guard-check",
                       help="check as this session (its guarded mode applies)")
    check.add_argument("--cwd", help="the directory the call runs in (default: here)")
    check.set_defaults(handler=run_check)


def _project_rules():
    from forge_runtime.guard import rules
    from forge_runtime.project import find_project

    project = find_project()
    return project, rules.for_project(project)


def run_roles(args) -> Result:
    from forge_runtime.goal.store.layout import receipt_key
    from forge_runtime.guard import modes
    from forge_runtime.protected import paths

    project, rules = _project_rules()
    lines = ["Roles (a role may use only these tools):"]
    for role in rules.roles.values():
        agents = sorted({f"forge:{role.name}"} | {a for a, r in rules.agents.items()
                                                  if r == role.name})
        lines.append(f"  {role.name:<12} {', '.join(role.tools) or '(nothing)'}")
        lines.append(f"  {'':<12} agents: {', '.join(agents)}")
    from forge_runtime.guard import gate_files

    protected = paths.protected_paths(project, rules.protected)
    lines.append("Protected in every session:")
    lines.extend(f"  {entry.label}: {entry.path}" for entry in protected)
    gates_file = gate_files.gates_entry(project)
    lines.append(f"  {gates_file.label}, {gates_file.kind}: {gates_file.path}")
    lines.append("  reads too: the gate receipts' key, "
                 f"{os.path.realpath(receipt_key(str(project.ledger_root)))}")
    protected.append(gates_file)
    in_mode = modes.all_modes(paths.guard_dir(project))
    lines.append("Sessions in a guarded mode:" if in_mode else "No session is in a guarded mode.")
    lines.extend(f"  {session}: {role}" for session, role in in_mode)
    data = {
        "roles": [{"name": r.name, "tools": list(r.tools), "description": r.description}
                  for r in rules.roles.values()],
        "agents": rules.agents,
        "protected": [{"label": e.label, "path": e.path, "kind": e.kind} for e in protected],
        "modes": [{"session_id": s, "role": r} for s, r in in_mode],
    }
    return Result(hints.next_(CHECK_EXAMPLE, "see how the guard answers one tool call"),
                  lines, data, EXIT_OK)


def run_check(args) -> Result:
    from forge_runtime.guard.decide import decide
    from forge_runtime.guard.roles import Role

    try:
        tool_input = json.loads(args.input)
    except ValueError as exc:
        raise ForgeError(f"--input is not JSON ({exc})", f"{CHECK_EXAMPLE} --input '{{}}'",
                         exit_code=EXIT_USAGE) from None
    role: Role | None = None
    if args.role:
        _, rules = _project_rules()
        if args.role not in rules.roles:
            raise ForgeError(f"no role named {args.role!r}", "forge guard roles",
                             exit_code=EXIT_USAGE)
        role = rules.roles[args.role]
    event = {"session_id": args.session, "hook_event_name": "PreToolUse",
             "tool_name": args.tool, "tool_input": tool_input,
             "cwd": os.path.abspath(args.cwd or os.getcwd())}
    if args.agent_type:
        event["agent_type"] = args.agent_type
    hint = decide(event, role=role)
    data = {"tool": args.tool, "decision": "allow" if hint is None else "deny"}
    if hint is None:
        return Result(hints.done(f"the guard lets {args.tool} through"),
                      [f"allow: {args.tool}"], data, EXIT_OK)
    return Result(hint, [f"deny: {args.tool}"], data, EXIT_REFUSED)
