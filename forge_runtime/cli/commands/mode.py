"""`forge mode enter|exit|status`: restrict a main session to a read-only role's tools."""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

from forge_runtime import hints
from forge_runtime.errors import EXIT_OK, EXIT_USAGE, ForgeError
from forge_runtime.result import Result


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "mode", parents=[common], help="put a main session into a read-only role's mode",
        description="While a session is in a role's mode the PreToolUse guard lets it use "
                    "only that role's tools. Anyone may enter a mode; only a person can "
                    "leave one (the guard refuses `forge mode exit` from an agent).")
    actions = parser.add_subparsers(dest="mode_action", metavar="ACTION", required=True)
    session_help = "the Claude Code session id (default: $CLAUDE_CODE_SESSION_ID)"
    enter = actions.add_parser("enter", parents=[common], help="restrict a session to a role")
    enter.add_argument("role", help="a role from `forge guard roles`, e.g. clarifier")
    enter.add_argument("--session", help=session_help)
    enter.set_defaults(handler=run_enter)
    leave = actions.add_parser("exit", parents=[common], help="lift a session's mode")
    leave.add_argument("--session", help=session_help)
    leave.set_defaults(handler=run_exit)
    status = actions.add_parser("status", parents=[common], help="show sessions in a mode")
    status.add_argument("--session", help="show only this session")
    status.set_defaults(handler=run_status)


def _guard_dir() -> str:
    from forge_runtime.project import find_project
    from forge_runtime.protected import paths

    return paths.guard_dir(find_project())


def run_enter(args) -> Result:
    from forge_runtime.guard import modes, rules
    from forge_runtime.project import find_project
    from forge_runtime.protected import paths

    project = find_project()
    known = rules.for_project(project).roles
    if args.role not in known:
        raise ForgeError(f"no role named {args.role!r} (known: {', '.join(known)})",
                         "forge guard roles", exit_code=EXIT_USAGE)
    session_id = modes.require_session(args.session)
    try:
        path = modes.enter(paths.guard_dir(project), session_id, args.role)
    except OSError as exc:
        raise ForgeError(f"cannot write forge's guard directory ({exc.strerror}): with "
                         "forge's kernel layer on, an agent's Bash may not change it",
                         f"forge mode enter {args.role} --session {session_id}",
                         rationale="a person runs this in a terminal; or hand the work to "
                                   f"the forge:{args.role} agent, which is held to the role "
                                   "in any session") from None
    tools = ", ".join(known[args.role].tools)
    return Result(
        hints.wait(f"the {args.role} step is done; then a person runs the command below",
                   f"session {session_id} may now use only: {tools}",
                   or_=[f"forge mode exit --session {session_id}"]),
        [f"session {session_id} is in the {args.role} mode ({path})"],
        {"session_id": session_id, "role": args.role, "tools": list(known[args.role].tools)},
        EXIT_OK)


def run_exit(args) -> Result:
    from forge_runtime.guard import modes

    session_id = modes.require_session(args.session)
    left = modes.leave(_guard_dir(), session_id)
    line = (f"session {session_id} left its guarded mode" if left
            else f"session {session_id} was not in a guarded mode")
    return Result(hints.done(line), [line], {"session_id": session_id, "left": left}, EXIT_OK)


def run_status(args) -> Result:
    from forge_runtime.guard import modes

    found = modes.all_modes(_guard_dir())
    if args.session:
        found = [(s, r) for s, r in found if s == args.session]
    lines = [f"{session}: {role}" for session, role in found] or ["no session is in a mode"]
    data = {"modes": [{"session_id": s, "role": r} for s, r in found]}
    if found:
        session_id = found[0][0]
        hint = hints.next_(f"forge mode exit --session {session_id}",
                           "a person lifts the mode when the read-only step is done")
    else:
        hint = hints.done("no session is restricted")
    return Result(hint, lines, data, EXIT_OK)
