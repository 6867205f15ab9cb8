"""`forge ledger activate|charge|verify`: the ledger helper behind goal-ledger.sh/.ps1.

The seed contract's entry point (`.forge/hooks/lib/goal-ledger.sh activate --project
<root> --state .forge/local/state.md`) lands here, on the same code the hooks run: there
is one implementation of the rules. `activate` without a session checks qualification
(goal/rules/qualification.py: forge can keep every promise a goal relies on) and reports:
it never activates, because activation is a person's `/goal`, which only the host's hooks
see. `charge` runs the Stop hook's charging for a session that is
already bound; it never confirms a pending activation (a transcript path given on a command
line proves nothing about a person).
"""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

from forge_runtime import hints
from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.result import Result


def register(subparsers, common) -> None:
    parser = subparsers.add_parser("ledger", parents=[common], help="the goal ledger helper",
                                   description="Activate, charge and verify goal ledgers.")
    actions = parser.add_subparsers(dest="ledger_action", metavar="ACTION", required=True,
                                    parser_class=type(parser))
    shared = {"parents": [common]}
    activate = actions.add_parser("activate", help="check that a goal may run here", **shared)
    _project_args(activate)
    activate.set_defaults(handler=run_activate)
    charge = actions.add_parser("charge", help="charge a session's last turn", **shared)
    _session_args(charge)
    charge.set_defaults(handler=run_charge)
    verify = actions.add_parser("verify", help="check every record of every goal", **shared)
    _project_args(verify)
    verify.set_defaults(handler=run_verify)


def _project_args(parser) -> None:
    parser.add_argument("--project", help="the project root (default: here)")
    parser.add_argument("--state", help="accepted for the seed contract; always state.md")


def _session_args(parser) -> None:
    _project_args(parser)
    parser.add_argument("--session", help="the host session id")
    parser.add_argument("--transcript", help="the host session's transcript (JSON lines)")


def _project(args):
    from forge_runtime.project import find_project

    return find_project(args.project)


def _stop_event(args) -> dict:
    if not args.session or not args.transcript:
        raise ForgeError("forge ledger charge needs --session and --transcript",
                         "forge ledger charge --help")
    project = _project(args)
    return {"session_id": args.session, "transcript_path": args.transcript,
            "cwd": str(project.root), "hook_event_name": "Stop"}


def _reply_result(reply: dict | None) -> Result:
    """The Stop hook's reply as this command's output, in the same words the host shows.

    A reply that ends autonomy exits 2 with the stop reason's own hint; a stuck warning
    is shown as it is; a silent reply means the turn was charged (or had been already).
    """
    if reply and reply.get("continue") is False:
        body, hint = hints.split_rendered(reply["stopReason"])
        return Result(hint, body, {"reply": reply}, EXIT_REFUSED)
    if reply and reply.get("systemMessage"):
        body, hint = hints.split_rendered(reply["systemMessage"])
        return Result(hint, body, {"reply": reply})
    return Result(hints.next_("forge goal status"), ["turn charged (or already charged)"],
                  {"reply": reply})


def run_activate(args) -> Result:
    from forge_runtime.goal.rules import qualification

    project = _project(args)
    qualification.require(project)
    from forge_runtime.cli.commands.goal import NO_GOAL

    return Result(hints.wait(NO_GOAL),
                  ["qualified: dependencies load, the ledger is writable and lockable"],
                  {"qualified": True, "ledger_root": str(project.ledger_root)})


def run_charge(args) -> Result:
    from forge_runtime.hooks.goal_handlers import on_stop

    return _reply_result(on_stop(_stop_event(args), confirm_pending=False))


def run_verify(args) -> Result:
    from forge_runtime.goal.views import status as core

    goals = core.verify_all(_project(args))
    lines = [f"ok  {goal['nonce']}  {goal['turn_count']}/{goal['turn_ceiling']}"
             for goal in goals]
    return Result(hints.done(f"{len(goals)} goal ledger(s) verified"), lines, {"goals": goals})
