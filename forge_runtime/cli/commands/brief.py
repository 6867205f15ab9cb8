"""`forge brief check|freeze|show`: read a brief, freeze a complete one, show the frozen one."""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

import shlex
import sys

from forge_runtime import hints
from forge_runtime.errors import EXIT_USAGE, ForgeError
from forge_runtime.result import Result

STDIN = "-"


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "brief", parents=[common], help="check, freeze and show the four-section brief",
        description="A brief has four sections: Goal, Acceptance criteria, Boundaries, "
                    "Unknowns and assumptions. Headings may be written in many ways and in "
                    "English, Chinese or Russian.")
    actions = parser.add_subparsers(dest="brief_action", metavar="ACTION", required=True,
                                    parser_class=type(parser))
    check = actions.add_parser("check", parents=[common], help="report sections and what is "
                               "missing; writes nothing; exit 1 when incomplete")
    check.add_argument("file", nargs="?", metavar="FILE|-",
                       help="the brief to check (default: the frozen brief)")
    check.set_defaults(handler=run_check)
    freeze = actions.add_parser("freeze", parents=[common],
                                help="write .forge/notes/brief.md, only when complete")
    freeze.add_argument("file", nargs="?", metavar="FILE|-", help="the brief, - for stdin")
    freeze.add_argument("--new", action="store_true",
                        help="replace a frozen brief, keeping it as .forge/notes/brief.<n>.md")
    freeze.set_defaults(handler=run_freeze)
    show = actions.add_parser("show", parents=[common], help="the frozen brief and its /goal")
    show.set_defaults(handler=run_show)


def _frozen_path():
    from forge_runtime.clarify.store import brief_path
    from forge_runtime.project import find_project

    return brief_path(find_project().forge_dir)


def _read(source: str):
    from forge_runtime.clarify.brief import Brief

    if source == STDIN:
        return Brief.parse(sys.stdin.read())
    try:
        return Brief.load(source)
    except FileNotFoundError:
        raise ForgeError(f"no brief at {source}", "forge brief check --help") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise ForgeError(f"cannot read {source} as UTF-8 text ({exc.__class__.__name__})",
                         "forge brief check --help") from None


def _no_frozen_brief(path) -> ForgeError:
    return ForgeError(f"no brief is frozen at {path}", "forge clarify --help",
                      rationale="forge clarify asks, then freezes one; or forge brief freeze")


def _report(brief) -> list[str]:
    lines = []
    for name in brief.sections:
        body = brief[name]
        count = len([line for line in body.split("\n") if line.strip()])
        lines.append(f"{name:<26}{f'ok ({count} line(s))' if body else 'missing'}")
    if brief.amendments:
        lines.append(f"{'Amendments':<26}{len(brief.amendments)} entr(y/ies)")
    return lines


def _data(brief, source: str) -> dict:
    return {"source": source, "complete": brief.complete, "language": brief.language,
            "missing": brief.missing(), "lacking": list(brief.lacking),
            "sections": dict(brief.sections),
            "amendments": [{"at": a.at, "text": a.text} for a in brief.amendments]}


def run_check(args) -> Result:
    from forge_runtime.clarify.store import INCOMPLETE, incomplete

    if args.file is None:
        path = _frozen_path()
        if not path.exists():
            raise _no_frozen_brief(path)
        source = str(path)
    else:
        source = args.file
    brief = _read(source)
    data = _data(brief, source)
    shown = shlex.quote(source)
    if not brief.complete:
        refusal = incomplete(brief, f"forge brief check {shown}")
        return Result(refusal.hint(), _report(brief), {**data, "code": INCOMPLETE},
                      EXIT_USAGE)
    if args.file is None:
        return Result(hints.next_("forge brief show", "the frozen brief is complete"),
                      _report(brief), data)
    return Result(hints.next_(f"forge brief freeze {shown}", "the brief is complete"),
                  _report(brief), data)


def run_freeze(args) -> Result:
    from forge_runtime.clarify.store import freeze

    if args.file is None:
        raise ForgeError("forge brief freeze: name the brief's file, or - for standard input",
                         "forge brief freeze --help")
    brief = _read(args.file)
    shown = shlex.quote(args.file)
    done = freeze(brief, _frozen_path(), new=args.new, fix=f"forge brief check {shown}",
                  replace_fix=f"forge brief freeze {shown} --new")
    lines = [f"brief frozen at {done.path}"]
    if done.kept:
        lines.append(f"the brief it replaced is kept at {done.kept}")
    return Result(hints.next_(f"/goal {brief.goal_condition}",
                              "start the work from the brief with the host's /goal"),
                  lines, {**_data(brief, args.file), "path": str(done.path),
                          "kept": str(done.kept) if done.kept else None})


def run_show(args) -> Result:
    from forge_runtime.clarify.brief import Brief

    path = _frozen_path()
    if not path.exists():
        raise _no_frozen_brief(path)
    brief = Brief.load(path)
    if not brief.complete:
        from forge_runtime.clarify.store import incomplete

        raise incomplete(brief, f"forge brief check {shlex.quote(str(path))}")
    # Indented, so a body line such as "Fix: the login bug" cannot pass for a hint.
    shown = brief.to_markdown().rstrip("\n").split("\n")
    lines = [f"brief {path}", "", *(f"  {line}" if line else "" for line in shown)]
    return Result(hints.next_(f"/goal {brief.goal_condition}",
                              "the host's /goal, with a condition made from the acceptance "
                              "criteria"), lines, {**_data(brief, str(path)), "path": str(path)})
