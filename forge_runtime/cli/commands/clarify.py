"""`forge clarify "<wish>"`: ask in a terminal until a complete brief is frozen.

The model (a claude-agent-sdk session in the clarifier role) reads the project and asks
through forge's `human` channel; this command shows each question and reads the answer.
A project with a frozen brief asks nothing. Ctrl-C leaves no brief behind (it is written
only when complete) and keeps the dialogue log; the next run continues the session.
"""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

import shlex
import sys

from forge_runtime import hints
from forge_runtime.errors import EXIT_USAGE, ForgeError
from forge_runtime.result import Result

INTERRUPTED = 130


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "clarify", parents=[common], help="ask until a four-section brief is frozen",
        description="A read-only model session asks you questions about the wish, then forge "
                    "freezes its brief at .forge/notes/brief.md. A number picks an option, "
                    "text answers in your words, Enter leaves a question to the model.")
    parser.add_argument("wish", help="what you want done, in a sentence or two")
    parser.add_argument("--asks", type=int, metavar="N", help="ask at most N questions")
    parser.add_argument("--timeout", type=float, metavar="S", default=1800.0,
                        help="seconds a question waits (default 1800; 0: nobody at the screen)")
    parser.add_argument("--new", action="store_true",
                        help="clarify again, keeping the frozen brief as brief.<n>.md")
    parser.set_defaults(handler=run)


def _again(args) -> str:
    return f"forge clarify {shlex.quote(args.wish)}"


def run(args) -> Result:
    import asyncio

    from forge_runtime.clarify.channel import HumanChannel
    from forge_runtime.clarify.store import frozen
    from forge_runtime.clarify.terminal import TerminalUI
    from forge_runtime.workflow import Workbench, Workflow
    from forge_runtime.workflow.clarify import (
        STEP_NAME,
        clarify_step,
        dialogue_path,
        interrupted_session,
    )

    if not args.wish.strip():
        raise ForgeError("forge clarify: the wish is empty", "forge clarify --help")
    if args.asks is not None and args.asks < 0:
        raise ForgeError("forge clarify: --asks is a count of questions, 0 or more",
                         "forge clarify --help", exit_code=EXIT_USAGE)
    bench = Workbench.for_project()
    channel = HumanChannel(max_asks=args.asks, timeout_s=args.timeout,
                           log_path=dialogue_path(bench))
    screen = TerminalUI(channel, out=sys.stderr if args.json else sys.stdout,
                        show_quota=args.asks is not None, nobody=args.timeout <= 0)
    workflow = Workflow([clarify_step(channel, prompt=args.wish, new=args.new)])
    resuming = interrupted_session(bench) is not None and not args.new
    screen.start()
    try:
        ran = asyncio.run(workflow.run(bench))
    except ForgeError as exc:
        if resuming:  # the kept session may be gone (another machine, a cleared HOME)
            exc.alternatives.append(f"{_again(args)} --new")
        raise
    except KeyboardInterrupt:
        screen.stop()
        return Result(hints.next_(_again(args), "run it again to continue where it stopped"),
                      ["", "Interrupted: no brief was written; the dialogue so far is kept in "
                       f"{dialogue_path(bench)}"], {"interrupted": True}, INTERRUPTED)
    finally:
        screen.stop()
    brief = frozen(bench.brief_path)
    if brief is None:  # the step ran and froze it, or was skipped because one was frozen
        raise ForgeError(f"no complete brief at {bench.brief_path}", _again(args) + " --new")
    (step,) = ran
    what = (f"a brief is already frozen at {bench.brief_path}; nothing to ask" if step.skipped
            else f"brief frozen at {bench.brief_path}")
    lines = [what, "", *(f"  {line}" for line in bench.context[STEP_NAME].split("\n"))]
    data = {"path": str(bench.brief_path), "asked": channel.asked, "skipped": step.skipped,
            "follow_ups": step.follow_ups, "sections": dict(brief.sections),
            "ui_errors": [repr(error) for error in channel.ui_errors]}
    return Result(hints.next_(f"/goal {brief.goal_condition}",
                              "start the work from the brief with the host's /goal"),
                  lines, data)
