"""What the shell analysis knows at one point of a command, and how a word becomes paths.

The state is what bash would carry from one command to the next: the directories the
shell may be in (a `cd` can fail, and a command after `&&` or `||` may not run, so there
can be several), the variables it knows, the glob options it turned on, and the symlinks
and files the command made itself. Every check of a path runs against each possible
directory; a value forge cannot know is None, and `check_path` decides what a command may
not do with one: write, delete or re-permission, from a directory that holds a protected
path.

The end of the module holds what every command model asks of its own operands (which words
name files, its options, a file it writes or deletes, code it runs for you), so no model
imports another, nor the walk, to ask. Code a program runs for you is judged by the walk's
child shell, which the walk hands down on the Context (`ctx.child`).
"""

import os

from forge_runtime import safeio
from forge_runtime.guard.shell import lexer as shell_lexer
from forge_runtime.guard.shell import words as shell_words
from forge_runtime.guard.shell.lexer import is_word_char
from forge_runtime.guard.shell.syntax import LIFTED
from forge_runtime.protected.paths import (
    FRONT_MATTER,
    MARKERS,
    TREE,
    Finding,
    Protected,
    front_matter,
    hit,
    holds,
    inside,
)

UNKNOWN_VALUE = "`?`"  # what a lifted `$(...)` leaves; a variable holding it is unknown
DIRECTORIES_LIMIT = 8  # possible working directories followed before the cwd is unknown
# Variables the Bash tool inherits exactly as the hook does. Every other one may differ
# (the launcher sets PYTHONPATH for the hook only; the host gives hooks their own
# CLAUDE_* names), so it is valued only when the command itself sets it.
SHARED_ENV = ("HOME", "USER", "LOGNAME", "TMPDIR")
_GLOB_CHARS = "*?["
_GLOB_LEVELS_LIMIT = 4
GLOB_ENTRIES_LIMIT = 20_000  # directory entries (GLOB_COST per pattern) one command may list
GLOB_COST = 10
WORDS_LIMIT = 20_000  # words one command may have resolved (each up to VARIANTS_LIMIT paths)
_PATHS_LIMIT = 512


class OutOfTime(Exception):
    """The analysis ran past its time budget: the command is refused, never let through."""


# A plain class rather than a dataclass, which would import `inspect` (about 5 ms) into
# the hook of every Bash call.
class Context:
    """The state of the shell at one point of the command (see the module docstring)."""

    __slots__ = ("cwds", "env", "protected", "depth", "loops", "links", "written", "globs",
                 "runs_code", "deadline", "fallible", "cache", "stdin", "glob_budget",
                 "paths_budget", "feed", "made", "unproven", "effects", "probed", "git_minus",
                 "child")

    def __init__(self, cwd: str, env: dict[str, str | None],
                 protected: list[Protected]) -> None:
        self.cwds: tuple[str | None, ...] = (cwd,)
        self.env = env
        self.protected = protected
        self.depth = 0
        self.loops: dict[str, list[str]] = {}  # `for NAME in WORDS`: NAME takes each word
        # symlinks the command itself makes: link -> target (None: a target forge cannot
        # know; the link ANYWHERE: one made where forge cannot say)
        self.links: dict[str, str | None] = {}
        self.written: dict[str, str] = {}  # files it writes with text forge can read
        self.globs: frozenset[str] = frozenset()  # shell options that change globbing
        self.runs_code = False  # a variable set that makes programs run code (GIT_EDITOR=...)
        self.deadline = 0.0  # time.monotonic() past which the analysis gives up
        self.fallible = False  # did the last command change state in a way that can fail
        self.cache: dict[tuple, object] = {}  # plain words already resolved, and the like
        self.stdin: str | None = None  # the file the current command reads on `<`
        self.glob_budget = GLOB_ENTRIES_LIMIT  # directory entries globbing may still list
        self.paths_budget = WORDS_LIMIT  # words it may still resolve to paths
        # What the current command reads on its input: here-strings, `<` files, and the
        # words of the command before it in its pipeline (None: first in it).
        self.feed: tuple[list[str], list[str], list[str] | None] = ([], [], None)
        self.made: set[str] = set()  # files it writes with content forge cannot know
        self.unproven = 0  # commands met so far whose effects forge does not model
        self.effects = 0  # commands that may change git's state (HEAD, index, refs, files)
        self.probed: list[str] = []  # git commands allowed on what git said beforehand
        self.git_minus = False  # `git checkout -b X` ran: `-` is the commit HEAD is at
        # The walk's judge of code run in a child shell, `child(code, ctx)` (walk.py sets it):
        # a command model asks it through `run_for_you` below without importing the walk.
        self.child = None

    def snapshot(self) -> tuple:
        return self.cwds, dict(self.env), self.globs

    def restore(self, state: tuple) -> None:
        self.cwds, env, self.globs = state
        self.env.clear()
        self.env.update(env)

    def move_to(self, directories: list[str | None]) -> None:
        """The shell is now in one of `directories` (None: somewhere forge cannot know)."""
        before = self.cwds
        self.cwds = _bounded(directories)
        for name, values in (("OLDPWD", before), ("PWD", self.cwds)):
            if len(values) == 1 and values[0] is not None:
                self.env[name] = values[0]
            else:
                self.env.pop(name, None)  # unknown from here on, never a stale value


def union(first: tuple, second: tuple) -> tuple:
    """A state the shell may be in when it may be in either: a variable that differs is
    unknown, every directory is possible, every glob option may be on."""
    cwds = _bounded([*first[0], *second[0]])
    env = {name: first[1][name] if first[1][name] == second[1][name] else UNKNOWN_VALUE
           for name in first[1].keys() & second[1].keys()}  # a name in one only: unknown
    return cwds, env, first[2] | second[2]


def _bounded(directories: list[str | None]) -> tuple[str | None, ...]:
    unique = tuple(dict.fromkeys(directories))
    return unique if len(unique) <= DIRECTORIES_LIMIT else (None,)


def shell_env(env: dict[str, str], cwd: str) -> dict[str, str | None]:
    """The variables forge may value at the start of a Bash command (see SHARED_ENV)."""
    # A shared name the hook does not have, the Bash tool does not have either: unset.
    known: dict[str, str | None] = {name: env.get(name) for name in SHARED_ENV}
    known["PWD"] = cwd  # the hook's own PWD is not the Bash tool's
    return known


_PROTECTED_DIRS = (".git", ".forge")


def mentions(text: str) -> bool:
    """Does `text` name a protected location (`forge-goals`, `.forge/local`, `.git`, ...)?"""
    lowered = text.lower()
    return any(marker in lowered for marker in MARKERS) or names_protected_dir(lowered)


def names_protected_dir(text: str) -> bool:
    """`.git` or `.forge` as a path component, not part of a longer name (`.github`,
    `.gitignore`, `x.git`): neither a word character (re's `\\w`), `.` nor `-` beside it."""
    for name in _PROTECTED_DIRS:
        start = text.find(name)
        while start != -1:
            after = start + len(name)
            if (start == 0 or not _in_name(text[start - 1])) and \
                    (after == len(text) or not _in_name(text[after])):
                return True
            start = text.find(name, start + 1)
    return False


def _in_name(char: str) -> bool:
    return is_word_char(char) or char in ".-"


def check_deadline(ctx: Context) -> None:
    import time

    if time.monotonic() > ctx.deadline:
        raise OutOfTime


def expansions(word: str, ctx: Context, *, follow: bool = True) -> list[str | None]:
    """Every path `word` can name, from every directory the shell may be in, after brace,
    sequence, `~`, parameter and glob expansion; None for one forge cannot know."""
    check_deadline(ctx)
    plain = "$" not in word and not any(char in word for char in _GLOB_CHARS)
    key = (word, follow, ctx.cwds, tuple(ctx.links.items()) if ctx.links else ())
    if plain and key in ctx.cache:
        return ctx.cache[key]
    results: list[str | None] = []
    ctx.paths_budget -= 1
    if ctx.paths_budget < 0:
        return [None]  # more words than forge resolves in one command: unknown
    for variant in loop_variants(word, ctx):
        for text in shell_words.values(variant, ctx.env):
            if text is None or not text:
                results.append(None)
                continue
            for cwd in ([None] if text.startswith("/") else ctx.cwds):
                if cwd is None and not text.startswith("/"):
                    results.append(None)
                    continue
                results.extend(_paths(text, cwd, ctx, follow))
        if len(results) > _PATHS_LIMIT:
            return [None]
    # `rm -rf link/` empties the directory a symlink points to, like the shell's own links
    follow = follow or word.endswith(("/", "/."))
    results = [_through_links(path, ctx, follow) if path else path for path in results]
    if plain:
        ctx.cache[key] = results
    return results


def loop_variants(word: str, ctx: Context) -> list[str]:
    """`$d` inside `for d in a b; do ...` stands for each of `a` and `b` in turn."""
    variants = [word]
    if "$" not in word:
        return variants
    for name, values in ctx.loops.items():
        if name in word:
            variants = [variant.replace("${" + name + "}", value).replace("$" + name, value)
                        for variant in variants for value in values][:_PATHS_LIMIT]
    return variants


def _paths(text: str, cwd: str | None, ctx: Context, follow: bool) -> list[str | None]:
    joined = text if cwd is None else os.path.join(cwd, text)
    joined = proc_self(joined, ctx)
    if joined is None or shell_words.SELF in joined:
        return [None]
    if not any(char in joined for char in _GLOB_CHARS):
        return [_resolve(joined, follow)]
    return _glob(joined, ctx, follow)


def proc_self(path: str, ctx: Context) -> str | None:
    """`/proc/self/cwd/...` (also `$$`, `$BASHPID`, `thread-self`) is the shell's own cwd,
    not the hook's; another process's cwd, root or descriptors cannot be known."""
    if not path.startswith(("/proc/", "/dev/fd", "//proc/")):
        return path
    parts = [part for part in path.split("/") if part not in ("", ".")]
    if parts[:1] == ["dev"]:
        return None
    if len(parts) < 3 or parts[2] not in ("cwd", "root", "fd", "map_files"):
        return path
    if parts[1] not in ("self", "thread-self", shell_words.SELF) or parts[2] in ("fd",
                                                                               "map_files"):
        return None
    if parts[2] == "root":
        return "/" + "/".join(parts[3:])
    cwd = ctx.cwds[0] if len(ctx.cwds) == 1 else None
    return None if cwd is None else os.path.join(cwd, *parts[3:])


def _resolve(path: str, follow: bool) -> str:
    if follow or not os.path.islink(path.rstrip(os.sep)) or path.endswith(os.sep):
        return os.path.realpath(path)
    return os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))


def _glob(pattern: str, ctx: Context, follow: bool, depth: int = 0) -> list[str | None]:
    """What a pattern matches now, under the glob options the command turned on, plus the
    symlinks the command made itself; the pattern as it is when nothing matches. The walk
    lists at most GLOB_ENTRIES_LIMIT directory entries for the whole command: past that,
    the word is unknown."""
    levels = sum(1 for part in pattern.split("/") if any(c in part for c in _GLOB_CHARS))
    if levels > _GLOB_LEVELS_LIMIT or "nocaseglob" in ctx.globs or "extglob" in ctx.globs \
            or ("globstar" in ctx.globs and "**" in pattern) or depth > 3:
        return [None]
    ctx.glob_budget -= GLOB_COST  # every glob costs a walk's setup, even one that finds nothing
    matches = _walk_pattern(pattern, ctx) if ctx.glob_budget >= 0 else None
    if matches is None:
        return [None]
    found: list[str | None] = [_resolve(match, follow) for match in matches]
    found.extend(_linked_matches(pattern, ctx, follow, depth))
    return found or [_resolve(pattern, follow)]


def _walk_pattern(pattern: str, ctx: Context) -> list[str] | None:
    """The existing paths `pattern` matches, component by component as bash globs (a
    leading `.` is matched only by a pattern that starts with one, unless dotglob); None
    when the walk would list more entries than the command's budget."""
    from fnmatch import fnmatchcase

    hidden = "dotglob" in ctx.globs
    current = ["/"]
    for part in pattern.split("/"):
        if part in ("", "."):
            continue
        if not any(char in part for char in _GLOB_CHARS):
            current = [os.path.join(base, part) for base in current]
            continue
        found = []
        for base in current:
            try:
                with os.scandir(base) as entries:
                    for entry in entries:
                        ctx.glob_budget -= 1
                        if ctx.glob_budget < 0:
                            return None
                        name = entry.name
                        if name.startswith(".") and not (hidden or part.startswith(".")):
                            continue
                        if fnmatchcase(name, part):
                            found.append(os.path.join(base, name))
            except OSError:
                continue
        check_deadline(ctx)
        current = found
        if len(current) > _PATHS_LIMIT:
            return None
    return [path for path in current if os.path.lexists(path)]


def _linked_matches(pattern: str, ctx: Context, follow: bool,
                    depth: int) -> list[str | None]:
    """A pattern's matches through a symlink the same command made before it (it does not
    exist yet when forge reads the command): `ln -s .git L; rm -rf L*/forge-goals`."""
    from fnmatch import fnmatchcase

    parts = os.path.normpath(pattern).split("/")
    found: list[str | None] = []
    for link, target in list(ctx.links.items()) + [(p, p) for p in ctx.written]:
        link_parts = link.split("/")
        if len(link_parts) > len(parts):
            continue
        if all(fnmatchcase(name, part) for name, part in zip(link_parts, parts, strict=False)):
            rest = "/".join(parts[len(link_parts):])
            if target is None:
                found.append(None)
                continue
            found.extend(_glob(os.path.join(target, rest), ctx, follow, depth + 1) if rest
                         else [target])
    return found


ANYWHERE = ""  # the key of ctx.links for a link made where forge cannot say: every path
_LINK_HOPS = 8


def made_link(link: str | None, target: str | None, ctx: Context) -> None:
    """The command makes a symlink at `link` (None: somewhere forge cannot say) pointing at
    `target` (None: at what forge cannot know). A later path through it is read through
    it, or is unknown: `ln -sr .git ../x && rm -rf ../x/forge-goals`."""
    link = ANYWHERE if link is None else os.path.normpath(link)
    ctx.links.pop(link, None)  # the newest last: it is the one a later path meets
    ctx.links[link] = None if target is None else os.path.normpath(target)


def _through_links(path: str, ctx: Context, follow: bool) -> str | None:
    """`path` with a symlink the command made earlier replaced by what it points to (each
    hop, a link to a link too); None through one whose target or place forge cannot know."""
    for _ in range(_LINK_HOPS):
        for link, target in reversed(ctx.links.items()):
            if path == link and follow or path.startswith(link + os.sep):
                if target is None:
                    return None
                path = os.path.realpath(target + path[len(link):])
                break
        else:
            return path
    return None


def risky_unknown(word: str, ctx: Context) -> bool:
    """May a path forge cannot value reach a protected one? Yes from a directory forge
    cannot know or one that holds (or is inside) a protected path, and anywhere when the
    word's fixed text names a protected location or the command made a symlink forge cannot
    follow."""
    if mentions(shell_words.literal(word)) or None in ctx.links.values():
        return True  # a link it made may lead anywhere, a protected path too
    return any(directory is None or any(inside(directory, entry.path) or
                                        holds(directory, entry.path)
                                        for entry in ctx.protected)
               for directory in ctx.cwds)


def check_path(word: str, ctx: Context, *, destructive: bool, verb: str,
               follow: bool = True, must_know: bool = False) -> Finding | None:
    """Why touching `word` this way is refused, or None.

    `destructive`: destroying a directory above a protected path counts too.
    `must_know`: the command writes there (or destroys it): a path forge cannot value is
    refused where it could reach a protected one. Other commands may take such arguments
    (`kill $(pgrep x)`).
    """
    for path in expansions(word, ctx, follow=follow):
        if path is not None and (must_know or destructive):
            ctx.made.add(path)
            if ".git" in path.split(os.sep):
                ctx.effects += 1  # refs, index, config: what git reads later
        if path is None:
            if (destructive or must_know) and risky_unknown(word, ctx):
                return Finding(f"{verb} `{word}`, a path forge cannot know before it runs "
                               "(a substitution, an unknown variable or directory, or an "
                               "expansion too large to check), where it could reach a "
                               "protected path")
            continue
        entry = hit(path, ctx.protected, destructive=destructive)
        if entry and inside(path, entry.path):
            return Finding(f"{verb} {entry.label} ({word})", entry)
        if entry:
            return Finding(f"{verb} {word}, which holds {entry.label}", entry)
    return None


def touches(words: list[str], ctx: Context, *, follow: bool = True) -> bool:
    return any(
        path is not None and hit(path, ctx.protected, destructive=False) is not None
        for word in words for path in expansions(word, ctx, follow=follow)
    )


def in_sensitive_dir(ctx: Context) -> bool:
    """Working inside a protected tree, in `.forge/local` or a host directory (`.claude`,
    `~/.claude`: one that holds a protected file judged by its content), or in the git
    dir beside a protected path.

    From there a bare relative name (`state.md`, `settings.json`) reaches a protected path
    through code forge cannot read. The project root and the home are not counted (they
    hold `.mcp.json` and `~/.claude.json`), or nothing would run.
    """
    key = ("sensitive", ctx.cwds)
    if key not in ctx.cache:
        ctx.cache[key] = _sensitive(ctx)
    return bool(ctx.cache[key])


def _sensitive(ctx: Context) -> bool:
    for cwd in ctx.cwds:
        if cwd is None:
            continue
        for entry in ctx.protected:
            if not (entry.path.startswith(cwd) or cwd.startswith(entry.path)):
                continue  # neither beside it nor inside it
            parent = os.path.dirname(entry.path)
            name = os.path.basename(parent)
            beside = parent == cwd and (entry.kind == FRONT_MATTER or name == ".git" or (
                entry.kind != TREE and name.startswith(".")))
            if beside or inside(cwd, entry.path):
                return True
    return False


# -- what a command's words do: the questions every command model asks ----------------------

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


# What an option does with its value, in the per-tool tables of options that write a file
# or run a program (each family's OPTION_EFFECTS, git's per subcommand): `check_options`
# reads any tool's arguments against its table. An option of the table with no effect
# (READS) is one whose name would otherwise read as an abbreviation of one that has.
WRITES = "writes"  # the value is a file it writes
WRITES_INTO = "writes into"  # the value is a directory it writes files into
RUNS = "runs"  # the value is a program or shell code it runs
RUNS_OPTIONAL = "runs (optional)"  # the same, a value only when attached (`-Ocmd`, `--x=cmd`)
READS = None


def option_effects(args: list[str], table: dict) -> list[tuple[str, str, str | None]]:
    """(option, effect, value) for each option of `args` that `table` says writes or runs:
    `--long=VALUE`, `--long VALUE`, `-xVALUE`, `-x VALUE`, `x` inside a cluster (`-nO...`),
    and a single-dash word named whole (`-fprint FILE`). getopt_long and git's
    parse-options take a unique prefix of a long option for it, so any prefix of one that
    writes or runs counts as it, unless the table names the prefix itself."""
    found = []
    position = 0
    while position < len(args):
        arg = args[position]
        position += 1
        if arg == "--":
            break
        if not arg.startswith("-") or arg == "-":
            continue
        name, equals, value = arg.partition("=")
        option = name if name in table else None
        if option is None and arg.startswith("--") and len(name) > 2:
            option = next((known for known in table if table[known] is not READS and
                           known.startswith(name)), None)
        if option is None and not arg.startswith("--"):
            for index, letter in enumerate(arg[1:], start=1):
                if "-" + letter in table:
                    option, equals, value = "-" + letter, "", arg[index + 1:]
                    break
            if option is None:
                continue
            equals = "=" if value else ""
        effect = table.get(option)
        if effect is READS:
            continue
        if effect == RUNS_OPTIONAL:
            found.append((option, effect, value if equals else None))
            continue
        if not equals and position < len(args):
            value, position = args[position], position + 1
        found.append((option, effect, value))
    return found


def check_options(tool: str, args: list[str], table: dict | None,
                  ctx: Context) -> Finding | None:
    """The files `tool`'s options write and the code they run, read from its table: a file
    written is checked as any write, code as code it runs for you."""
    if not table:
        return None
    for option, effect, value in option_effects(args, table):
        if effect in (RUNS, RUNS_OPTIONAL):
            finding = value is not None and run_for_you(value, ctx, f"{tool} {option}")
        elif value:
            finding = check_write(value, ctx, verb=f"runs {tool} {option}" + (
                " writing into" if effect == WRITES_INTO else " writing"))
        else:
            finding = None
        if finding:
            return finding
    return None


def spelled_out(args: list[str], long_options: tuple[str, ...]) -> list[str]:
    """`args` with each long option given as a unique prefix (`--sym`, `--target=D`, as
    getopt_long takes them) written in full; an ambiguous or unknown one as it is."""
    out = []
    for arg in args:
        if arg == "--":
            return out + args[len(out):]
        name, equals, value = arg.partition("=")
        if arg.startswith("--") and name not in long_options:
            matches = [option for option in long_options if option.startswith(name)]
            if len(matches) == 1:
                arg = matches[0] + equals + value
        out.append(arg)
    return out


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
    try:
        with safeio.reader(path, encoding="utf-8", newline="", follow_links=True) as handle:
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
        with safeio.reader(paths[0], encoding="utf-8", errors="replace",
                           follow_links=True) as handle:
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
