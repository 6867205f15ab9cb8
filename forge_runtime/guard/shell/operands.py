"""What a command's words do, for every command model: the files it writes or deletes, its
options, the code it runs for you.

The layer between the shell's state (state.py) and the command models (files.py, git.py,
archives.py, hosts.py, git_tree.py): each model asks these the same questions about its
own operands, so none of them imports another model to ask (the circle the models once
made, issue 26). Code a program runs for you is judged by the walk's child shell, which
the walk hands over on the Context (`ctx.child`), so nothing here imports the walk.
"""

import os

from forge_runtime.guard.paths import FRONT_MATTER, Finding
from forge_runtime.guard.shell import lexer as shell_lexer
from forge_runtime.guard.shell.state import Context, check_path, expansions, risky_unknown, touches
from forge_runtime.guard.shell.syntax import LIFTED

# Programs code run for you may name without arguments (an editor, a pager, ssh).
KNOWN_PROGRAMS = frozenset({"less", "more", "most", "cat", "vim", "vi", "nvim", "nano",
                            "emacs", "true", "false", ":", "ssh", "store", "cache"})
_SSH_CODE_OPTIONS = ("proxycommand", "localcommand", "permitlocalcommand",
                     "knownhostscommand", "match", "proxyjump", "include")
# A file read as the text it holds (an xargs list, a diff): larger ones are not read.
_TEXT_BYTES_LIMIT = 1_000_000


def candidates(args: list[str]) -> list[str]:
    """The words of a command that may name files: operands and `--opt=value`/`of=` values."""
    found = []
    for arg in args:
        if arg.startswith("-"):
            if "=" in arg:
                found.append(arg.split("=", 1)[1])
            continue
        if "=" in arg and not arg.startswith(("/", ".", "~")):
            found.append(arg.split("=", 1)[1])
        found.append(arg)
    return found


def options(args: list[str], takes_value: str = "",
            long_values: frozenset[str] = frozenset()) -> tuple[list[str], list[tuple]]:
    """Split getopt-style `args` into operands and (option, value) pairs: short clusters
    (`-xzf FILE`, `-Cdir`), `--long=value`, `--long value` for `long_values`, `--`."""
    operands: list[str] = []
    found: list[tuple[str, str | None]] = []
    position = 0
    while position < len(args):
        arg = args[position]
        position += 1
        if arg == "--":
            operands.extend(args[position:])
            break
        if arg.startswith("--"):
            name, equals, value = arg.partition("=")
            if not equals and name in long_values and position < len(args):
                value, position = args[position], position + 1
            found.append((name, value if (equals or name in long_values) else None))
        elif arg.startswith("-") and len(arg) > 1:
            for index, letter in enumerate(arg[1:], start=1):
                if letter in takes_value:
                    value = arg[index + 1:]
                    if not value and position < len(args):
                        value, position = args[position], position + 1
                    found.append(("-" + letter, value))
                    break
                found.append(("-" + letter, None))
        else:
            operands.append(arg)
    return operands, found


def split(text: str) -> list[str]:
    """`text` split into words; a command forge cannot name when its quotes do not close."""
    try:
        return shell_lexer.split(text)
    except ValueError:
        return [LIFTED]


def check_write(word: str, ctx: Context, *, verb: str, appends: bool = False,
                keeps_content: bool = False) -> Finding | None:
    """A file the command writes. Appending to state.md whose front matter is closed, or
    touching an existing one, leaves the goal fields as they are, so it is let through."""
    finding = check_path(word, ctx, destructive=False, verb=verb, must_know=True)
    if finding is None or finding.entry is None or finding.entry.kind != FRONT_MATTER:
        return _state_body_hint(finding) if finding else None
    state = finding.entry.path
    spared = all(path == state for path in expansions(word, ctx))
    if spared and (appends or keeps_content) and _front_matter_closed(state):
        return None
    return _state_body_hint(finding)


def _front_matter_closed(path: str) -> bool:
    from forge_runtime.guard.edits import front_matter

    try:
        with open(path, encoding="utf-8", newline="") as handle:
            block = front_matter(handle.read())
    except (OSError, UnicodeDecodeError):
        return False
    return block is not None and block.endswith("\n")


def _state_body_hint(finding: Finding) -> Finding:
    if finding.entry and finding.entry.kind == FRONT_MATTER:
        return Finding(finding.message + "; append to its checklist (`>>`) or edit it with "
                       "the Edit tool instead", finding.entry)
    return finding


def check_destroy(args: list[str], ctx: Context) -> Finding | tuple[bool, bool]:
    for word in candidates(args):
        finding = check_path(word, ctx, destructive=True, verb="deletes", follow=False)
        if finding:
            return finding
    return True, touches(candidates(args), ctx, follow=False)


def check_unmodelled(name: str, args: list[str], ctx: Context) -> Finding | tuple:
    for word in candidates(args):
        finding = check_path(word, ctx, destructive=False, verb=f"runs {name} on")
        if finding:
            return _state_body_hint(finding)
    return False, touches(candidates(args), ctx)


def small_text(word: str, ctx: Context) -> str | None:
    """The text of a small file forge can read as it will be read (see `walk._script_text`)."""
    paths = expansions(word, ctx)
    if len(paths) != 1 or paths[0] is None or paths[0] in ctx.made:
        return None
    if paths[0] in ctx.written:
        return ctx.written[paths[0]]
    try:
        if os.path.getsize(paths[0]) > _TEXT_BYTES_LIMIT:
            return None
        with open(paths[0], encoding="utf-8", errors="replace") as handle:
            return handle.read()
    except OSError:
        return None


def known_program(code: str) -> bool:
    """A bare pager, editor or credential helper (`less`, `vim`, `true`), or `ssh` with no
    option that runs a command of its own."""
    words = split(code)
    return bool(words) and os.path.basename(words[0]) in KNOWN_PROGRAMS and (
        len(words) == 1 or (os.path.basename(words[0]) == "ssh" and not any(
            word.lower().startswith(_SSH_CODE_OPTIONS) or word.startswith("-F")
            for word in words[1:])))


def run_for_you(code: str, ctx: Context, what: str) -> Finding | None:
    """Code a program runs for you (a pager, an editor, `core.sshCommand`, `tar -I`): judged
    as a child shell would run it; where it could reach a protected path it must be code
    forge can read and prove, not a program it does not model (`../x.sh`, `python -c`)."""
    if known_program(code):
        return None
    before = ctx.unproven
    finding = ctx.child(code or LIFTED, ctx)
    if finding:
        return finding
    if (ctx.unproven > before or LIFTED in code) and risky_unknown("", ctx):
        shown = code if len(code) <= 60 else code[:57] + "..."
        return Finding(f"makes {what} run `{shown}`, code forge cannot prove read-only, "
                       "from a directory that holds a protected path")
    return None
