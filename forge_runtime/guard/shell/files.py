"""What each command forge knows does to its operands: which it writes, deletes, unpacks into.

The family of the file tools, answering for each the question every model answers (see
the table in walk.py): a Finding, or (are the command's effects modelled, does it name a protected
path). "Modelled" means every file it writes was checked, so it may run even beside a
protected location (`touch .forge/local/notes.md`); anything else is code forge cannot
prove read-only. Readers that
can write (`sed w`, `xxd IN OUT`, `sort -o`, `tree -o`), archivers (`tar -C`, `unzip -d`,
`zip -m`, `gzip -r`, `cpio`), copies (`cp --parents`, `rsync --delete`, links made by
`cp -l`/`-s`, `ln -t`, `rsync --link-dest`), `find -exec`, what `xargs` runs (its input
read when forge can) and forge's own entry points are modelled here; git in git.py,
archivers and `patch` in archives.py (imported only when such a command runs).
"""

import os

from forge_runtime.guard.shell import lexer as shell_lexer
from forge_runtime.guard.shell import words as shell_words
from forge_runtime.guard.shell.lexer import is_word_char, quote
from forge_runtime.guard.shell.state import (
    RUNS,
    WRITES,
    WRITES_INTO,
    Context,
    candidates,
    check_destroy,
    check_path,
    check_write,
    expansions,
    made_link,
    options,
    proc_self,
    risky_unknown,
    small_text,
    spelled_out,
    touches,
)
from forge_runtime.guard.shell.syntax import LIFTED
from forge_runtime.protected.paths import (
    FRONT_MATTER,
    HOST_ENTRY_POINTS,
    Finding,
    hit,
    holds,
    inside,
)

READERS = frozenset({
    "cat", "head", "tail", "less", "more", "grep", "egrep", "fgrep", "ag", "ls", "stat",
    "wc", "file", "diff", "cmp", "sha256sum", "sha1sum", "sha512sum", "md5sum", "b2sum",
    "cksum", "readlink", "realpath", "basename", "dirname", "test", "[", "[[", "echo", "printf",
    "true", "false", "pwd", "jq", "od", "hexdump", "strings", "du", "df", "which", "type",
    "column", "cut", "tr", "nl", "fold", "base64", "date", "id", "whoami", "uname",
    "printenv", "sleep", "exit", "return", ":", "wait", "kill", "comm", "paste", "rev",
    "expand", "unexpand", "fmt", "seq", "yes", "nproc", "hostname", "locale", "getconf",
    "tac", "zcat", "history", "shift", "break", "continue",
})
DESTROYERS = frozenset({"rm", "rmdir", "unlink", "shred", "srm"})
COPIERS = frozenset({"cp", "install", "rsync", "scp", "mv"})
REPERMISSIONERS = frozenset({"chmod", "chown", "chgrp", "chattr", "setfacl"})
# Writers of every operand (after their options), and the options that take a value.
WRITERS = {"touch": "dtr", "mkdir": "m", "truncate": "sr", "tee": "", "mkfifo": "m",
           "mknod": "m", "ln": "St", "link": ""}
FIND_NAME_TESTS = frozenset({"-name", "-iname", "-path", "-ipath", "-wholename", "-regex",
                             "-iregex", "-lname", "-ilname"})
FIND_OPERATORS = frozenset({"-o", "-or", "!", "-not", ",", "(", ")", "-prune"})
FORBIDDEN_FORGE = (("ledger", "activate"), ("ledger", "charge"), ("mode", "exit"),
                   ("sandbox", "disable"))
COPY_VALUE_OPTIONS = frozenset({"-m", "--mode", "-o", "--owner", "-g", "--group", "-S",
                                "--suffix", "-e", "--rsh", "--exclude", "--include", "-f",
                                "--filter", "--chmod", "--chown"})
_WALK_LIMIT = 20_000


def remember_text(target: str, words: list[str], ctx: Context, appends: bool) -> None:
    """`echo 'code' > x.sh`: keep the text, so that a later `sh x.sh` can be read."""
    paths = expansions(target, ctx)
    if len(paths) != 1 or paths[0] is None:
        return
    escapes = words[0] == "printf" or "-e" in words[1:2]
    text = " ".join(_unescaped(word) if escapes else word
                    for word in words[1:] if word not in ("-e", "-n")) + "\n"
    ctx.written[paths[0]] = (ctx.written.get(paths[0], "") if appends else "") + text
    ctx.made.discard(paths[0])


# ln's long options, for the unique prefixes getopt_long takes for them (`--sym`, `--target`).
_LN_LONG = ("--backup", "--directory", "--force", "--interactive", "--logical",
            "--no-dereference", "--no-target-directory", "--physical", "--relative",
            "--suffix", "--symbolic", "--target-directory", "--verbose")


def _check_writer(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    if name in ("ln", "link"):
        args = spelled_out(args, _LN_LONG)
    operands, found = options(args, WRITERS[name], frozenset({"--target-directory",
                                                              "--suffix", "-S"}))
    appends = name == "tee" and any(option in ("-a", "--append") for option, _ in found)
    if name in ("ln", "link"):
        into = [value for option, value in found if option in ("-t", "--target-directory")]
        links = [os.path.join(into[-1], os.path.basename(word.rstrip("/")))
                 for word in operands] if into else []
        symbolic = any(option in ("-s", "--symbolic") for option, _ in found)
        made = _symlinks_made(operands, found, ctx) if symbolic else []  # as things stand
        for word in operands + links:  # a hard link to a protected file is that file
            finding = check_path(word, ctx, destructive=False, verb="links", must_know=True)
            if finding:
                return finding
        for link, target in made:
            made_link(link, target, ctx)
        return True, touches(operands, ctx)
    for word in operands[:1] if name == "mknod" else operands:
        finding = check_write(word, ctx, verb=f"runs {name} on", appends=appends,
                              keeps_content=name == "touch")
        if finding:
            return finding
    return True, touches(operands, ctx)


def _symlinks_made(operands: list[str], found: list[tuple],
                   ctx: Context) -> list[tuple[str | None, str | None]]:
    """(link, target) for each link `ln -s` makes, for later words to resolve through it:
    `ln -s T LINK`, `ln -s T` (here), `ln -s T... DIR`, `ln -st DIR T...`, a LINK that is a
    directory (it goes inside), `-r` (T from here, not from the link), `-T`. A link forge
    cannot place or whose target it cannot value (a variable, a directory this same command
    made, which may hold it or be it) makes every path through it unknown."""
    made: list[tuple[str | None, str | None]] = []
    names = {option for option, _ in found}
    into = [value for option, value in found if option in ("-t", "--target-directory")]
    whole = bool(names & {"-T", "--no-target-directory"})
    relative = bool(names & {"-r", "--relative"})
    if into:
        pairs = [(target, into[-1], True) for target in operands]
    elif len(operands) == 1:
        pairs = [(operands[0], ".", True)]
    elif len(operands) > 2 and not whole:
        pairs = [(target, operands[-1], True) for target in operands[:-1]]
    else:
        pairs = [(operands[0], operands[1], None if not whole else False)] if operands else []
    for target, place, in_dir in pairs:
        target_value = shell_words.value(target, ctx.env)
        for path in expansions(place, ctx, follow=False):
            if path is None or target_value is None:
                made.append((path, None))
                continue
            as_dir = in_dir
            if as_dir is None and (place.endswith("/") or os.path.isdir(path)):
                as_dir = True
            elif as_dir is None and (path in ctx.made or path in ctx.links):
                made.append((path, None))  # a directory made here, or a link replaced
                continue
            link = os.path.join(path, os.path.basename(target_value.rstrip("/"))) if as_dir \
                else path
            base = (ctx.cwds[0] if len(ctx.cwds) == 1 else None) if relative \
                else os.path.dirname(link)
            pointed = target_value if target_value.startswith("/") else \
                None if base is None else os.path.join(base, target_value)
            pointed = pointed and proc_self(pointed, ctx)
            made.append((link, pointed and os.path.realpath(pointed)))
    return made


def _check_mount(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    """`mount --bind DIR POINT`, `bindfs DIR POINT`: POINT is DIR under another name, as a
    symlink would be: every path through it is unknown from here on. What else a mount
    does forge does not model."""
    operands, _ = options(args, "tToOLUBM", frozenset({"--types", "--options", "--source",
                                                       "--target", "--label", "--uuid"}))
    for path in expansions(operands[-1], ctx, follow=False) if operands else []:
        made_link(path, None, ctx)
    return False, touches(operands, ctx)


def _check_dd(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    for arg in args:
        if arg.startswith("of="):
            finding = check_write(arg[3:], ctx, verb="runs dd writing")
            if finding:
                return finding
    return True, touches(candidates(args), ctx)


def check_unknown_command(word: str, args: list[str], ctx: Context) -> Finding | tuple:
    """A command whose name is a substitution or an unknown variable may be `rm`: its
    arguments are judged as a deletion would be. It may also be a whole program held in
    a variable (`x=$(cat f); eval "$x"`, `bash -c "$x"`): code forge cannot read, refused
    where it could reach a protected path."""
    for candidate in candidates(args):
        finding = check_path(candidate, ctx, destructive=True,
                             verb=f"runs `{word}`, a command forge cannot name before it "
                                  "runs, on")
        if finding:
            return finding
    if risky_unknown("", ctx):
        return Finding(f"runs `{word}`, a command forge cannot name before it runs (a "
                       "substitution or a variable it cannot know), from a directory that "
                       "holds a protected path")
    return False, touches(candidates(args), ctx)


def change_dir(args: list[str], ctx: Context) -> None:
    """`cd DIR`: the shell moves to DIR (as `expansions` resolves it) if it exists; it may
    also stay (a `cd` can fail), which the walk records through `ctx.fallible`."""
    operands = [a for a in args if not a.startswith("-") or a == "-"]
    target = operands[0] if operands else "~"
    if target == "-":
        target = "$OLDPWD"
    ctx.fallible = True
    searched = "CDPATH" in ctx.env and not target.startswith(("/", "~", "./", "../")) \
        and target not in (".", "..")
    if searched or ctx.env.get("CDPATH", "") is None:
        ctx.move_to([None])  # cd searches CDPATH first: the directory forge would join may lose
        return
    ctx.move_to(expansions(target, ctx) or [None])


def positional(code: str, operands: list[str]) -> str:
    """`sh -c 'rm -rf "$1"' _ .git`: the code with `$0`..`$9`, `$@` and `$*` filled in from
    the operands after it (a plain word as is, so it also fits inside double quotes)."""
    if "$" not in code:
        return code

    def word(text: str) -> str:
        return text if _plain(text) else quote(text)

    def value(name: str) -> str:
        if name in ("@", "*"):
            return " ".join(word(operand) for operand in operands[1:])
        index = int(name)
        return word(operands[index]) if index < len(operands) else ""

    code = _filled(code, value, quoted=True)  # "$@": each operand its own word
    return _filled(code, value, quoted=False)


def _plain(text: str) -> bool:
    """Word characters (re's `\\w`) and `./~+,:@%-` only, but for one final newline: the
    regex `^[\\w./~+,:@%-]*$` this replaces (its `$` matches before a final newline)."""
    body = text[:-1] if text.endswith("\n") else text
    return all(is_word_char(char) or char in "./~+,:@%-" for char in body)


def _filled(code: str, value, *, quoted: bool) -> str:
    """`code` with each `"$@"` and `"$*"` (`quoted`), or else each `$0`..`$9`, `${N}` (N
    any one decimal digit, as re's `\\d`), `$@` and `$*`, replaced by `value(name)`: left to
    right and never inside a replacement, as the re.sub it replaces did."""
    out: list[str] = []
    position = 0
    while (dollar := code.find("$", position)) != -1:
        following = code[dollar + 1:dollar + 2]
        if quoted:
            found = following in ("@", "*") and dollar > position and \
                code[dollar - 1] == '"' and code[dollar + 2:dollar + 3] == '"'
            name, start, end = following, dollar - 1, dollar + 3
        elif following == "{" and code[dollar + 2:dollar + 3].isdecimal() and \
                code[dollar + 3:dollar + 4] == "}":
            found, name, start, end = True, code[dollar + 2], dollar, dollar + 4
        else:
            found = following != "" and following in "0123456789@*"
            name, start, end = following, dollar, dollar + 2
        if not found:
            out.append(code[position:dollar + 1])
            position = dollar + 1
            continue
        out.append(code[position:start])
        out.append(value(name))
        position = end
    out.append(code[position:])
    return "".join(out)


def check_copy(name: str, args: list[str], ctx: Context) -> Finding | tuple[bool, bool]:
    """A copy reads its sources and writes its destination: into a directory (`-t DIR`, a
    trailing `/`, several sources or an existing directory) it writes each source's name
    there (its whole relative path with `--parents`), and a directory's contents (`src/.`,
    rsync's `src/`) land in it directly; `mv` and `--remove-source-files` delete the
    sources, `rsync --delete` what the destination holds."""
    if name == "rsync" and ("--dry-run" in args or "--list-only" in args or any(
            a.startswith("-") and not a.startswith("--") and "n" in a for a in args)):
        return True, touches(candidates(args), ctx)  # a dry run writes nothing
    args = spelled_out(args, _COPY_LONG.get(name, ()))
    finding = _check_copy_options(name, args, ctx)
    if finding:
        return finding
    operands, into = _copy_operands(name, args)
    whole = "--no-target-directory" in args or (name in ("cp", "install", "mv") and any(
        a.startswith("-") and not a.startswith("--") and "T" in a for a in args))
    if into is None and len(operands) >= 2:
        into, operands = operands[-1], operands[:-1]
    if name == "mv" or "--remove-source-files" in args:
        for word in operands:
            finding = check_path(word, ctx, destructive=True, verb="moves", follow=False)
            if finding:
                return finding
    parents = "--parents" in args or "-R" in args and name == "rsync"
    if into is None:
        written, as_dir = operands, False  # `install -d DIR`: the operand itself
    else:
        as_dir = not whole and (len(operands) > 1 or into.endswith("/") or any(
            path is not None and os.path.isdir(path) for path in expansions(into, ctx)))
        written = [into if not as_dir or _copies_contents(name, source)
                   else os.path.join(into, source.lstrip("/") if parents
                                     else os.path.basename(source.rstrip("/")))
                   for source in operands] or [into]
    destroys = whole or any(a.startswith("--delete") for a in args)
    for word in written:
        finding = check_path(word, ctx, destructive=as_dir or destroys,
                             verb=f"runs {name} over", must_know=True)
        if finding:
            return finding
    if _keeps_links(name, args):
        for source, word in zip(operands, written, strict=False):
            inner = _links_within(source, ctx)  # each is copied as a link forge cannot follow
            for path in expansions(word, ctx, follow=False) if inner != [] else []:
                for relative in [""] if inner is None or path is None else inner:
                    made_link(path and os.path.join(path, relative), None, ctx)
    return True, touches(operands, ctx)


# The long options of the copies, for the unique prefixes getopt_long takes for them.
_COPY_LONG = {
    "cp": ("--archive", "--attributes-only", "--backup", "--context", "--copy-contents",
           "--debug", "--dereference", "--force", "--interactive", "--link", "--no-clobber",
           "--no-dereference", "--no-preserve", "--no-target-directory",
           "--one-file-system", "--parents", "--preserve", "--recursive", "--reflink",
           "--remove-destination", "--sparse", "--strip-trailing-slashes", "--suffix",
           "--symbolic-link", "--target-directory", "--update", "--verbose"),
    "mv": ("--backup", "--context", "--debug", "--exchange", "--force", "--interactive",
           "--no-clobber", "--no-copy", "--no-target-directory", "--strip-trailing-slashes",
           "--suffix", "--target-directory", "--update", "--verbose"),
    "install": ("--backup", "--compare", "--context", "--directory", "--group", "--mode",
                "--owner", "--preserve-context", "--preserve-timestamps", "--strip",
                "--strip-program", "--suffix", "--target-directory", "--no-target-directory",
                "--verbose"),
}


def _keeps_links(name: str, args: list[str]) -> bool:
    """Does the copy make a symlink where its source is one: `mv` always; `cp -P`, `-d`,
    `-a`, `-R` (unless `-L`/`-H`); `rsync -l`, `-a`."""
    if name == "mv":
        return True
    short = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    if name == "cp":
        return not ("L" in short or "H" in short or "--dereference" in args) and bool(
            set(short) & set("PdaRr") or {"--no-dereference", "--archive",
                                           "--recursive"} & set(args))
    return name == "rsync" and bool(set(short) & set("la") or
                                    {"--links", "--archive"} & set(args))


def _links_within(word: str, ctx: Context) -> list[str] | None:
    """Where the source holds symlinks (on disk, or made by this command), relative to it
    ("": it is one); None when forge cannot say (a path it cannot know, a tree too large to
    read in time)."""
    found: list[str] = []
    for path in expansions(word, ctx, follow=False):
        if path is None:
            return None
        if path in ctx.links or os.path.islink(path):
            found.append("")
            continue
        found.extend(os.path.relpath(link, path) for link in ctx.links
                     if link.startswith(path + os.sep))
        seen = 0
        for here, dirs, names in os.walk(path) if os.path.isdir(path) else []:
            seen += len(dirs) + len(names)
            if seen > _WALK_LIMIT:
                return None
            found.extend(os.path.relpath(os.path.join(here, entry), path)
                         for entry in dirs + names if os.path.islink(os.path.join(here, entry)))
    return found


# Options that make a copy link to its sources (writing the copy then writes them) or to
# another tree (`rsync --link-dest=DIR`); the options that run a program or write a file of
# their own are rows of OPTION_EFFECTS.
_LINKING = ("--link", "--symbolic-link", "--link-dest", "--copy-dest", "--compare-dest")


def _check_copy_options(name: str, args: list[str], ctx: Context) -> Finding | None:
    """`cp -l`/`-s`/`-al`, `rsync --link-dest`: a protected source (or a tree that holds one)
    would be linked, not copied; `--read-batch` applies changes forge cannot read."""
    short = "".join(a[1:] for a in args if a.startswith("-") and not a.startswith("--"))
    linking = name == "cp" and ("l" in short or "s" in short)
    for index, arg in enumerate(args):
        option, equals, value = arg.partition("=")
        value = value if equals else (args[index + 1] if index + 1 < len(args) else "")
        if option.startswith(_LINKING[:2]) and name == "cp":
            linking = True
        elif option in _LINKING[2:]:
            finding = check_path(value, ctx, destructive=True, verb=f"runs {name} {option} to",
                                 must_know=True)
            if finding:
                return finding
        elif option == "--read-batch" and risky_unknown("", ctx):
            return Finding(f"runs {name} --read-batch, which applies changes forge cannot "
                           "read, from a directory that holds a protected path")
    if linking:
        operands, into = _copy_operands(name, args)
        for word in operands if into else operands[:-1] or operands:
            finding = check_path(word, ctx, destructive=True, verb=f"runs {name} linking",
                                 must_know=True)
            if finding:
                return finding
    return None


# The short options of each copy that take a value (`-Dt DIR`, `-m 644`, `-e ssh`).
_COPY_VALUE_LETTERS = {"cp": "tS", "mv": "tS", "install": "tSmog", "rsync": "efTBM",
                       "scp": "FiJloPScDX"}


def _copy_operands(name: str, args: list[str]) -> tuple[list[str], str | None]:
    """The file operands of a copy, and its `-t DIR` / `--target-directory=DIR` if given
    (also inside a cluster: `install -Dt DIR`)."""
    long_values = COPY_VALUE_OPTIONS | {"--target-directory"}
    operands, found = options(args, _COPY_VALUE_LETTERS.get(name, ""),
                              frozenset(option for option in long_values
                                        if option.startswith("--")))
    into = None
    for option, value in found:
        if value is not None and (option == "--target-directory" or (
                option == "-t" and name != "rsync")):
            into = value
    return operands, into


def _copies_contents(name: str, source: str) -> bool:
    return source.endswith("/.") or (name == "rsync" and source.endswith("/"))


def _check_sed(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    """`sed -i` writes its files; a script's `w FILE` (and `s///w FILE`) writes FILE; `e`
    (and `s///e`) runs code; `--sandbox` forbids both."""
    operands, found = options(args, "eflE", frozenset({"--expression", "--file",
                                                       "--line-length"}))
    names = {option for option, _ in found}
    scripts = [value for option, value in found if option in ("-e", "--expression")]
    if names & {"-f", "--file"}:
        return False, touches(operands, ctx)  # a script in a file forge does not read
    if not scripts and operands:
        scripts, operands = [operands[0]], operands[1:]
    in_place = any(option in ("-i", "--in-place") or option.startswith("--in-place")
                   for option, _ in found) or any(a.startswith("-i") for a in args
                                                  if not a.startswith("--"))
    if in_place:
        for word in operands:
            finding = check_write(word, ctx, verb="runs sed -i on")
            if finding:
                return finding
    if "--sandbox" in names:
        return True, touches(operands, ctx)
    for script in scripts:
        effects = _sed_effects(script or "")
        if effects is None:
            return False, touches(operands, ctx)
        writes, runs = effects
        for word in writes:
            finding = check_write(word, ctx, verb="runs sed writing")
            if finding:
                return finding
        for code in runs:
            if code is None:
                return False, touches(operands, ctx)
            finding = child(code, ctx)
            if finding:
                return finding
    return True, touches(operands, ctx)


_SED_PLAIN = frozenset("=dDgGhHlnNpPqQxzF{}!")


def _sed_effects(script: str) -> tuple[list[str], list[str | None]] | None:
    """The files a sed script writes and the code it runs (None: the pattern space);
    None when forge cannot read the script."""
    writes: list[str] = []
    runs: list[str | None] = []
    position = 0

    def rest_of_line() -> str:
        nonlocal position
        end = script.find("\n", position)
        end = len(script) if end == -1 else end
        text, position = script[position:end].strip(), end
        return text

    def delimited() -> bool:
        nonlocal position
        if position >= len(script):
            return False
        delimiter = script[position]
        position += 1
        while position < len(script) and script[position] != delimiter:
            position += 2 if script[position] == "\\" else 1
        position += 1
        return position <= len(script)

    while position < len(script):
        char = script[position]
        if char in " \t\n;$,~+" or char.isdigit():
            position += 1  # separators and line addresses
        elif char == "/" or (char == "\\" and position + 1 < len(script)):
            position += 1 if char == "\\" else 0
            if not delimited():
                return None
        elif char in _SED_PLAIN:
            position += 1
        elif char in "btT":
            position = _sed_label(script, position + 1)
        elif char in "#aic:rRvL":
            position += 1
            rest_of_line()
        elif char in "wW":
            position += 1
            writes.append(rest_of_line())
        elif char == "e":
            position += 1
            code = rest_of_line()
            runs.append(code or None)
        elif char in "sy":
            position += 1
            if not delimited():
                return None
            position -= 1
            if not delimited():
                return None
            if char == "s":
                start = position
                while position < len(script) and script[position] in "gpiImMe0123456789w":
                    if script[position] == "w":
                        position += 1
                        writes.append(rest_of_line())
                        break
                    position += 1
                if "e" in script[start:position]:
                    runs.append(None)
        else:
            return None
    return writes, runs


def _sed_label(script: str, position: int) -> int:
    while position < len(script) and script[position] not in ";\n":
        position += 1
    return position


def _check_output_file(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    """Readers that write an operand: `uniq IN OUT`, `xxd IN OUT` (`sort -o F`, `tree -o F`
    and the like are rows of OPTION_EFFECTS)."""
    takes = {"sort": "oTkStz", "tree": "oPILH", "uniq": "fsw", "xxd": "cglson"}[name]
    operands, _ = options(args, takes, frozenset({"--output", "--temporary-directory",
                                                  "--compress-program"}))
    if name in ("uniq", "xxd") and len(operands) >= 2:
        finding = check_write(operands[1], ctx, verb=f"runs {name} writing")
        if finding:
            return finding
    return True, touches(operands, ctx)


def _check_rg(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    """ripgrep reads, unless `--pre PROGRAM` runs a program on every file."""
    for index, arg in enumerate(args):
        if arg == "--pre" or arg.startswith("--pre="):
            program = arg.partition("=")[2] or (args[index + 1] if index + 1 < len(args)
                                                else "")
            return child("sh " + quote(program), ctx) or (False, False)
    return True, touches(candidates(args), ctx)


def _check_reader(name: str, args: list[str], ctx: Context, child) -> tuple[bool, bool]:
    return True, touches(candidates(args), ctx)


def _check_find(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    return check_find(args, ctx, child)


def _check_destroyer(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    return check_destroy(args, ctx)


def _check_copier(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    return check_copy(name, args, ctx)


def _check_repermissioner(name: str, args: list[str], ctx: Context,
                          child) -> Finding | tuple[bool, bool]:
    # Recursive or not: a directory locked above a protected path locks the path too.
    for word in candidates(args):
        finding = check_path(word, ctx, destructive=True, verb="re-permissions", must_know=True)
        if finding:
            return finding
    return True, touches(candidates(args), ctx)


def check_find(args: list[str], ctx: Context, child, *,
               acting: bool = False) -> Finding | tuple[bool, bool]:
    """`acting`: what find prints is acted on (`find ... | xargs rm`). Its `-exec` command
    is judged like any other, with `{}` standing for a file it finds."""
    position = 0
    while position < len(args) and args[position] in ("-L", "-H", "-P"):
        position += 1
    starts = []
    while position < len(args) and not args[position].startswith(("-", "(", "!")):
        starts.append(args[position])
        position += 1
    starts = starts or ["."]
    expression = args[position:]
    for command in _find_commands(expression):
        words = [os.path.join(starts[0], "{}") if word == "{}" else word for word in command]
        if words and os.path.basename(words[0]) not in READERS:
            acting = True
        finding = child(" ".join(quote(word) for word in words), ctx)
        if finding:
            return finding
    acting = acting or "-delete" in expression
    if not acting:
        return True, touches(starts, ctx)
    operators = any(arg in FIND_OPERATORS for arg in expression)
    patterns = [expression[i + 1] if a in ("-name", "-iname", "-lname", "-ilname") else "/"
                for i, a in enumerate(expression[:-1]) if a in FIND_NAME_TESTS]
    for start in starts:
        for path in expansions(start, ctx):
            if path is None:
                if risky_unknown(start, ctx):
                    return Finding(f"runs find -delete/-exec from `{start}`, a directory "
                                   "forge cannot know before it runs")
                continue
            entry = hit(path, ctx.protected, destructive=False)
            if entry:
                return Finding(f"runs find -delete/-exec inside {entry.label} ({start})", entry)
            for candidate in ctx.protected:
                if holds(path, candidate.path) and (operators or _find_may_match(
                        path, candidate.path, patterns)):
                    return Finding(f"runs find -delete/-exec over {candidate.label} ({start})",
                                   candidate)
    return True, touches(starts, ctx)


def _find_commands(expression: list[str]) -> list[list[str]]:
    found, position = [], 0
    while position < len(expression):
        if expression[position] in ("-exec", "-execdir", "-ok", "-okdir"):
            end = position + 1
            while end < len(expression) and expression[end] not in (";", "+"):
                end += 1
            found.append(expression[position + 1:end])
            position = end
        position += 1
    return found


def _find_may_match(start: str, root: str, patterns: list[str]) -> bool:
    """Could a find name test match `root`, a directory between `start` and it, or anything
    under it? Unsure (a path or regex test) means yes; case is ignored (`-iname`)."""
    from fnmatch import fnmatchcase

    if not patterns or any("/" in p for p in patterns):
        return True
    names = os.path.relpath(root, start).split(os.sep)
    for count, (_, dirs, files) in enumerate(os.walk(root)):
        names.extend(dirs + files)
        if count > _WALK_LIMIT or len(names) > _WALK_LIMIT:
            return True
    return any(fnmatchcase(name.lower(), pattern.lower()) for name in names
               for pattern in patterns)


def check_xargs_feed(pipeline, ctx: Context, command_words, child) -> Finding | None:
    """`xargs rm <<< x`, `xargs -a LIST rm`, `find . -name x | xargs rm`: what xargs hands
    its command. Input forge can read (a here-string or heredoc, an `-a`/`--arg-file`
    file, a `<` file, `echo` before it) is split as xargs splits it and the command xargs
    would run is judged (`-I` templates filled in); other input comes from the commands
    before it, judged as if they deleted what they list, or is unknown."""
    for index, simple in enumerate(pipeline):
        words, via_xargs = command_words(simple.words)
        if not via_xargs or {":::", "::::"} & set(simple.words):
            continue
        settings = _xargs_settings(simple.words)
        if settings is None:
            continue
        text = _xargs_input(settings, simple, pipeline[:index], ctx)
        if text is not None:
            finding = _check_xargs_commands(settings, words, text, ctx, child)
            if not finding and index and _xargs_writes((words, via_xargs)):
                finding = _check_feeders(pipeline[:index], ctx, command_words)
        elif settings["file"] is not None or simple.stdin or simple.reads or not index:
            finding = _unknown_listing("its input", ctx) if _xargs_writes(
                (words, via_xargs)) else None
        elif _xargs_writes((words, via_xargs)):
            finding = _check_feeders(pipeline[:index], ctx, command_words)
        else:
            finding = None
        if finding:
            return finding
    return None


_XARGS_VALUES = frozenset("IaEdeLlnPs")
_XARGS_LONG_VALUES = frozenset({"--arg-file", "--delimiter", "--eof", "--max-args",
                                "--max-lines", "--max-procs", "--max-chars", "--replace",
                                "--process-slot-var"})


def _xargs_settings(words: list[str]) -> dict | None:
    """The options of the (first) xargs or parallel in `words` that decide what it runs:
    its input file, its `-I` replacement string, its delimiter."""
    position = next((i for i, word in enumerate(words)
                     if os.path.basename(word) in ("xargs", "parallel")), None)
    if position is None:
        return None
    settings: dict = {"file": None, "replace": None, "delimiter": None}
    rest = words[position + 1:]
    while rest and rest[0].startswith("-") and rest[0] != "--":
        option = rest.pop(0)
        name, equals, value = option.partition("=")
        if option.startswith("--"):
            if not equals and name in _XARGS_LONG_VALUES and name != "--replace" and rest:
                value = rest.pop(0)
        else:
            name, value = option[:2], option[2:]
            if name[1:] in _XARGS_VALUES and not value and name not in ("-i", "-e", "-l") \
                    and rest:
                value = rest.pop(0)
        if name in ("-a", "--arg-file"):
            settings["file"] = value
        elif name in ("-I", "-i", "--replace"):
            settings["replace"] = value or "{}"
        elif name in ("-d", "--delimiter"):
            settings["delimiter"] = _unescaped(value)[:1] or "\n"
        elif name in ("-0", "--null"):
            settings["delimiter"] = "\0"
    return settings


def _xargs_input(settings: dict, simple, before, ctx: Context) -> str | None:
    """The text xargs reads, when forge can read it; None otherwise."""
    if settings["file"] is not None:
        return small_text(settings["file"], ctx)
    if simple.stdin:
        text = "\n".join(simple.stdin)
        return None if LIFTED in text else text + "\n"
    if simple.reads:
        return small_text(simple.reads[-1], ctx)
    if not before:
        return None  # what surrounds it (`{ xargs rm; } < x`, `sh -c xargs < x`)
    words = [word for word in before[-1].words]
    if len(before) == 1 and words and os.path.basename(words[0]) in ("echo", "printf"):
        return "\n".join(_printed_words(words[1:])) + "\n"
    return None


_XARGS_ITEMS_LIMIT = 64


def _check_xargs_commands(settings: dict, words: list[str], text: str, ctx: Context,
                          child) -> Finding | None:
    """Judge the command(s) xargs builds from `text`."""
    delimiter = settings["delimiter"]
    if settings["replace"] is not None and delimiter is None:
        items = [line.strip() for line in text.split("\n") if line.strip()]
    elif delimiter is not None:
        items = [item.strip() for item in text.split(delimiter) if item.strip()]
    else:
        try:
            items = shell_lexer.split(text)
        except ValueError:
            items = text.split()
    if len(items) > _XARGS_ITEMS_LIMIT:
        return _unknown_listing("its input", ctx) if _xargs_writes((words, True)) else None
    if not items:
        return None
    replace = settings["replace"]
    commands = ([[word.replace(replace, item) for word in words] for item in items]
                if replace else [[*words, *items]])
    for command in commands:
        finding = child(" ".join(quote(word) for word in command), ctx)
        if finding:
            return finding
    return None


def _check_feeders(before, ctx: Context, command_words) -> Finding | None:
    feeders = [command_words(simple.words)[0] for simple in before]
    feeders = [words for words in feeders if words]
    if not feeders:
        return _unknown_listing("its input", ctx)
    for words in feeders:
        finding = _check_listing(words, ctx)
        if finding:
            return finding
    return None


def _xargs_writes(command: tuple[list[str], bool]) -> bool:
    words, via_xargs = command
    if not via_xargs:
        return False
    name = os.path.basename(words[0])
    return name not in READERS and name != "sed" or (name == "sed" and any(
        a.startswith("-i") or a.startswith("--in-place") for a in words[1:]))


def _check_listing(words: list[str], ctx: Context) -> Finding | None:
    """What a command before xargs lists: the paths it names (echo), or what lies under
    the directories it walks (find, ls, git ls-files, grep -r); other output is unknown."""
    name, args = os.path.basename(words[0]), words[1:]
    if name == "find":
        outcome = check_find(args, ctx, lambda code, inner: None, acting=True)
        return outcome if isinstance(outcome, Finding) else None
    if name in ("echo", "printf"):
        for word in _printed_words(args):
            finding = check_path(word, ctx, destructive=True, must_know=True,
                                 verb="lists for xargs to hand to a command that writes")
            if finding:
                return finding
        return None
    if name in ("ls", "git", "grep", "egrep", "rg", "ag", "fd", "tree"):
        return _check_walk(name, args, ctx)
    return _unknown_listing(name, ctx)


def _printed_words(args: list[str]) -> list[str]:
    """The words echo or printf print, escapes (`\\0`, `\\n`, `\\x2e`) decoded: what xargs
    reads from them."""
    words = []
    for arg in args:
        text = _unescaped(arg)
        for piece in text.replace("%s", " ").replace("%b", " ").replace("\0", " ").split():
            if piece not in ("-e", "-n", "-E"):
                words.append(piece)
    return words


def _unescaped(text: str) -> str:
    """`text` with the backslash escapes printf and `echo -e` decode (`\\n`, `\\x2e`, `\\0`)."""
    try:
        return text.encode("utf-8", "surrogateescape").decode("unicode_escape")
    except UnicodeDecodeError:
        return text


def _check_walk(name: str, args: list[str], ctx: Context) -> Finding | None:
    flags = "".join(a.lstrip("-") for a in args if a.startswith("-") and
                    not a.startswith("--"))
    if name == "git":
        if "ls-files" not in args:
            return _unknown_listing("git", ctx)
        ignored = "i" in flags or "--ignored" in args or (
            ("o" in flags or "--others" in args) and "--exclude-standard" not in args)
        regions = [a for a in args[args.index("ls-files") + 1:] if not a.startswith("-")]
        return _check_regions(regions or ["."], ctx, hidden=True, in_git=False,
                              ignored=ignored)
    hidden = name == "grep" or "a" in flags or "A" in flags or "--hidden" in args \
        or "u" in flags
    operands = [a for a in args if not a.startswith("-")]
    if name in ("grep", "egrep", "rg", "ag") and operands and "-e" not in args:
        operands = operands[1:]  # the pattern
    return _check_regions(operands or ["."], ctx, hidden=hidden, in_git=name == "grep",
                          ignored=name in ("ls", "grep"))


def _check_regions(regions: list[str], ctx: Context, *, hidden: bool, in_git: bool,
                   ignored: bool) -> Finding | None:
    for region in regions:
        for path in expansions(region, ctx):
            if path is None:
                if risky_unknown(region, ctx):
                    return _unknown_listing(region, ctx)
                continue
            for entry in ctx.protected:
                if inside(path, entry.path):
                    return Finding(f"lists {region} for xargs to hand to a command that "
                                   f"writes, and {region} is in {entry.label}", entry)
                if not holds(path, entry.path) or not os.path.lexists(entry.path):
                    continue
                below = os.path.relpath(entry.path, path).split(os.sep)
                if (not hidden and any(part.startswith(".") for part in below)) or (
                        not in_git and ".git" in below) or (
                        not ignored and entry.kind == FRONT_MATTER):
                    continue
                return Finding(f"lists {region} for xargs to hand to a command that writes, "
                               f"and {region} holds {entry.label}", entry)
    return None


def _unknown_listing(source: str, ctx: Context) -> Finding | None:
    if not risky_unknown("", ctx):
        return None
    return Finding(f"hands xargs paths from {source}, which forge cannot know before it "
                   "runs, in a directory that holds a protected path")


def forge_args(name: str, args: list[str]) -> list[str] | None:
    if name == "forge":
        return args
    if name.startswith("python") and len(args) >= 2 and args[0] == "-m" and \
            args[1] in HOST_ENTRY_POINTS:
        return ["ledger", "charge"]  # the host's entry point itself: as forbidden as any
    if name.startswith("python") and len(args) >= 2 and args[0] == "-m" and \
            args[1].startswith("forge_runtime"):
        return args[2:]
    return None


def check_forge(args: list[str], ctx: Context) -> Finding | tuple[bool, bool]:
    """forge's own verbs, valued like any word (variables, braces, ANSI-C quoting): a
    hook-side verb, or a verb forge cannot read, is refused."""
    words: list[str | None] = []
    for arg in args[:16]:
        variants = shell_words.values(arg, ctx.env)
        words.extend(variants if None in variants else
                     [part for variant in variants for part in variant.split()])
    positional = [word for word in words if word is None or not word.startswith("-")]
    if None in positional[:3]:
        return Finding("runs forge with a subcommand held in a substitution or a variable "
                       "forge cannot know before it runs")
    for first, second in zip(positional, positional[1:], strict=False):
        if (first, second) in FORBIDDEN_FORGE:
            return Finding(f"runs `forge {first} {second}`, which only forge's hooks or a "
                           "person may run")
    if ["goal", "publish"] in (positional[:2], positional[1:3]) and any(
            word is not None and len(word) > 2 and "--restore".startswith(word)
            for word in words):  # argparse takes any unique prefix
        return Finding("runs `forge goal publish --restore`, which only a person runs (in a "
                       "terminal): it puts this clone's chain over the remote's, and could "
                       "drop turns other clones charged")
    if positional[:1] == ["init"] and ("--force" in words or "-f" in words):
        return Finding("runs `forge init --force`, which would overwrite the goal fields of "
                       "state.md")
    return True, False


# The options of the file tools (and of the downloaders and pagers, which no model reads)
# that write a file or run a program, from each tool's own option table (`TOOL --help`,
# its man page): the walk reads every command's arguments against its row before its
# model runs (state.check_options), so a model need not know them.
OPTION_EFFECTS = {
    "sort": {"-o": WRITES, "--output": WRITES, "-T": WRITES_INTO,
             "--temporary-directory": WRITES_INTO, "--compress-program": RUNS},
    "tree": {"-o": WRITES},
    "find": {"-fprint": WRITES, "-fprint0": WRITES, "-fprintf": WRITES, "-fls": WRITES},
    "less": {"-o": WRITES, "--log-file": WRITES, "-O": WRITES, "--LOG-FILE": WRITES},
    "ag": {"--pager": RUNS},
    "rg": {"--hostname-bin": RUNS},
    "install": {"--strip-program": RUNS},
    "rsync": {"-e": RUNS, "--rsh": RUNS, "--log-file": WRITES, "--backup-dir": WRITES_INTO,
              "-T": WRITES_INTO, "--temp-dir": WRITES_INTO, "--partial-dir": WRITES_INTO,
              "--write-batch": WRITES, "--only-write-batch": WRITES},
    "scp": {"-S": RUNS},
    "split": {"--filter": RUNS},
    "csplit": {"-f": WRITES, "--prefix": WRITES},
    "shuf": {"-o": WRITES, "--output": WRITES},
    "iconv": {"-o": WRITES, "--output": WRITES},
    "sdiff": {"-o": WRITES, "--output": WRITES},
    "time": {"-o": WRITES, "--output": WRITES},
    "strace": {"-o": WRITES, "--output": WRITES},
    "ltrace": {"-o": WRITES, "--output": WRITES},
    "curl": {"-o": WRITES, "--output": WRITES, "--output-dir": WRITES_INTO,
             "-D": WRITES, "--dump-header": WRITES, "-c": WRITES, "--cookie-jar": WRITES,
             "--trace": WRITES, "--trace-ascii": WRITES, "--stderr": WRITES,
             "--libcurl": WRITES, "--etag-save": WRITES, "--hsts": WRITES,
             "--alt-svc": WRITES},
    "wget": {"-O": WRITES, "--output-document": WRITES, "-o": WRITES, "--output-file": WRITES,
             "-a": WRITES, "--append-output": WRITES, "-P": WRITES_INTO,
             "--directory-prefix": WRITES_INTO, "--save-cookies": WRITES,
             "--warc-file": WRITES, "--use-askpass": RUNS},
    "gpg": {"-o": WRITES, "--output": WRITES},
    "openssl": {"-out": WRITES},
    "mktemp": {"-p": WRITES_INTO, "--tmpdir": WRITES_INTO},
}

# This family's models, by command (see the table in walk.py).
MODELS = {
    **dict.fromkeys(READERS, _check_reader),
    "find": _check_find,
    **dict.fromkeys(DESTROYERS, _check_destroyer),
    **dict.fromkeys(COPIERS, _check_copier),
    **dict.fromkeys(REPERMISSIONERS, _check_repermissioner),
    **dict.fromkeys(WRITERS, _check_writer),
    "dd": _check_dd, "sed": _check_sed, "rg": _check_rg,
    "mount": _check_mount, "bindfs": _check_mount,
    **dict.fromkeys(("sort", "tree", "uniq", "xxd"), _check_output_file),
}
