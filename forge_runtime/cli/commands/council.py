"""`forge council "<question>"`: five advisors, an anonymous peer review, a verdict."""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

import os

from forge_runtime import hints
from forge_runtime.errors import EXIT_REFUSED, EXIT_USAGE, ForgeError
from forge_runtime.result import Result

AGENT_ENV = "CLAUDECODE"  # set by Claude Code in its Bash tool's environment


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "council", parents=[common], help="convene a council on a blocking decision",
        description="Five read-only advisors (simplicity, scale, pragmatism, contrarian, "
                    "maintainer) answer, review each other anonymously, and a chairman gives "
                    "a verdict with reasons and a minority report, recorded under "
                    ".forge/councils/. During a goal, only for a non-destructive decision a "
                    "cheap check cannot settle; each of its 11 sessions costs one turn.")
    parser.add_argument("question", nargs="?", help="the decision, in one sentence")
    parser.add_argument("--for", dest="artifact", metavar="ID",
                        help="the artifact the decision concerns, e.g. PRD-001")
    parser.add_argument("--person", action="store_true",
                        help="a person convenes it explicitly (from a terminal, not an agent)")
    parser.add_argument("--check", action="store_true",
                        help="only say whether a council may take the question now")
    parser.add_argument("--record", metavar="FILE",
                        help="record a council held by Claude Code's subagents (JSON, see the "
                             "council skill) instead of convening one")
    parser.add_argument("--resume", metavar="COUNCIL_ID",
                        help="go on with a council that could not finish, asking only the "
                             "seats it lacks, e.g. COUNCIL-001")
    parser.set_defaults(handler=council)


def council(args) -> Result:
    from forge_runtime.council import convene
    from forge_runtime.project import find_project

    if (args.question is None) == (args.resume is None):
        raise ForgeError("forge council takes a question, or --resume with a council's id",
                         'forge council "Which parser design keeps the grammar readable?"',
                         exit_code=EXIT_USAGE)
    project = find_project()
    if args.person and os.environ.get(AGENT_ENV):
        again = f"forge council --resume {args.resume}" if args.resume \
            else f'forge council "{_shown(args)}"'
        raise ForgeError("--person is for a person at their own terminal, and this runs "
                         "inside an agent's session", again,
                         exit_code=EXIT_REFUSED, code="FORGE_COUNCIL_NOT_A_PERSON")
    session = os.environ.get("CLAUDE_CODE_SESSION_ID") or "council"
    if args.resume:
        if args.check or args.record:
            raise ForgeError("--resume asks the missing seats itself: it takes neither "
                             "--check nor --record", f"forge council --resume {args.resume}")
        held = convene.resume(project, args.resume, person=args.person, session=session,
                             ask=convene.sdk.ask)
        return _outcome(held)
    if args.check:
        goal = convene.admit(project, args.question, args.person)
        return Result(hints.next_(f'forge council "{_shown(args)}"', "a council may take it"),
                      [f"admitted{' (goal ' + goal['nonce'] + ')' if goal else ''}"],
                      {"admitted": True, "goal": goal["nonce"] if goal else None})
    ask = convene.sdk.ask
    if args.record:
        from forge_runtime.council.replay import replaying

        ask = replaying(args.record)
    held = convene.convene(project, args.question, for_id=args.artifact, person=args.person,
                           session=session, ask=ask, charge=not args.record)
    return _outcome(held)


def _outcome(held: dict) -> Result:
    """What a council held (or resumed) shows: whole, or what it lacks and how to go on."""
    from forge_runtime.council.record import COMPLETE, UNSHAPED

    cost = held["cost"]
    failed = f", {cost['failed']} failed" if cost["failed"] else ""
    lines = [f"council     {held['id']}  ({held['record']}, {held['status']})",
             f"verdict     {held['verdict'] or '(none)'}",
             f"minority    {held['minority'] or '(none)'}",
             f"cost        {cost['sessions']} sessions{failed}, {cost['turns']} turns, "
             f"{_tokens(cost)} tokens"]
    if held["resumed"]:
        lines.append(f"resumed     {held['resumed']} time(s)")
    if held["goal"]:
        lines.append(f"goal        {held['goal']}: {held['charged']} turn(s) charged")
    lines += [f"missing     {seat}" for seat in held["missing"]]
    data = {"council": held}
    if held["status"] == COMPLETE:
        return Result(hints.done(f"recorded in {held['record']}"), lines, data)
    code = "FORGE_COUNCIL_NO_VERDICT" if held["status"] == UNSHAPED \
        else "FORGE_COUNCIL_INCOMPLETE"
    why = ("the chairman's answer lacks the requested shape and is kept as said"
           if held["status"] == UNSHAPED else "a seat's session failed")
    data["code"] = code
    return Result(hints.next_(f"forge council --resume {held['id']}",
                              f"{code}: {why}; {held['record']} keeps every answer given, "
                              "and resuming asks only what is missing"),
                  lines, data, EXIT_REFUSED)


def _shown(args) -> str:
    return " ".join(args.question.split()).replace('"', "'")


def _tokens(cost: dict) -> str:
    if cost["input_tokens"] is None and cost["output_tokens"] is None:
        return "unreported"
    return f"{cost['input_tokens'] or 0} in / {cost['output_tokens'] or 0} out"
