"""`forge statusline [--session ID]`: what forge's status line shows for a session.

Claude Code itself runs forge_runtime.statusline (`forge init --statusline` installs it),
which prints the bare line and nothing else. This command shows a person the
same line, followed by the hint like every forge command.
"""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

import json
import os
import sys

from forge_runtime import hints
from forge_runtime.cli.render import use_colour
from forge_runtime.result import Result

NO_GOAL = "a person runs /goal with an objective in this session"


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "statusline", parents=[common], help="the status line forge shows for a session",
        description="Show the line forge's status line prints for a Claude Code session: "
                    "the goal's budget gauge, its numbers and the next step. Install it "
                    "with forge init --statusline.")
    parser.add_argument("--session",
                        help="the Claude Code session id (default: $CLAUDE_CODE_SESSION_ID)")
    parser.set_defaults(handler=run)


def run(args) -> Result:
    from forge_runtime.statusline import forge_part

    session = args.session or os.environ.get("CLAUDE_CODE_SESSION_ID") or ""
    if not session:
        return Result(hints.wait("a Claude Code session: run this inside one, or pass "
                                 "--session with its id"), ["no session given"],
                      {"session": None, "line": ""})
    event = json.dumps({"session_id": session, "cwd": os.getcwd()}).encode()
    line = forge_part(event, colour=not args.json and use_colour(sys.stdout))
    data = {"session": session, "line": forge_part(event) if line else ""}
    if not line:
        return Result(hints.wait(NO_GOAL, or_=["forge goal status"]),
                      [f"nothing to show: session {session} has no goal"], data)
    return Result(hints.next_("forge goal status", "the goal, its budget and next step"),
                  [line], data)
