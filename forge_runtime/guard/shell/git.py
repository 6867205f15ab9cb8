"""What a git command does to protected paths: its global options, the code it runs for
you, and the subcommands that write the work tree.

`-C DIR` moves the one command; `-c key=value`, `--config-env`, `git config KEY VALUE`,
`GIT_*` variables (see `shell.CODE_VARIABLES`) and aliases (from `-c`, the repository's and
the user's config, also text the command writes there first) are judged as the shell code
or git arguments git would run, and code git runs for you must be code forge can read
(`core.sshCommand`, an `ext::` URL, `bisect run`, `submodule foreach`). Every option of a
subcommand that writes a file or runs a program (`diff --output`, `grep -O`, `archive -o`,
`config -f`, `--upload-pack`, `rebase --exec`...) is a row of `_GIT_OPTIONS`, from git's own
option tables, read by `state.check_options` however it is spelled (abbreviated too, as
parse-options allows); subcommands that write at their operands or into the working
directory (`merge-file`, `bundle create`, `format-patch`) are listed too. An option git
does not document for its global place, or one that points git at another repository or
work tree, is unknown. Subcommands that write the work tree from history or sweep
untracked files are judged by `git_tree`, which asks git what they would change.
"""

from forge_runtime.guard.shell import git_refs
from forge_runtime.guard.shell.files import change_dir, check_copy
from forge_runtime.guard.shell.lexer import quote
from forge_runtime.guard.shell.state import (
    READS,
    RUNS,
    RUNS_OPTIONAL,
    WRITES,
    WRITES_INTO,
    Context,
    candidates,
    check_destroy,
    check_options,
    check_path,
    check_unmodelled,
    check_write,
    options,
    risky_unknown,
    run_for_you,
    touches,
)
from forge_runtime.guard.shell.syntax import LIFTED
from forge_runtime.protected.paths import Finding

# Subcommands that only read (their pager and diff drivers are judged as code).
GIT_READERS = frozenset({
    "status", "log", "show", "diff", "rev-parse", "ls-files", "ls-tree", "cat-file", "blame",
    "grep", "describe", "shortlog", "reflog", "version", "help", "name-rev", "for-each-ref",
    "show-ref", "merge-base", "rev-list", "count-objects", "fsck", "whatchanged", "cherry",
    "range-diff", "var", "check-ignore", "check-attr", "verify-commit", "verify-tag",
    "show-branch", "ls-remote",
})
# Subcommands that change git's state (refs, index, objects, config) but write no
# work-tree file from history.
GIT_STATE = frozenset({"add", "commit", "fetch", "push", "branch", "tag", "remote", "notes",
                       "gc", "prune", "repack", "update-ref", "symbolic-ref", "replace",
                       "maintenance", "pack-refs", "commit-tree", "mktree", "write-tree"})
# Subcommands that write the work tree from another commit, a stash or the index, or
# remove untracked files: judged by `git_tree`.
GIT_HISTORY = frozenset({"checkout", "switch", "restore", "reset", "merge", "pull", "rebase",
                         "cherry-pick", "revert", "stash", "clean", "am", "bisect",
                         "read-tree", "checkout-index"})
# Built-in subcommands modelled below (git never lets an alias replace a built-in).
_GIT_MODELLED = frozenset({"rm", "mv", "apply", "config", "init", "clone", "worktree",
                           "submodule", "update-index", "hash-object", "difftool",
                           "mergetool", "archive"}) | GIT_HISTORY | GIT_STATE
# Config keys whose value git runs as a shell command (or loads code from): these keys,
# every key of these sections, and `protocol.<name>.allow`.
_GIT_CODE_KEYS = frozenset({"core.fsmonitor", "core.pager", "core.editor", "core.sshcommand",
                            "core.askpass", "core.gitproxy", "core.hookspath", "core.worktree",
                            "sequence.editor", "diff.external", "web.browser",
                            "credential.helper", "gpg.program"})
_GIT_CODE_SECTIONS = ("diff.", "filter.", "merge.", "pager.", "man.", "difftool.",
                      "mergetool.", "credential.", "remote.", "gpg.", "interactive.",
                      "uploadpack.", "receive.", "alias.", "include.", "includeif.")
# Of those, the keys whose value is itself a command (the others are settings, judged as
# code only in case they are one): `<section>.<name>.<last>` or `<section>.<last>`.
_COMMAND_LAST = ("cmd", "command", "textconv", "clean", "smudge", "process", "driver",
                 "helper", "program", "uploadpack", "receivepack", "packobjectshook",
                 "proxy", "external", "difffilter", "sshcommand", "editor", "pager",
                 "askpass", "gitproxy", "fsmonitor", "browser")
_GIT_FILE_KEYS = ("core.hookspath", "core.worktree", "include.path")
# Global options git takes before the subcommand that take no value and change nothing
# about which repository, work tree or programs it uses.
_GLOBAL_FLAGS = frozenset({"--no-pager", "-P", "-p", "--paginate", "--bare",
                           "--no-replace-objects", "--literal-pathspecs", "--glob-pathspecs",
                           "--noglob-pathspecs", "--icase-pathspecs", "--no-optional-locks",
                           "--version", "--help", "--html-path", "--man-path", "--info-path",
                           "--no-lazy-fetch", "--no-advice"})
# GIT_* variables that only carry data (names, dates, output switches); any other one the
# command sets may make git read another repository, config or attributes, or write a
# file (GIT_TRACE=PATH), and is unknown. Code-valued ones are judged where they are set.
_GIT_DATA_VARIABLES = frozenset({
    "GIT_AUTHOR_NAME", "GIT_AUTHOR_EMAIL", "GIT_AUTHOR_DATE", "GIT_COMMITTER_NAME",
    "GIT_COMMITTER_EMAIL", "GIT_COMMITTER_DATE", "GIT_TERMINAL_PROMPT", "GIT_OPTIONAL_LOCKS",
    "GIT_MERGE_AUTOEDIT", "GIT_FLUSH", "GIT_PROGRESS_DELAY", "GIT_LITERAL_PATHSPECS",
    "GIT_GLOB_PATHSPECS", "GIT_NOGLOB_PATHSPECS", "GIT_ICASE_PATHSPECS",
    "GIT_NO_REPLACE_OBJECTS", "GIT_CONFIG_NOSYSTEM", "GIT_ADVICE", "GIT_DEFAULT_HASH",
    "GIT_HTTP_USER_AGENT", "GIT_SSL_NO_VERIFY", "GIT_CURL_VERBOSE", "GIT_REDACT_COOKIES",
    "GIT_CEILING_DIRECTORIES", "GIT_DISCOVERY_ACROSS_FILESYSTEM", "GIT_REFLOG_ACTION",
    "GIT_DIFF_OPTS", "GIT_LFS_SKIP_SMUDGE", "GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER",
    "GIT_SSH_COMMAND", "GIT_SSH", "GIT_ASKPASS", "GIT_EXTERNAL_DIFF", "GIT_MERGE_VERBOSITY",
})
_TRACE_SWITCHES = frozenset({"", "0", "1", "2", "true", "false"})


# The options of each subcommand that write a file or run a program, from git's own option
# tables (`git SUB -h`, git-SUB(1)); parse-options takes any unique prefix of a long option,
# so every prefix of one of these counts (READS: a shorter option of the same subcommand).
# `--output` is the diff options' (diff, log, show, format-patch, range-diff, stash show...)
# and means a file written in every subcommand that has it.
_GIT_OPTIONS_EVERYWHERE = {"--output": WRITES}
_GIT_OWN_OPTIONS = {
    "grep": {"-O": RUNS_OPTIONAL, "--open-files-in-pager": RUNS_OPTIONAL},
    "archive": {"-o": WRITES, "--output": WRITES, "--exec": RUNS},
    "format-patch": {"-o": WRITES_INTO, "--output-directory": WRITES_INTO},
    "bugreport": {"-o": WRITES_INTO, "--output-directory": WRITES_INTO},
    "diagnose": {"-o": WRITES_INTO, "--output-directory": WRITES_INTO},
    "config": {"-f": WRITES, "--file": WRITES, "-e": RUNS_OPTIONAL, "--edit": RUNS_OPTIONAL},
    "fast-export": {"--export-marks": WRITES},
    "fast-import": {"--export-marks": WRITES, "--export-pack-edges": WRITES},
    "read-tree": {"--index-output": WRITES},
    "apply": {"--build-fake-ancestor": WRITES},
    "index-pack": {"-o": WRITES},
    "mailsplit": {"-o": WRITES_INTO},
    "repack": {"--expire-to": WRITES},
    "credential-store": {"--file": WRITES},
    "credential-cache": {"--socket": WRITES},
    "checkout-index": {"--prefix": WRITES},
    "init": {"--template": RUNS},  # its hooks run later: code forge does not read
    "clone": {"-u": RUNS, "--template": RUNS, "--separate-git-dir": WRITES},
    "daemon": {"--pid-file": WRITES, "--access-hook": RUNS},
    "commit-graph": {"--object-dir": WRITES_INTO},
    "multi-pack-index": {"--object-dir": WRITES_INTO},
    "rebase": {"-x": RUNS, "--exec": RUNS},
    "difftool": {"-x": RUNS, "--extcmd": RUNS},
    "instaweb": {"-d": RUNS, "--httpd": RUNS, "-b": RUNS, "--browser": RUNS},
    "send-email": {"--sendmail-cmd": RUNS, "--smtp-server": RUNS, "--to-cmd": RUNS,
                   "--cc-cmd": RUNS, "--header-cmd": RUNS, "--to": READS, "--cc": READS},
    "filter-branch": {"--env-filter": RUNS, "--tree-filter": RUNS, "--index-filter": RUNS,
                      "--parent-filter": RUNS, "--msg-filter": RUNS, "--commit-filter": RUNS,
                      "--tag-name-filter": RUNS, "-d": WRITES},
}
# The transports, and the program each may be told to run on the other end (which, for a
# local or `ext::` remote, runs here).
_TRANSPORTS = ("fetch", "pull", "clone", "push", "ls-remote", "archive", "submodule", "remote",
               "send-pack", "fetch-pack", "upload-archive")
_TRANSPORT_OPTIONS = {"--upload-pack": RUNS, "--receive-pack": RUNS, "--exec": RUNS}
_GIT_OPTIONS = {**_GIT_OWN_OPTIONS, **{sub: {**_TRANSPORT_OPTIONS, **_GIT_OWN_OPTIONS.get(sub, {})}
                                       for sub in _TRANSPORTS}}
# Subcommands that write files named by their operands (every operand counts: which one is
# the file depends on options that take values), and the options that make them write to
# standard output instead; `bundle` writes only with `create`, `interpret-trailers` only
# with `--in-place`.
_GIT_OPERANDS_WRITTEN = {"merge-file": {"-p", "--stdout"}, "mailinfo": set(), "bundle": set(),
                         "init": set(), "clone": set(), "pack-objects": {"--stdout"},
                         "interpret-trailers": set()}
# Subcommands that write files of their own naming into the working directory, unless an
# option sends them elsewhere (checked above) or to standard output; `checkout-index` only
# with `--temp`.
_GIT_WRITES_HERE = {"format-patch": {"--stdout", "-o", "--output-directory", "--output"},
                    "bugreport": {"-o", "--output-directory"},
                    "diagnose": {"-o", "--output-directory"}, "unpack-file": set(),
                    "checkout-index": set()}


def check_git(args: list[str], ctx: Context, child) -> Finding | tuple[bool, bool]:
    """git's global options (`-C`, `-c key=value`, `--config-env`, `--git-dir`,
    `--work-tree`), code it runs for you, and the subcommands that write the work tree."""
    finding = _check_git_variables(ctx)
    if finding:
        return finding
    rest = list(args)
    state = ctx.snapshot()
    elsewhere = None  # a global option that points git at another repository or tree
    aliases: dict[str, str] = {}
    try:
        while rest and rest[0].startswith("-"):
            option = rest.pop(0)
            name, equals, value = option.partition("=")
            if option == "-C" and rest:
                change_dir([rest.pop(0)], ctx)
            elif option == "-c" and rest:
                key, _, value = rest.pop(0).partition("=")
                finding = _check_git_config(key, value, ctx, child)
                if finding:
                    return finding
                if key.lower().startswith("alias."):  # for this one git: `-c alias.co=checkout co`
                    aliases[key.lower()[len("alias."):]] = value
            elif name == "--config-env":
                key, _, variable = (value if equals else (rest.pop(0) if rest else "")) \
                    .partition("=")
                code = ctx.env.get(variable)
                finding = _check_git_config(key, LIFTED if code is None else code, ctx,
                                            child)
                if finding:
                    return finding
            elif name in ("--git-dir", "--work-tree", "--exec-path", "--namespace",
                          "--super-prefix", "--list-cmds", "--attr-source"):
                value = value if equals else (rest.pop(0) if rest and name != "--exec-path"
                                              else "")
                finding = check_write(value, ctx, verb=f"runs git {name}") if value else None
                if finding:
                    return finding
                elsewhere = elsewhere or name
            elif option not in _GLOBAL_FLAGS:
                elsewhere = elsewhere or option
        if not rest:
            return True, False
        finding = git_refs.check(rest[0], rest[1:], ctx)  # forge's refs on a remote
        if finding:  # before --git-dir and the like: whichever repository, never these
            return finding
        if elsewhere and rest[0] not in GIT_READERS:
            if risky_unknown("", ctx):
                return Finding(f"runs git {rest[0]} with {elsewhere}, which points git at a "
                               "repository, work tree or programs forge does not read, from "
                               "a directory that holds a protected path")
            return False, False
        return _check_git_subcommand(rest[0], rest[1:], ctx, child, aliases)
    finally:
        ctx.restore(state)


def _check_git_variables(ctx: Context) -> Finding | None:
    """The GIT_* variables the command set: data, a trace file (a write), or unknown."""
    for name, value in ctx.env.items():
        if not name.startswith("GIT_") or name in _GIT_DATA_VARIABLES:
            continue
        if name.startswith("GIT_TRACE") and value is not None and \
                value.lower() in _TRACE_SWITCHES:
            continue
        if name.startswith("GIT_TRACE") and value is not None and value.startswith("/"):
            finding = check_write(value, ctx, verb=f"makes git write its {name} to")
            if finding:
                return finding
            continue
        if risky_unknown("", ctx):
            return Finding(f"runs git with {name} set, a variable forge does not model (it "
                           "may point git at another repository, config or file), from a "
                           "directory that holds a protected path")
    return None


def runs_code(key: str) -> bool:
    """Is `key` (lower case) a config key whose value git runs or loads code from? Like the
    anchored regex it replaces, a key may end in one newline (re's `$` matches before
    it), and a section's key name holds none."""
    key = key[:-1] if key.endswith("\n") else key
    if key in _GIT_CODE_KEYS:
        return True
    if "\n" in key:
        return False
    return key.startswith(_GIT_CODE_SECTIONS) or (key.startswith("protocol.") and
                                                   key.endswith(".allow") and
                                                   len(key) >= len("protocol..allow"))


def _check_git_config(key: str, value: str, ctx: Context, child) -> Finding | None:
    finding = git_refs.check_config(key, value)  # a remote set to mirror refs/forge/*
    if finding:
        return finding
    key = key.lower()
    if not runs_code(key):
        return None
    if key in _GIT_FILE_KEYS or key.startswith("includeif."):
        return Finding(f"sets git's {key}, which makes git run or read code from files "
                       "forge cannot read")
    if key.startswith("alias.") and not value.startswith("!"):
        return child("git " + value, ctx)
    if key.startswith(("protocol.", "alias.", "pager.")) or \
            key.rsplit(".", 1)[-1] in _COMMAND_LAST:
        return run_for_you(value.lstrip("!"), ctx, f"git's {key}")
    return child(value.lstrip("!") or LIFTED, ctx)


def _check_transport(sub: str, operands: list[str], ctx: Context, child) -> Finding | None:
    """What a transport runs beyond its options (`_GIT_OPTIONS`): `clone -c KEY=VALUE` and
    an `ext::CMD` URL."""
    for index, arg in enumerate(operands):
        name, equals, value = arg.partition("=")
        following = operands[index + 1] if index + 1 < len(operands) else ""
        if sub == "clone" and name in ("-c", "--config"):
            finding = _check_git_config(*(value if equals else following).partition("=")[::2],
                                        ctx, child)
        elif arg.startswith("ext::"):
            finding = run_for_you(arg[5:].replace("% ", " ").replace("%%", "%"), ctx,
                                  f"an ext:: URL of git {sub}")
        else:
            finding = None
        if finding:
            return finding
    return None


def _check_git_subcommand(sub: str, operands: list[str], ctx: Context, child,
                          aliases: dict[str, str]) -> Finding | tuple[bool, bool]:
    finding = check_options(f"git {sub}", operands, {**_GIT_OPTIONS_EVERYWHERE,
                                                     **_GIT_OPTIONS.get(sub, {})}, ctx) or \
        _check_operands_written(sub, operands, ctx)
    if finding:
        return finding
    if sub == "apply" and not {"--check", "--stat", "--numstat", "--summary"} & set(operands):
        from forge_runtime.guard.shell import archives  # only for `git apply`

        diffs = [a for a in operands if not a.startswith("-")]
        return archives.check_patch("git apply", ["-i", diffs[-1]] if diffs else [], ctx, child)
    finding = _check_transport(sub, operands, ctx, child) if sub in _TRANSPORTS else None
    if finding:
        return finding
    if sub in ("bisect", "submodule"):
        code = _git_code(sub, operands)
        if code is not None:
            finding = run_for_you(code, ctx, f"git {sub}")
            if finding:
                return finding
    if sub == "config":
        settings = [a for a in operands if not a.startswith("-")]
        if len(settings) >= 2:
            finding = _check_git_config(settings[0], " ".join(settings[1:]), ctx, child)
            if finding:
                return finding
    if sub == "init" and any(a.startswith("--separate-git-dir") for a in operands):
        where = options(operands, "", frozenset({"--separate-git-dir", "--template",
                                                 "--object-format", "--ref-format",
                                                 "--shared", "-b", "--initial-branch"}))[0]
        where = where[0] if where else "."
        return check_path(where, ctx, destructive=True, verb="moves the git dir of") or \
            (True, False)
    if sub in GIT_HISTORY:
        from forge_runtime.guard.shell import git_tree

        outcome = git_tree.check_history(sub, operands, ctx)
        if isinstance(outcome, Finding):
            return outcome
        if outcome == git_tree.PROBED:
            ctx.probed.append(f"git {sub}")
        elif outcome == git_tree.CHANGES:
            ctx.effects += 1
        return True, touches(candidates(operands), ctx)
    if sub == "worktree":
        return _check_worktree(operands, ctx)
    alias = None if sub in GIT_READERS or sub in _GIT_MODELLED else (
        aliases.get(sub.lower()) or _git_alias(sub, ctx))
    if alias is not None:  # git runs `!code` in a shell, anything else as its own arguments
        code = alias[1:] if alias.startswith("!") else "git " + alias
        return child(" ".join([code, *(quote(a) for a in operands)]), ctx) or (
            True, False)
    if sub in ("rm", "mv", "add") and {"-n", "--dry-run"} & set(operands):
        return True, False
    ctx.effects += sub not in GIT_READERS
    if sub == "rm":
        return check_destroy([a for a in operands if a != "--cached"], ctx)
    if sub == "mv":
        return check_copy("mv", operands, ctx)
    if sub in GIT_READERS or sub in GIT_STATE:
        return True, touches(candidates(operands), ctx)
    return check_unmodelled(f"git {sub}", operands, ctx)


def _check_operands_written(sub: str, operands: list[str], ctx: Context) -> Finding | None:
    """The files a subcommand writes at its operands or in the working directory."""
    if sub not in _GIT_OPERANDS_WRITTEN and sub not in _GIT_WRITES_HERE:
        return None
    names = {arg.partition("=")[0] for arg in operands if arg.startswith("-")}
    words = [arg for arg in operands if not arg.startswith("-")]
    if names & (_GIT_OPERANDS_WRITTEN.get(sub) or _GIT_WRITES_HERE.get(sub) or set()) or (
            sub == "bundle" and words[:1] != ["create"]) or (
            sub == "interpret-trailers" and "--in-place" not in names) or (
            sub == "checkout-index" and "--temp" not in names):
        return None
    for word in words if sub in _GIT_OPERANDS_WRITTEN else ["."]:
        finding = check_write(word, ctx, verb=f"runs git {sub} writing")
        if finding:
            return finding
    return None


def _check_worktree(operands: list[str], ctx: Context) -> Finding | tuple[bool, bool]:
    """`worktree add PATH` writes a new tree at PATH; `list`, `lock`, `unlock`, `prune`
    touch no tree; `move`, `remove` and `repair` rewrite trees and the files that tell
    forge where its ledger is."""
    action = operands[0] if operands else "list"
    words = [a for a in operands[1:] if not a.startswith("-")]
    if action in ("list", "lock", "unlock", "prune"):
        return True, False
    ctx.effects += 1
    if action == "add" and words:
        return check_path(words[0], ctx, destructive=True, must_know=True,
                          verb="runs git worktree add into") or (True, False)
    if risky_unknown("", ctx):
        return Finding(f"runs git worktree {action}, which moves or rewrites work trees and "
                       "the files that say where forge's ledger is, from a directory that "
                       "holds a protected path")
    return False, False


def _git_alias(name: str, ctx: Context) -> str | None:
    """What `git NAME` runs when NAME is an alias in the repository's or the user's git
    config and the files they include (as on disk, plus what this command wrote there):
    the last one wins, as in git; unknown (LIFTED) when one of those files forge cannot
    read."""
    found = None
    for entry in git_refs.config_entries(ctx):
        if entry is None:
            return LIFTED
        if entry[0] == "alias" and entry[2] == name.lower():
            found = entry[3]
    return found


def _git_code(sub: str, operands: list[str]) -> str | None:
    """The code `bisect run` and `submodule foreach` run (their operands, not an option)."""
    if sub == "bisect" and operands[:1] == ["run"]:
        return " ".join(quote(word) for word in operands[1:]) or None
    if sub == "submodule" and "foreach" in operands:
        return " ".join(operands[operands.index("foreach") + 1:]) or None
    return None


def _check_git_command(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    return check_git(args, ctx, child)


# This family's models, by command (see the table in walk.py); git's options are read per
# subcommand (`_GIT_OPTIONS`), so its row of the walk's option tables is empty.
MODELS = {"git": _check_git_command}
OPTION_EFFECTS: dict = {}
