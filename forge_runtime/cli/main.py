"""Entry point of the `forge` command: build the parser, run one command, render it."""

from __future__ import annotations

import argparse
import contextlib
import errno
import functools
import importlib
import io
import sys

from forge_runtime import __version__, hints
from forge_runtime.cli.render import emit
from forge_runtime.errors import EXIT_USAGE, ForgeError
from forge_runtime.result import Result

# Modules under forge_runtime.cli.commands, in the order `forge --help` lists them.
COMMAND_MODULES: tuple[str, ...] = ("init", "doctor", "hints", "guard", "mode", "goal", "ledger",
                                   "brief", "clarify", "artifacts", "mcp", "statusline",
                                   "gate", "council", "sandbox", "notify", "demo")


HELP_HINT = hints.next_("forge doctor", "check that forge is installed and ready in this project")


class _Parser(argparse.ArgumentParser):
    """argparse that raises instead of exiting, so usage errors get a hint like any other.

    Help text ends with a hint too: the contract covers every output, `--help` included.
    """

    def __init__(self, *args, **kwargs):
        kwargs.setdefault("epilog", HELP_HINT.render())
        kwargs.setdefault("formatter_class", argparse.RawDescriptionHelpFormatter)
        super().__init__(*args, **kwargs)

    def error(self, message: str):  # noqa: D401 - argparse's name
        raise ForgeError(f"{self.prog}: {message}", f"{self.prog} --help")


def build_parser(argv: list[str] | None = None) -> argparse.ArgumentParser:
    """The parser of every command; given one command line's words, of just the command they
    name when that is a known one (else every command, for the help and the error).

    Registering all of them costs every forge call 20-60 ms: sixteen modules to import, and
    argparse asks gettext to translate each help string, a search of the locale directories
    each time. Each module registers the command it is named after; `artifacts` registers the
    artifact operations (list, tree, new ...)."""
    named = _command_word(argv)
    if named is not None:
        parser = _parser_of([named if named in COMMAND_MODULES else "artifacts"])
        if named in parser.commands.choices:
            return parser
    return _parser_of(COMMAND_MODULES)


def _command_word(argv: list[str] | None) -> str | None:
    """The command a command line names: its first word that is not an option (the top level
    has only flags)."""
    return next((word for word in argv or () if not word.startswith("-")), None)


def _parser_of(modules) -> argparse.ArgumentParser:
    """The top-level parser with the commands of these modules of forge_runtime.cli.commands."""
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument("--json", action="store_true", help="print JSON with _next_action")
    parser = _Parser(
        prog="forge",
        description="Durable goal budgets, read-only roles and next-action hints for Claude Code.",
        parents=[common],
    )
    parser.add_argument("--version", action="version",
                        version=f"forge {__version__}\n{hints.done().render()}")
    parser.commands = parser.add_subparsers(dest="command", metavar="COMMAND",
                                            parser_class=_Parser)
    for name in modules:
        importlib.import_module(f"forge_runtime.cli.commands.{name}").register(parser.commands,
                                                                              common)
    return parser


@functools.cache
def _checking_parser() -> argparse.ArgumentParser:
    """One parser for every `parses` call: building it imports and registers every command
    (~4 ms), and `forge hints audit` checks dozens of commands. Parsing leaves it as it was."""
    return build_parser()


def parses(command_line: str) -> bool:
    """True when `command_line` (starting with `forge`) is accepted by forge's own parser.

    `--help` and `--version` count as accepted (argparse exits 0 for them); their text is
    swallowed, since this only asks whether the command is valid.
    """
    import shlex

    try:
        words = shlex.split(command_line)
    except ValueError:  # an unclosed quote: no shell would run it either
        return False
    if not words or words[0] != "forge":
        return False
    try:
        with contextlib.redirect_stdout(io.StringIO()):
            _checking_parser().parse_args(words[1:])
    except ForgeError:
        return False
    except SystemExit as exc:
        return exc.code == 0
    return True


def help_of(words: list[str]) -> str | None:
    """The `--help` text of the command `words` name (without `forge`), or None when forge has
    no such command: lets a synopsis in the docs be checked against the real options."""
    out = io.StringIO()
    try:
        with contextlib.redirect_stdout(out):
            _checking_parser().parse_args([*words, "--help"])
    except ForgeError:
        return None
    except SystemExit as exc:
        return out.getvalue() if exc.code == 0 else None
    return None


def _no_command() -> Result:
    return Result(HELP_HINT, lines=["forge: no command given. Run `forge --help` for the list."],
                  exit_code=EXIT_USAGE)


def _os_error_hint(exc: OSError) -> hints.Hint:
    where = f" ({exc.filename})" if exc.filename else ""
    if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
        return hints.error(f"forge may not write a file it needs: {exc.strerror}{where}",
                           "forge sandbox status", "the host's sandbox keeps forge's own "
                           "files read-only for an agent's Bash; a person runs this command "
                           "in a terminal")
    return hints.error(f"a file forge needs failed: {exc.strerror or exc}{where}",
                       "forge doctor")


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    as_json = "--json" in argv
    try:
        args = build_parser(argv).parse_args(argv)
        result = args.handler(args) if getattr(args, "handler", None) else _no_command()
    except ForgeError as exc:
        result = Result(exc.hint(), exit_code=exc.exit_code,
                        data={"error": exc.message, "code": exc.code})
    except OSError as exc:  # a file forge needs, refused: say which, never a traceback
        result = Result(_os_error_hint(exc), exit_code=EXIT_USAGE,
                        data={"error": str(exc), "code": None})
    except KeyboardInterrupt:
        return 130
    code = emit(result, as_json)
    _tell()
    return code


def _tell() -> None:
    """A command that ended a goal (`forge ledger charge` at its ceiling) tells the person
    as the Stop hook would (notify/); nothing is imported when it ended nothing."""
    noted = sys.modules.get("forge_runtime.goal.rules.end_notes")
    if noted is None or not noted.NOTED:
        return
    # lazy: only a command that ended a goal tells anyone
    from forge_runtime.notify.trigger import after_event
    from forge_runtime.roots import locate

    after_event(locate()[0], None, None)
