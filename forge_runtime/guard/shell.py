"""What a Bash command would do to protected paths, read with `shlex` instead of run.

`shell_syntax` splits the text into pipelines of simple commands; this module judges them.

The analysis is deliberately one-sided: it looks for ways a command could write, move,
delete or re-permission a protected path, and refuses when it finds one or cannot rule one
out. It is not complete and cannot be (a shell is a programming language); the ledger's
own tamper detection stays the real defence, and this makes tampering deliberate rather
than accidental. What it catches:

- redirections (`>`, `>>`, `&>`, `>|`, `<>`) into a protected path;
- any command not known to be read-only (`rm`, `mv`, `cp`, `ln`, `chmod`, `chown`, `tee`,
  `truncate`, `touch`, `dd of=`, `sed -i`, `perl -i`, git's writing subcommands, ...)
  naming a protected path, after `~`/`~user`/`$VAR`/glob/brace expansion, `cd`, `..` and
  symlinks, including symlinks the same command makes first (`ln -s . L && rm -rf L/.git`);
- variables as the shell would have them: assignments, `export`/`declare`, `for` loop
  values, `$PWD`/`$OLDPWD` from the session's cwd and each `cd`, an unset one as empty;
- commands inside `if`/`while`/`{ }`/functions, `$(...)`, backquotes and `<(...)` (each
  substitution is analysed, even inside double quotes), and code echoed or here-stringed
  into a shell (`echo '...' | sh`, `bash <<< '...'`);
- destroying or re-permissioning a directory that holds a protected path (`rm -rf .git`,
  `chmod .git`, `git clean -x`, `git stash -a`, `find -delete` whose name tests match a
  protected file, and `find`/`ls` feeding `xargs rm`);
- copies into a directory (`cp x .forge/local/`, `cp -r backup/. .git/`, rsync `src/`), and
  `tar -C`/`unzip -d` into or just above a protected path;
- a path or command name forge cannot know before it runs (`rm -rf $(...)`, `${VAR%x}`,
  `$(echo rm) -rf .git`), and expansions too large to check within the hook's time;
- a pipeline that mentions a protected location (`forge-goals`, `.forge/local`, ...) or
  runs inside one, and also runs anything not known to be read-only (`xargs rm`,
  `python -c`, `perl -e`, `bash -c`, heredocs, ...);
- forge's own hook-side entry points run by an agent (`forge ledger activate|charge`,
  `forge mode exit`, `forge init --force`, the hook launcher, `goal-ledger.sh`), and a
  command naming one that also runs anything unproven (a script it writes, `python -c`).
"""

from __future__ import annotations

import os
import re
import shlex

from forge_runtime.guard.paths import (
    FRONT_MATTER,
    MARKERS,
    Finding,
    Protected,
    expand,
    hit,
    holds,
    inside,
)
from forge_runtime.guard.shell_syntax import (
    LIFTED,
    SUBSHELL_CLOSE,
    SUBSHELL_OPEN,
    Simple,
    lift_substitutions,
    parse,
    strip_reserved,
)

READERS = frozenset({
    "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "rg", "ag", "ls", "stat",
    "wc", "file", "diff", "cmp", "sha256sum", "sha1sum", "sha512sum", "md5sum", "b2sum",
    "cksum", "readlink", "realpath", "basename", "dirname", "test", "[", "[[", "echo", "printf",
    "true", "false", "pwd", "cd", "pushd", "popd", "jq", "od", "xxd", "hexdump", "strings",
    "tree", "du", "df", "which", "type", "column", "cut", "tr", "nl", "fold", "base64",
    "sed", "date", "id", "whoami", "uname", "env", "printenv", "sleep", "exit", "set",
})
DESTROYERS = frozenset({"rm", "rmdir", "unlink", "shred", "mv", "srm"})
COPIERS = frozenset({"cp", "install", "rsync", "scp"})
REPERMISSIONERS = frozenset({"chmod", "chown", "chgrp", "chattr", "setfacl"})
SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish"})
FIND_ACTIONS = frozenset({"-delete", "-exec", "-execdir", "-ok", "-okdir", "-fprint",
                          "-fprint0", "-fprintf", "-fls"})
FIND_NAME_TESTS = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-regex",
                             "-iregex", "-lname", "-ilname"})
GIT_READERS = frozenset({
    "status", "log", "show", "diff", "rev-parse", "ls-files", "ls-tree", "cat-file", "blame",
    "grep", "describe", "shortlog", "reflog", "branch", "tag", "add", "commit", "fetch",
    "pull", "push", "merge", "rebase", "switch", "remote", "version", "help",
    "cherry-pick", "revert", "bisect", "notes", "name-rev", "for-each-ref", "show-ref",
    "merge-base", "rev-list", "count-objects", "fsck",
})
DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
LOOPS = frozenset({"for", "select"})
# Options of cp/install/rsync whose value is not a file operand.
COPY_VALUE_OPTIONS = frozenset({"-m", "--mode", "-o", "--owner", "-g", "--group", "-S",
                                "--suffix", "-e", "--rsh", "--exclude", "--include", "-f",
                                "--filter", "--chmod", "--chown"})
# Wrappers that run the rest of the line as a command; value = options taking an argument.
WRAPPERS = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U"}),
    "doas": frozenset({"-u", "-C"}),
    "env": frozenset({"-u", "-C", "-S", "--unset", "--chdir"}),
    "command": frozenset(), "builtin": frozenset(), "exec": frozenset({"-a"}),
    "coproc": frozenset(), "busybox": frozenset(), "toybox": frozenset(),
    "nohup": frozenset(), "time": frozenset({"-f", "-o"}), "nice": frozenset({"-n"}),
    "ionice": frozenset({"-c", "-n", "-p"}), "stdbuf": frozenset({"-i", "-o", "-e"}),
    "timeout": frozenset({"-s", "-k", "--signal", "--kill-after"}),
    "xargs": frozenset({"-I", "-i", "-n", "-P", "-d", "-L", "-l", "-s", "-E", "-e", "-a",
                        "--arg-file", "--delimiter", "--max-args", "--max-procs"}),
    "parallel": frozenset({"-j", "--jobs", "-n", "-N", "-S", "-I", "--delay", "--colsep"}),
    "setsid": frozenset(), "flock": frozenset({"-w", "--timeout", "-E"}),
    "strace": frozenset({"-o", "-e", "-p", "-s", "-u", "-E", "-a", "-P", "-b", "-I", "-O"}),
    "runuser": frozenset({"-u", "-g", "-G", "--user", "--group"}),
    "watch": frozenset({"-n", "--interval"}),
}
# Wrappers whose first operand is theirs (a duration, a lock file), not the command's.
WRAPPER_OPERAND = frozenset({"timeout", "flock"})
# Wrappers that hand their command arguments read from input, not written in the command.
ARGUMENT_FEEDERS = frozenset({"xargs", "parallel"})
# Besides the shells: commands that run the shell code they read on their input.
STDIN_RUNNERS = frozenset({"at", "batch"})
FORBIDDEN_FORGE = (("ledger", "activate"), ("ledger", "charge"), ("mode", "exit"))
_ASSIGNMENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*=")
_SUBSTITUTION = re.compile(r"\$\(|`|^\$$")
# `${NAME:-default}` and `${NAME-default}` (or `=`): evaluated like the shell does.
_DEFAULTED = re.compile(r"\$\{([A-Za-z_][A-Za-z0-9_]*)(:?)[-=]([^}]*)\}")
# `${NAME%/}`, `${#NAME}`, ...: a parameter expansion forge does not evaluate.
_PARAMETER_OPERATION = re.compile(r"\$\{[^}]*[^A-Za-z0-9_}][^}]*\}")
_VARIABLE = re.compile(r"\$(?:\{[A-Za-z_][A-Za-z0-9_]*\}|[A-Za-z_][A-Za-z0-9_]*)")
_LOOP_VALUES_LIMIT = 64
_PLAIN_WORD = re.compile(r"^[\w./~+,:@%-]*$")
# forge's hook-side entry points named anywhere in a command, even inside a script it writes
# or in an interpreter's code (`main(['mode', 'exit'])`).
_ENTRY_POINTS = re.compile(
    r"\bmode\W+exit\b|\bledger\W+(?:activate|charge)\b|\bmodes\.leave\b")
_GLOB = re.compile(r"[*?\[]")
_BRACE = re.compile(r"\{([^{}]*,[^{}]*)\}")
_WALK_LIMIT = 20_000
MAX_COMMAND = 200_000
# The host lets a PreToolUse hook through after 10 s: past these, a word is unknowable
# rather than expanded (`{a,b}` 24 times is 16 million paths; `/*/*/*/*/*/*/*` walks the disk).
_BRACE_VARIANTS_LIMIT = 256
_GLOB_LEVELS_LIMIT = 4
_TIME_BUDGET_SECONDS = 3.0


class _OutOfTime(Exception):
    """The analysis ran past its time budget: the command is refused, never let through."""


# A plain class rather than a dataclass, which would import `inspect` (about 5 ms) into
# the hook of every Bash call.
class _Context:
    """What the analysis knows while it walks a command: where it runs, which variables hold
    what, the protected paths, and how deeply shells are nested."""

    __slots__ = ("cwd", "start", "env", "protected", "depth", "loops", "links", "deadline")

    def __init__(self, cwd: str | None, env: dict[str, str], protected: list[Protected],
                 depth: int = 0) -> None:
        self.cwd = cwd
        self.start = cwd  # where the command starts; unpacking there is not refused
        self.env = env
        self.protected = protected
        self.depth = depth
        self.loops: dict[str, list[str]] = {}  # `for NAME in WORDS`: NAME takes each word
        self.links: dict[str, str] = {}  # symlinks the command itself makes: link -> target
        self.deadline = 0.0  # time.monotonic() past which the analysis gives up

    def nested(self) -> _Context:
        """The context of a shell run inside this one: same knowledge, one level deeper."""
        inner = _Context(self.cwd, self.env, self.protected, self.depth + 1)
        inner.start, inner.loops, inner.links = self.start, self.loops, self.links
        inner.deadline = self.deadline
        return inner


def analyse(command: str, cwd: str, env: dict[str, str],
            protected: list[Protected]) -> Finding | None:
    """The first reason to refuse `command`, or None when it touches no protected path.

    Reading costs about 2 s per megabyte here, and the host lets a hook that times out
    through, so a command longer than MAX_COMMAND is refused unread.
    """
    if len(command) > MAX_COMMAND:
        return Finding(f"is {len(command)} characters long, more than forge reads "
                       f"({MAX_COMMAND}); write long content with the Write tool instead")
    if "\0" in command:
        return Finding("contains a NUL byte, which shells drop or cut at in different ways, "
                       "so forge cannot tell what runs")
    import time

    # The hook's own PWD is not the Bash tool's: the command starts in the session's cwd.
    ctx = _Context(cwd, {**env, "PWD": cwd}, protected)
    ctx.deadline = time.monotonic() + _TIME_BUDGET_SECONDS
    try:
        return _analyse(command, ctx)
    except _OutOfTime:
        return Finding(f"takes forge longer than {_TIME_BUDGET_SECONDS:g} s to read, and the "
                       "host would let it through unread; split it into simpler commands")


def _analyse(command: str, ctx: _Context) -> Finding | None:
    if ctx.depth > 8:
        return Finding("nests shells too deeply for forge to follow")
    names_entry_point = _ENTRY_POINTS.search(command.lower()) is not None
    command, bodies = lift_substitutions(command)
    for body in bodies:
        finding = _analyse(body, ctx.nested())
        if finding:
            return finding
    pipelines = parse(command)
    if pipelines is None:
        if _mentions(command):
            return Finding("cannot be parsed (unbalanced quotes) and names a protected path")
        return None
    # A heredoc's body is the input of a command on another line: judge the whole text.
    heredoc_mention = "<<" in command and _mentions(command)
    outside: list[tuple[str | None, dict[str, str]]] = []
    for pipeline in pipelines:
        if pipeline == SUBSHELL_OPEN:
            outside.append((ctx.cwd, dict(ctx.env)))
            continue
        if pipeline == SUBSHELL_CLOSE:
            if outside:  # a `cd` or assignment in a subshell ends with it
                ctx.cwd, env = outside.pop()
                ctx.env.clear()
                ctx.env.update(env)
            continue
        outcome = _check_pipeline(pipeline, ctx)
        if isinstance(outcome, Finding):
            return outcome
        sensitive, unproven = outcome
        if unproven and (sensitive or heredoc_mention):
            return Finding(f"names a protected location and runs {unproven}, which forge "
                           "cannot prove read-only")
        if unproven and names_entry_point:
            return Finding(f"names forge's hook-side commands (`forge mode exit`, `forge "
                           f"ledger charge`) and runs {unproven}, which forge cannot prove "
                           "read-only")
    return None


def _mentions(text: str) -> bool:
    lowered = text.lower()
    return any(marker in lowered for marker in MARKERS)


def _check_pipeline(pipeline: list[Simple], ctx: _Context) -> Finding | tuple[bool, str | None]:
    """A Finding, or (does the pipeline name a protected place, its first unproven command)."""
    sensitive = False
    unproven: str | None = None
    finding = _check_xargs_feed(pipeline, ctx) or _check_shell_input(pipeline, ctx)
    if finding:
        return finding
    for simple in pipeline:
        for target in simple.writes:
            finding = _check_path(target, ctx, destructive=False, verb="writes to",
                                  must_know=True)
            if finding:
                return finding
        words = _assign(simple.words, ctx)
        if not words:
            continue
        outcome = _check_simple(words, ctx)
        if isinstance(outcome, Finding):
            return outcome
        reader, touches = outcome
        sensitive = sensitive or touches or _mentions(" ".join(simple.words + simple.writes))
        sensitive = sensitive or _in_sensitive_dir(ctx)
        if not reader and unproven is None:
            unproven = os.path.basename(words[0])
    return sensitive, unproven


def _assign(words: list[str], ctx: _Context) -> list[str]:
    """Record leading `NAME=value` words (later words may use them); return the rest."""
    index = 0
    while index < len(words) and _ASSIGNMENT.match(words[index]):
        name, _, value = words[index].partition("=")
        ctx.env[name] = value
        index += 1
    return words[index:]


def _in_sensitive_dir(ctx: _Context) -> bool:
    """Working inside a protected tree, or in `.forge/local` or the git dir beside one.

    From there a bare relative name (`state.md`, `forge-goals`) reaches a protected path
    through code forge cannot read. The project root is not counted, or nothing would run.
    """
    if ctx.cwd is None:
        return False
    for entry in ctx.protected:
        parent = os.path.dirname(entry.path)
        beside = parent == ctx.cwd and (entry.kind == FRONT_MATTER
                                        or os.path.basename(parent) == ".git")
        if beside or inside(ctx.cwd, entry.path):
            return True
    return False


def _check_simple(words: list[str], ctx: _Context) -> Finding | tuple[bool, bool]:
    """A Finding, or (is the command known read-only, does it name a protected path)."""
    words, via_xargs = _unwrap(strip_reserved(words))
    if not words:
        return True, False
    if "$" in words[0]:
        from string import Template

        # an unquoted expansion is split into words: `x='rm -rf'; $x .git` runs rm
        words = [*Template(words[0]).safe_substitute(ctx.env).split(), *words[1:]]
        if not words:
            return True, False
    name = os.path.basename(words[0])
    args = words[1:]
    if "$" in name or "`" in name:
        return _check_unknown_command(words[0], args, ctx)
    if name in DECLARERS:
        _assign([a for a in args if _ASSIGNMENT.match(a)], ctx)
        return True, False
    if name in LOOPS and len(args) >= 2 and args[1] == "in":
        ctx.loops[args[0]] = args[2:_LOOP_VALUES_LIMIT + 2]
        return True, _touches(args[2:], ctx)
    if name == "ln":
        _record_symlink(args, ctx)
    if (name in SHELLS or name == "su") and "-c" in args[:-1]:
        code_at = args.index("-c") + 1
        code = _positional(args[code_at], args[code_at + 1:])
        return _nested(code, ctx) or (True, False)
    if name == "eval":
        from string import Template

        return _nested(Template(" ".join(args)).safe_substitute(ctx.env), ctx) or (True, False)
    if name in ("cd", "pushd"):
        _change_dir(args, ctx)
        return True, False
    if name == "popd":
        _move_to(None, ctx)  # forge keeps no directory stack: unknown from here on
        return True, False
    forge_args = _forge_args(name, args)
    if forge_args is not None:
        outcome = _check_forge(forge_args)
        # `... | xargs forge`: the subcommand comes from the input, forge cannot read it
        return outcome if isinstance(outcome, Finding) or not via_xargs else (False, False)
    if name == "find":
        return _check_find(args, ctx)
    if name == "git":
        return _check_git(args, ctx)
    return _check_generic(name, args, ctx)


def _check_unknown_command(word: str, args: list[str], ctx: _Context) -> Finding | tuple:
    """A command whose name is a substitution or an unknown variable may be `rm`: its
    arguments are judged as a deletion would be."""
    candidates = _candidates(args)
    for candidate in candidates:
        finding = _check_path(candidate, ctx, destructive=True,
                              verb=f"runs `{word}`, a command forge cannot name before it runs, on")
        if finding:
            return finding
    return False, _touches(candidates, ctx)


def _record_symlink(args: list[str], ctx: _Context) -> None:
    """Remember `ln -s TARGET LINK`, so later words through LINK resolve to TARGET."""
    flags = "".join(a.lstrip("-") for a in args if a.startswith("-") and not a.startswith("--"))
    operands = [a for a in args if not a.startswith("-")]
    if ("s" not in flags and "--symbolic" not in args) or not 1 <= len(operands) <= 2 \
            or ctx.cwd is None:
        return
    target = operands[0]
    link = operands[1] if len(operands) == 2 else os.path.basename(target.rstrip("/"))
    link_path = expand(link, ctx.cwd, ctx.env, follow=False)
    if link_path is None:
        return
    if os.path.isdir(link_path) and not os.path.islink(link_path):
        link_path = os.path.join(link_path, os.path.basename(target.rstrip("/")))
    target_path = expand(target, os.path.dirname(link_path), ctx.env)
    if target_path is not None:
        ctx.links[link_path.rstrip(os.sep)] = target_path


def _through_links(path: str, ctx: _Context, follow: bool) -> str:
    """`path` with a symlink the command made earlier replaced by what it points to."""
    for link, target in ctx.links.items():
        if path == link and follow or path.startswith(link + os.sep):
            return os.path.realpath(target + path[len(link):])
    return path


def _unwrap(words: list[str]) -> tuple[list[str], bool]:
    """Strip `sudo`, `env`, `nohup`, `xargs` and the like down to the command they run;
    also say whether `xargs` runs it (with arguments read from its input)."""
    while words and os.path.basename(words[0]) in WRAPPERS:
        takes_value = WRAPPERS[os.path.basename(words[0])]
        rest = words[1:]
        while rest and (rest[0].startswith("-") or _ASSIGNMENT.match(rest[0])):
            option = rest.pop(0)
            if option.startswith("--split-string="):  # env -S 'rm -rf x' runs rm
                rest = _split(option.split("=", 1)[1]) + rest
            elif option in ("-S", "--split-string") and rest:
                rest = _split(rest.pop(0)) + rest
            elif option in takes_value and rest:
                rest.pop(0)
        if os.path.basename(words[0]) in WRAPPER_OPERAND and rest:
            rest.pop(0)
        if os.path.basename(words[0]) in ("nice",) and rest and rest[0].lstrip("-").isdigit():
            rest.pop(0)
        if os.path.basename(words[0]) in ARGUMENT_FEEDERS:
            rest = [word for word in rest if word not in (":::", "::::")]  # parallel's lists
            return rest or ["echo"], True  # xargs alone echoes its input
        words = rest
    return words, False


def _command_words(words: list[str]) -> tuple[list[str], bool]:
    """The command a simple command runs, read without recording its assignments (see
    `_unwrap`): for the pipeline-wide checks that look at each command before it runs."""
    return _unwrap(strip_reserved([word for word in words if not _ASSIGNMENT.match(word)]))


def _split(text: str) -> list[str]:
    """`text` split into words; a command forge cannot name when its quotes do not close."""
    try:
        return shlex.split(text)
    except ValueError:
        return [LIFTED]


def _check_xargs_feed(pipeline: list[Simple], ctx: _Context) -> Finding | None:
    """`find . -name x | xargs rm`: the paths xargs hands to a command that is not read-only
    come from the commands before it, so those are judged as if they deleted."""
    if not any(_xargs_writes(simple.words) for simple in pipeline):
        return None
    for simple in pipeline:
        words, via_xargs = _command_words(simple.words)
        if via_xargs or not words:
            continue
        if os.path.basename(words[0]) == "find":
            outcome = _check_find(words[1:], ctx, acting=True)
            if isinstance(outcome, Finding):
                return outcome
            continue
        if os.path.basename(words[0]) == "git" and "ls-files" in words \
                and ({"-i", "--ignored"} & set(words)):
            return Finding("lists git-ignored files (state.md among them) for xargs to hand "
                           "to a command that is not read-only")
        for word in _candidates(words[1:]):
            for path in _expansions(word, ctx):
                entry = path and hit(path, ctx.protected, destructive=True)
                if entry and not _at_or_above_start(path, ctx):
                    return Finding(f"lists {word} for xargs to hand to a command that is not "
                                   f"read-only, and {word} holds {entry.label}", entry)
    return None


def _check_shell_input(pipeline: list[Simple], ctx: _Context) -> Finding | None:
    """`echo 'rm -rf .git' | sh`, `bash <<< '...'`: the code a shell reads on its input,
    when it is written out in the command itself."""
    for index, simple in enumerate(pipeline):
        words, _ = _command_words(simple.words)
        name = os.path.basename(words[0]) if words else ""
        if name not in STDIN_RUNNERS and (name not in SHELLS or any(
                not arg.startswith("-") for arg in words[1:])):
            continue  # not a shell, or one running a script file
        code = list(simple.stdin)
        feeder = _command_words(pipeline[index - 1].words)[0] if index else []
        if feeder and os.path.basename(feeder[0]) in ("echo", "printf"):
            code.append(" ".join(a for a in feeder[1:] if a not in ("-e", "-n", "-en", "-ne"))
                        .replace("\\n", "\n"))
        for text in code:
            finding = _nested(text, ctx)
            if finding:
                return finding
    return None


def _xargs_writes(words: list[str]) -> bool:
    words, via_xargs = _command_words(words)
    if not via_xargs:
        return False
    name = os.path.basename(words[0])
    return name not in READERS or (name == "sed" and _sed_in_place(words[1:]))


def _at_or_above_start(path: str, ctx: _Context) -> bool:
    """Is `path` the directory the command starts in, or above it? Writing there is too
    ordinary to refuse (`tar xzf release.tgz`), and forge cannot see what lands where."""
    return ctx.start is not None and (path == ctx.start or holds(path, ctx.start))


def _positional(code: str, operands: list[str]) -> str:
    """`sh -c 'rm -rf "$1"' _ .git`: the code with `$0`..`$9`, `$@` and `$*` filled in from
    the operands after it (a plain word as is, so it also fits inside double quotes)."""
    def word(text: str) -> str:
        return text if _PLAIN_WORD.match(text) else shlex.quote(text)

    def value(match: re.Match) -> str:
        name = next(group for group in match.groups() if group)
        if name in ("@", "*"):
            return " ".join(word(operand) for operand in operands[1:])
        index = int(name)
        return word(operands[index]) if index < len(operands) else ""

    code = re.sub(r'"\$([@*])"', value, code)  # "$@": each operand its own word
    return re.sub(r"\$(?:\{(\d)\}|([0-9@*]))", value, code)


def _nested(code: str, ctx: _Context) -> Finding | None:
    return _analyse(code, ctx.nested())


def _change_dir(args: list[str], ctx: _Context) -> None:
    target = next((a for a in args if not a.startswith("-")), "~")
    if target == "-":
        target = ctx.env.get("OLDPWD", "$OLDPWD")
    known = ctx.cwd is not None or target.startswith(("/", "~"))
    if ctx.env.get("CDPATH") and not target.startswith(("/", "~", "./", "../")) \
            and target not in (".", ".."):
        known = False  # cd searches CDPATH first: the directory forge would join may not win
    _move_to(expand(target, ctx.cwd or os.sep, ctx.env) if known else None, ctx)


def _move_to(directory: str | None, ctx: _Context) -> None:
    """The shell is now in `directory` (None: somewhere forge cannot know)."""
    before, ctx.cwd = ctx.cwd, directory
    for name, value in (("OLDPWD", before), ("PWD", ctx.cwd)):
        if value is None:
            ctx.env.pop(name, None)  # unknown from here on, never a stale value
        else:
            ctx.env[name] = value


def _forge_args(name: str, args: list[str]) -> list[str] | None:
    if name == "forge":
        return args
    if name.startswith("python") and args[:2] == ["-m", "forge_runtime"]:
        return args[2:]
    return None


def _check_forge(args: list[str]) -> Finding | tuple[bool, bool]:
    words = [a for a in args if not a.startswith("-")]
    for forbidden in FORBIDDEN_FORGE:
        if tuple(words[:2]) == forbidden:
            return Finding(f"runs `forge {' '.join(forbidden)}`, which only forge's hooks or "
                           "a person may run")
    if words[:1] == ["init"] and "--force" in args:
        return Finding("runs `forge init --force`, which would overwrite the goal fields of "
                       "state.md")
    return True, False


def _candidates(args: list[str]) -> list[str]:
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


def _expansions(word: str, ctx: _Context, *, follow: bool = True) -> list[str | None]:
    """Every path a word can become after brace and glob expansion; None when unknowable.

    After a `cd` forge could not follow, only absolute words still name a known path.
    """
    import time

    if time.monotonic() > ctx.deadline:
        raise _OutOfTime
    if _too_wide(word):
        return [None]
    word = _DEFAULTED.sub(lambda match: _default(match, ctx.env), word)
    results: list[str | None] = []
    for variant in (b for looped in _loop_variants(word, ctx) for b in _braces(looped)):
        if ctx.cwd is None and not variant.startswith(("/", "~")):
            results.append(None)
            continue
        path = expand(variant, ctx.cwd or os.sep, ctx.env, follow=follow)
        if path is None and "$" in variant and not _SUBSTITUTION.search(variant):
            # Unknown here, but most likely unset in the Bash tool too: `$UNSET.git` is `.git`.
            results.append(None)
            from string import Template

            unset = _VARIABLE.sub("", Template(variant).safe_substitute(ctx.env))
            path = expand(unset, ctx.cwd or os.sep, ctx.env, follow=follow)
        if path is not None and _GLOB.search(variant):
            import glob  # only for a word with a pattern: most commands have none

            matched = glob.glob(path)
            results.extend(expand(m, os.sep, ctx.env, follow=follow) for m in matched)
            if matched:
                continue
        results.append(path)
    # `rm -rf link/` empties the directory a symlink points to, like the shell's own links
    follow = follow or word.endswith(("/", "/."))
    return [_through_links(path, ctx, follow) if path else path for path in results]


def _default(match: re.Match, env: dict[str, str]) -> str:
    """`${NAME:-word}`: NAME's value, or `word` when NAME is unset (or empty, with `:`)."""
    name, colon, default = match.groups()
    value = env.get(name)
    return default if value is None or (colon and not value) else value


def _loop_variants(word: str, ctx: _Context) -> list[str]:
    """`$d` inside `for d in a b; do ...` stands for each of `a` and `b` in turn."""
    variants = [word]
    for name, values in ctx.loops.items():
        escaped = re.escape(name)
        reference = re.compile(rf"\$(?:\{{{escaped}\}}|{escaped}(?![A-Za-z0-9_]))")
        if reference.search(word):
            variants = [reference.sub(lambda _, v=value: v, variant)
                        for variant in variants for value in values][:_LOOP_VALUES_LIMIT]
    return variants


def _too_wide(word: str) -> bool:
    """More brace variants or glob levels than forge can expand within the hook's time."""
    variants = 1
    for match in _BRACE.finditer(word):
        variants *= match.group(1).count(",") + 1
    levels = sum(1 for part in word.split("/") if _GLOB.search(part))
    return variants > _BRACE_VARIANTS_LIMIT or levels > _GLOB_LEVELS_LIMIT


def _braces(word: str) -> list[str]:
    match = _BRACE.search(word)
    if not match:
        return [word]
    head, tail = word[:match.start()], word[match.end():]
    return [out for part in match.group(1).split(",") for out in _braces(head + part + tail)]


def _check_path(word: str, ctx: _Context, *, destructive: bool, verb: str,
                follow: bool = True, must_know: bool = False) -> Finding | None:
    """Why touching `word` this way is refused, or None.

    `destructive`: destroying a directory above a protected path counts too.
    `must_know`: a path made by a command substitution is refused (it always is when
    destructive); ordinary commands may take such arguments (`kill $(pgrep x)`).
    """
    for path in _expansions(word, ctx, follow=follow):
        if path is None:
            if (destructive or must_know) and _too_wide(word):
                return Finding(f"{verb} a pattern with more brace or glob variants than forge "
                               "expands before it runs")
            if (destructive or must_know) and (_SUBSTITUTION.search(word)
                                               or _PARAMETER_OPERATION.search(word)):
                return Finding(f"{verb} a path made by a command substitution or a parameter "
                               "expansion, which forge cannot know before it runs")
            if ctx.cwd is None:
                return Finding(f"{verb} `{word}` after a `cd` to a directory forge cannot "
                               "know before it runs")
            continue
        entry = hit(path, ctx.protected, destructive=destructive)
        if entry and inside(path, entry.path):
            return Finding(f"{verb} {entry.label} ({word})", entry)
        if entry:
            return Finding(f"{verb} {word}, which holds {entry.label}", entry)
    return None


def _touches(words: list[str], ctx: _Context, *, follow: bool = True) -> bool:
    return any(
        path is not None and hit(path, ctx.protected, destructive=False) is not None
        for word in words for path in _expansions(word, ctx, follow=follow)
    )


def _check_generic(name: str, args: list[str], ctx: _Context) -> Finding | tuple[bool, bool]:
    candidates = _candidates(args)
    if name in DESTROYERS:
        verb = "moves" if name == "mv" else "deletes"
        removed = candidates
        if name == "mv":  # its destination is written like a copy's; its sources go away
            operands, into = _copy_operands(args)
            removed = operands if into else operands[:-1]
            finding = _check_copy(name, args, ctx)
            if isinstance(finding, Finding):
                return finding
        for word in removed:
            finding = _check_path(word, ctx, destructive=True, verb=verb, follow=False)
            if finding:
                return finding
        return False, _touches(candidates, ctx, follow=False)
    if name in COPIERS:
        return _check_copy(name, args, ctx)
    if name in ("tar", "unzip"):
        finding = _check_unpack(name, args, ctx)
        if finding:
            return finding
    if name in REPERMISSIONERS:
        # Recursive or not: a directory locked above a protected path locks the path too.
        for word in candidates:
            finding = _check_path(word, ctx, destructive=True, verb="re-permissions",
                                  must_know=True)
            if finding:
                return finding
    reader = name in READERS and not (name == "sed" and _sed_in_place(args))
    if not reader:
        for word in candidates:
            finding = _check_path(word, ctx, destructive=False, verb=f"runs {name} on")
            if finding:
                return _state_body_hint(finding)
    return reader, _touches(candidates, ctx)


def _check_copy(name: str, args: list[str], ctx: _Context) -> Finding | tuple[bool, bool]:
    """A copy reads its sources and writes its destination: into a directory (`-t DIR`, a
    trailing `/`, several sources or an existing directory) it writes each source's name
    there, and a directory's contents (`src/.`, rsync's `src/`) land in it directly."""
    operands, into = _copy_operands(args)
    whole = "--no-target-directory" in args or (name in ("cp", "install") and any(
        a.startswith("-") and not a.startswith("--") and "T" in a for a in args))
    if into is None and len(operands) >= 2:
        into, operands = operands[-1], operands[:-1]
    if into is None:
        written, as_dir = operands, False  # `install -d DIR`: the operand itself
    else:
        as_dir = not whole and (len(operands) > 1 or into.endswith("/") or any(
            path is not None and os.path.isdir(path) for path in _expansions(into, ctx)))
        written = [into if not as_dir or _copies_contents(name, source)
                   else os.path.join(into, os.path.basename(source.rstrip("/")))
                   for source in operands] or [into]
    if "--remove-source-files" in args:
        written += operands
    for word in written:
        finding = _check_path(word, ctx, destructive=as_dir or whole,
                              verb=f"runs {name} over", must_know=True)
        if finding:
            return finding
    return True, _touches(operands, ctx)


def _copy_operands(args: list[str]) -> tuple[list[str], str | None]:
    """The file operands of a copy, and its `-t DIR` / `--target-directory=DIR` if given."""
    operands: list[str] = []
    into = None
    position = 0
    while position < len(args):
        arg = args[position]
        position += 1
        if arg in ("-t", "--target-directory") and position < len(args):
            into = args[position]
            position += 1
        elif arg.startswith("--target-directory="):
            into = arg.split("=", 1)[1]
        elif arg in COPY_VALUE_OPTIONS:
            position += 1
        elif not arg.startswith("-"):
            operands.append(arg)
    return operands, into


def _copies_contents(name: str, source: str) -> bool:
    return source.endswith("/.") or (name == "rsync" and source.endswith("/"))


def _check_unpack(name: str, args: list[str], ctx: _Context) -> Finding | None:
    """An archive forge cannot see into, unpacked into or above a protected path.

    Unpacking where the command starts (`tar xzf release.tgz`) is let through: that is
    ordinary work, and an archive built to overwrite the ledger is deliberate tampering.
    """
    if name == "tar":
        old_style = args[:1] and not args[0].startswith("-") and "x" in args[0]
        if not (old_style or "--extract" in args or "--get" in args or any(
                a.startswith("-") and not a.startswith("--") and "x" in a for a in args)):
            return None
        options = ("-C", "--directory")
    else:
        if any(a in ("-l", "-t", "-v", "-Z") for a in args):
            return None
        options = ("-d",)
    into = next((args[i + 1] for i, a in enumerate(args[:-1]) if a in options), None)
    into = next((a.split("=", 1)[1] for a in args if a.startswith("--directory=")), into)
    for path in _expansions(into or ".", ctx):
        entry = path and hit(path, ctx.protected, destructive=True)
        if entry and not _at_or_above_start(path, ctx):
            return Finding(f"runs {name} to unpack into {into or path}, which holds "
                           f"{entry.label}", entry)
    return None


def _sed_in_place(args: list[str]) -> bool:
    return any(a.startswith(("-i", "--in-place")) or (a.startswith("-") and not
               a.startswith("--") and "i" in a) for a in args)


def _state_body_hint(finding: Finding) -> Finding:
    if finding.entry and finding.entry.kind == FRONT_MATTER:
        return Finding(finding.message + "; edit its checklist with the Edit tool instead",
                       finding.entry)
    return finding


def _check_find(args: list[str], ctx: _Context, *,
                acting: bool = False) -> Finding | tuple[bool, bool]:
    """`acting`: what find prints is acted on (`find ... | xargs rm`)."""
    starts = []
    for arg in args:
        if arg.startswith(("-", "(", "!")):
            break
        starts.append(arg)
    starts = starts or ["."]
    acting = acting or any(a in FIND_ACTIONS for a in args)
    if not acting:
        return True, _touches(starts, ctx)
    patterns = [args[i + 1] for i, a in enumerate(args[:-1]) if a in FIND_NAME_TESTS]
    for start in starts:
        for path in _expansions(start, ctx):
            if path is None:
                continue
            entry = hit(path, ctx.protected, destructive=False)
            if entry:
                return Finding(f"runs find -delete/-exec inside {entry.label} ({start})", entry)
            for candidate in ctx.protected:
                if holds(path, candidate.path) and _find_may_match(candidate.path, patterns):
                    return Finding(f"runs find -delete/-exec over {candidate.label} ({start})",
                                   candidate)
    return False, _touches(starts, ctx)


def _find_may_match(root: str, patterns: list[str]) -> bool:
    """Could a find name test match `root` or anything under it? Unsure means yes."""
    from fnmatch import fnmatch

    if not patterns or any("/" in p or p.startswith("^") for p in patterns):
        return True
    names = [os.path.basename(root)]
    for count, (_, dirs, files) in enumerate(os.walk(root)):
        names.extend(dirs + files)
        if count > _WALK_LIMIT or len(names) > _WALK_LIMIT:
            return True
    return any(fnmatch(name, pattern) for name in names for pattern in patterns)


def _check_git(args: list[str], ctx: _Context) -> Finding | tuple[bool, bool]:
    rest = list(args)
    while rest and rest[0].startswith("-"):
        option = rest.pop(0)
        if option == "-C" and rest:
            _change_dir([rest.pop(0)], ctx)
        elif option == "-c" and rest:
            rest.pop(0)
    if not rest:
        return True, False
    sub, operands = rest[0], rest[1:]
    if sub == "stash" and operands[:1] in (["push"], ["save"]):
        operands = operands[1:]
    outputs = [a.split("=", 1)[1] for a in operands if a.startswith("--output=")]
    outputs += [operands[i + 1] for i, a in enumerate(operands[:-1]) if a == "--output"]
    for word in outputs:
        finding = _check_path(word, ctx, destructive=False, verb=f"runs git {sub} writing",
                              must_know=True)
        if finding:
            return finding
    flags = "".join(a.lstrip("-") for a in operands if a.startswith("-") and
                    not a.startswith("--"))
    sweeping = (sub == "clean" and ("x" in flags or "X" in flags)) or (
        sub == "stash" and ("a" in flags or "--all" in operands))
    if sweeping:
        patterns = {operands[i + 1] for i, a in enumerate(operands[:-1])
                    if a in ("-e", "--exclude")}
        paths = [a for a in operands if not a.startswith("-") and a not in patterns] or ["."]
        for word in paths:
            finding = _check_path(word, ctx, destructive=True, verb=f"runs git {sub} over")
            if finding:
                return finding
    if sub in GIT_READERS:
        return True, _touches(_candidates(operands), ctx)
    return _check_generic(f"git {sub}", operands, ctx)
