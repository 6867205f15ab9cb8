"""`forge council "<question>"`: five advisors, an anonymous peer review, a verdict."""

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
    parser.add_argument("question", help="the decision, in one sentence")
    parser.add_argument("--for", dest="artifact", metavar="ID",
                        help="the artifact the decision concerns, e.g. PRD-001")
    parser.add_argument("--person", action="store_true",
                        help="a person convenes it explicitly (from a terminal, not an agent)")
    parser.add_argument("--check", action="store_true",
                        help="only say whether a council may take the question now")
    parser.add_argument("--record", metavar="FILE",
                        help="record a council held by Claude Code's subagents (JSON, see the "
                             "council skill) instead of convening one")
    parser.set_defaults(handler=council)


def council(args) -> Result:
    from forge_runtime.council import convene
    from forge_runtime.project import find_project

    project = find_project()
    if args.person and os.environ.get(AGENT_ENV):
        raise ForgeError("--person is for a person at their own terminal, and this runs "
                         "inside an agent's session", f'forge council "{_shown(args)}"',
                         exit_code=EXIT_REFUSED, code="FORGE_COUNCIL_NOT_A_PERSON")
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
                           session=os.environ.get("CLAUDE_CODE_SESSION_ID") or "council",
                           ask=ask, charge=not args.record)
    cost = held["cost"]
    lines = [f"council     {held['id']}  ({held['record']})",
             f"verdict     {held['verdict'] or '(none)'}",
             f"minority    {held['minority'] or '(none)'}",
             f"cost        {cost['sessions']} sessions, {cost['turns']} turns, "
             f"{_tokens(cost)} tokens"]
    if held["goal"]:
        lines.append(f"goal        {held['goal']}: {held['charged']} turn(s) charged")
    if not held["verdict"] or not held["minority"]:
        error = ForgeError(f"the chairman's answer in {held['record']} lacks a verdict or a "
                           "minority report", f'forge council "{_shown(args)}"',
                           exit_code=EXIT_USAGE, code="FORGE_COUNCIL_NO_VERDICT")
        return Result(error.hint(), lines, {"council": held, "code": error.code},
                      error.exit_code)
    return Result(hints.done(f"recorded in {held['record']}"), lines, {"council": held})


def _shown(args) -> str:
    return " ".join(args.question.split()).replace('"', "'")


def _tokens(cost: dict) -> str:
    if cost["input_tokens"] is None and cost["output_tokens"] is None:
        return "unreported"
    return f"{cost['input_tokens'] or 0} in / {cost['output_tokens'] or 0} out"
