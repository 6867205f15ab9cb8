"""What a git command does to protected paths: its global options, the code it runs for
you, and the subcommands that rewrite or sweep the work tree.

`-C DIR` moves the one command; `-c key=value`, `git config KEY VALUE`, `GIT_*` variables
(see `shell.CODE_VARIABLES`) and aliases (from `-c`, the repository's and the user's
config, also text the command writes there first) are judged as the shell code or git
arguments git would run; `rebase --exec`, `bisect run` and `submodule foreach` run code
too. Discards (`reset --hard`, `checkout -- .`, `checkout -f`, `restore`, `stash`,
`read-tree -u`) are refused over a tracked forge file, sweeps (`clean -x`, `clean -e '!*'`,
`stash -a`) over a directory that holds a protected path.
"""

import os

from forge_runtime.guard.paths import FRONT_MATTER, LEDGER_LABEL, Finding, inside
from forge_runtime.guard.shell_commands import (
    candidates,
    change_dir,
    check_copy,
    check_destroy,
    check_unmodelled,
    check_write,
    options,
)
from forge_runtime.guard.shell_lexer import quote
from forge_runtime.guard.shell_state import Context, check_path, expansions, touches
from forge_runtime.guard.shell_syntax import LIFTED

GIT_READERS = frozenset({
    "status", "log", "show", "diff", "rev-parse", "ls-files", "ls-tree", "cat-file", "blame",
    "grep", "describe", "shortlog", "reflog", "branch", "tag", "add", "commit", "fetch",
    "pull", "push", "merge", "rebase", "switch", "remote", "version", "help", "cherry-pick",
    "revert", "bisect", "notes", "name-rev", "for-each-ref", "show-ref", "merge-base",
    "rev-list", "count-objects", "fsck", "gc", "prune", "repack",
})
# Built-in subcommands modelled below (git never lets an alias replace a built-in).
_GIT_MODELLED = frozenset({"rm", "mv", "apply", "clean", "stash", "config", "init", "clone",
                           "worktree", "submodule", "read-tree", "checkout-index", "checkout",
                           "restore", "reset", "am", "update-index", "hash-object"})
# Subcommands that rewrite work-tree files from history: refused over a tracked forge file.
GIT_DISCARDS = frozenset({"checkout", "restore", "reset", "read-tree", "checkout-index",
                          "stash"})
# Config keys whose value git runs as a shell command (or loads code from): these keys,
# every key of these sections, and `protocol.<name>.allow`.
_GIT_CODE_KEYS = frozenset({"core.fsmonitor", "core.pager", "core.editor", "core.sshcommand",
                            "core.askpass", "core.gitproxy", "core.hookspath", "core.worktree",
                            "sequence.editor", "diff.external", "web.browser",
                            "credential.helper", "gpg.program"})
_GIT_CODE_SECTIONS = ("diff.", "filter.", "merge.", "pager.", "man.", "difftool.",
                      "mergetool.", "credential.", "remote.", "gpg.", "interactive.",
                      "uploadpack.", "receive.", "alias.", "include.", "includeif.")
_GIT_FILE_KEYS = ("core.hookspath", "core.worktree", "include.path")
_CONFIG_BYTES_LIMIT = 200_000


def check_git(args: list[str], ctx: Context, child) -> Finding | tuple[bool, bool]:
    """git's global options (`-C`, `-c key=value`, `--git-dir`, `--work-tree`), code it
    runs for you (`-c core.fsmonitor=...`, `!` aliases, `rebase --exec`, `bisect run`),
    and the subcommands that rewrite or sweep the work tree."""
    rest = list(args)
    state = ctx.snapshot()
    try:
        while rest and rest[0].startswith("-"):
            option = rest.pop(0)
            if option == "-C" and rest:
                change_dir([rest.pop(0)], ctx)
            elif option == "-c" and rest:
                finding = _check_git_config(*rest.pop(0).partition("=")[::2], ctx, child)
                if finding:
                    return finding
            elif option.startswith(("--git-dir", "--work-tree", "--exec-path")):
                value = option.partition("=")[2] or (rest.pop(0) if rest else "")
                finding = check_write(value, ctx, verb=f"runs git {option.split('=')[0]}")
                if finding:
                    return finding
        if not rest:
            return True, False
        return _check_git_subcommand(rest[0], rest[1:], ctx, child)
    finally:
        ctx.restore(state)


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
    key = key.lower()
    if not runs_code(key):
        return None
    if key in _GIT_FILE_KEYS or key.startswith("includeif."):
        return Finding(f"sets git's {key}, which makes git run or read code from files "
                       "forge cannot read")
    if key.startswith("alias.") and not value.startswith("!"):
        return child("git " + value, ctx)
    return child(value.lstrip("!") or LIFTED, ctx)


def _check_git_subcommand(sub: str, operands: list[str], ctx: Context,
                          child) -> Finding | tuple[bool, bool]:
    if sub == "stash" and operands[:1] in (["push"], ["save"]):
        operands = operands[1:]
    if sub == "apply" and not {"--check", "--stat", "--numstat", "--summary"} & set(operands):
        from forge_runtime.guard import shell_archives  # only for `git apply`

        diffs = [a for a in operands if not a.startswith("-")]
        return shell_archives.check_patch("git apply", ["-i", diffs[-1]] if diffs else [], ctx,
                                          child)
    for option, value in options(operands, "", frozenset({"--output", "--exec", "-x"}))[1]:
        if option == "--output" and value:
            finding = check_write(value, ctx, verb=f"runs git {sub} writing")
            if finding:
                return finding
    if sub == "rebase" or sub == "bisect" or sub == "submodule":
        code = _git_code(sub, operands)
        if code is not None:
            return child(code, ctx) or (True, False)
    if sub == "config":
        settings = [a for a in operands if not a.startswith("-")]
        if len(settings) >= 2:
            finding = _check_git_config(settings[0], " ".join(settings[1:]), ctx, child)
            if finding:
                return finding
    flags = "".join(a.lstrip("-") for a in operands if a.startswith("-") and
                    not a.startswith("--"))
    excludes = [operands[i + 1] for i, a in enumerate(operands[:-1]) if a in ("-e", "--exclude")]
    sweeping = (sub == "clean" and ("x" in flags or "X" in flags or any(
        pattern.startswith("!") for pattern in excludes))) or (
        sub == "stash" and ("a" in flags or "--all" in operands))
    if sweeping:
        paths = [a for a in operands if not a.startswith("-") and a not in excludes] or ["."]
        for word in paths:
            finding = check_path(word, ctx, destructive=True, verb=f"runs git {sub} over")
            if finding:
                return finding
    if sub in GIT_DISCARDS:
        finding = _check_git_discard(sub, operands, ctx)
        if finding:
            return finding
    alias = None if sub in GIT_READERS or sub in _GIT_MODELLED else _git_alias(sub, ctx)
    if alias is not None:  # git runs `!code` in a shell, anything else as its own arguments
        code = alias[1:] if alias.startswith("!") else "git " + alias
        return child(" ".join([code, *(quote(a) for a in operands)]), ctx) or (
            True, False)
    if sub == "rm":
        return check_destroy([a for a in operands if a != "--cached"], ctx)
    if sub == "mv":
        return check_copy("mv", operands, ctx)
    if sub in GIT_READERS:
        return True, touches(candidates(operands), ctx)
    return check_unmodelled(f"git {sub}", operands, ctx)


def _git_alias(name: str, ctx: Context) -> str | None:
    """What `git NAME` runs when NAME is an alias in the repository's or the user's git
    config (as on disk, plus what this command wrote into it)."""
    files = [os.path.join(os.path.dirname(entry.path), "config") for entry in ctx.protected
             if entry.label == LEDGER_LABEL]
    home = ctx.env.get("HOME")
    if home:
        files += [os.path.join(home, ".gitconfig"), os.path.join(home, ".config/git/config")]
    for path in files:
        text = ctx.written.get(path, "")
        try:
            if os.path.getsize(path) <= _CONFIG_BYTES_LIMIT:
                with open(path, encoding="utf-8", errors="replace") as handle:
                    text = handle.read() + "\n" + text
        except OSError:
            pass
        section = ""
        for line in text.splitlines():
            line = line.strip()
            if line.startswith("["):
                section = line.strip("[]").strip().lower()
            elif section == "alias" and "=" in line:
                key, _, value = line.partition("=")
                if key.strip().lower() == name.lower():
                    return value.strip().strip('"')
    return None


def _git_code(sub: str, operands: list[str]) -> str | None:
    if sub == "rebase":
        for index, arg in enumerate(operands):
            if arg in ("-x", "--exec") and index + 1 < len(operands):
                return operands[index + 1]
            if arg.startswith("--exec="):
                return arg.split("=", 1)[1]
        return None
    if sub == "bisect" and operands[:1] == ["run"]:
        return " ".join(quote(word) for word in operands[1:]) or None
    if sub == "submodule" and "foreach" in operands:
        return " ".join(operands[operands.index("foreach") + 1:]) or None
    return None


def _check_git_discard(sub: str, operands: list[str], ctx: Context) -> Finding | None:
    """`reset --hard`, `checkout -- .`, `checkout -f`, `restore`: tracked files under the
    pathspec (the whole tree when none) go back to a committed version; refused over a
    tracked forge file (the rule file, paths the project protects)."""
    flags = set(operands)
    if sub == "reset" and not flags & {"--hard", "--merge", "--keep"}:
        return None
    if sub == "stash" and operands[:1] and operands[0] in ("list", "show", "drop", "clear",
                                                           "pop", "apply", "branch", "create",
                                                           "store"):
        return None  # only pushing a stash puts the work tree back
    pathspec = [a for a in operands if not a.startswith("-")]
    if "--" in operands:
        pathspec = operands[operands.index("--") + 1:]
    elif sub in ("read-tree", "checkout-index", "reset"):
        pathspec = []  # the whole tree
    elif sub == "checkout":
        forced = bool(flags & {"-f", "--force"})
        if flags & {"-b", "-B", "--orphan"} and not forced:
            return None  # a new branch from here: nothing is put back
        if len(pathspec) > 1:
            pathspec = pathspec[1:]  # `checkout TREE PATH...`
        elif pathspec and not any(os.path.lexists(path) for path in
                                  expansions(pathspec[0], ctx) if path):
            if not forced:
                return None  # `git checkout BRANCH`: a switch keeps local changes
            pathspec = []  # `checkout -f TREE`: every tracked file
        elif not pathspec and not forced:
            return None
    for word in pathspec or ["."]:
        for path in expansions(word, ctx):
            for entry in ctx.protected:
                tracked = entry.kind != FRONT_MATTER and ".git" not in entry.path.split(
                    os.sep) and os.path.exists(entry.path)
                if tracked and (path is None or inside(entry.path, path)):
                    return Finding(f"runs git {sub}, which puts {entry.label} back to a "
                                   "committed version", entry)
    return None
