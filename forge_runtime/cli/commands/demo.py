"""`forge demo [--keep DIR]`: a real Claude Code session, offline, showing what forge does."""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

from forge_runtime.result import Result


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "demo", parents=[common],
        help="run a real Claude Code session offline and show what forge does",
        description="Create a temporary git project with forge installed, run the real Claude "
                    "Code host in it against a scripted model on 127.0.0.1 (no API key, no "
                    "network), and report what the host and forge did.")
    parser.add_argument("--keep", metavar="DIR",
                        help="build the demo in DIR (new or empty) and keep it for inspection")
    parser.set_defaults(handler=run)


def run(args) -> Result:
    from forge_runtime.demo.run import run_demo

    return run_demo(args.keep)
