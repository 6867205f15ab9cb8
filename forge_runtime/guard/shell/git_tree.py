"""What a git command would write into the work tree from history, asked of git itself.

Subcommands that write the work tree from another commit (checkout, switch, restore, reset,
merge, rebase, pull, cherry-pick, revert, stash, am, bisect, read-tree, checkout-index) or
remove untracked files (clean, `stash -u`/`-a`) are judged by the protected files of the
work tree they reach (`.forge/guard.yaml` tracked or not, state.md, the paths a project
protects): allowed when git's own objects show that none of them can change (the target
commit holds the same version, the file has no local change, the pathspec leaves it out,
a dry run), refused otherwise, and always when the commits are not there to be read yet
(`git pull`, `git am`, `rebase --continue`).

git is asked read-only: plumbing that runs no hook, filter, pager or fsmonitor, with no
optional locks, each call bounded in time; when git errs or is slow the command is refused,
never let through. What git says describes the repository before the command runs, so
`shell.analyse` refuses a command that relies on it and also changes git's state (a commit,
a moved ref, a write into the git dir, a program forge does not model).
"""

import os

from forge_runtime import safeio
from forge_runtime.guard.shell import words as shell_words
from forge_runtime.guard.shell.state import Context, check_deadline, expansions, risky_unknown
from forge_runtime.protected.paths import Finding, inside

PROBE_SECONDS = 0.5
HISTORY_COMMANDS_LIMIT = 16  # history-writing git commands one Bash call may have checked
_WALK_LIMIT = 500
_GLOB_CHARS = "*?["


class Tree:
    """One work tree a git command writes: its top, object format, and the protected
    locations inside it (relative to the top, as git names them)."""

    __slots__ = ("top", "sha256", "locations", "ctx", "cache")

    def __init__(self, top: str, sha256: bool, locations: list[tuple[str, object]],
                 ctx: Context) -> None:
        self.top = top
        self.sha256 = sha256
        self.locations = locations  # (relative path, Protected entry)
        self.ctx = ctx
        self.cache: dict = {}


class GitUnreadable(Exception):
    """git could not answer in time or at all: the command is refused."""


def open_tree(ctx: Context) -> Tree | None:
    """The work tree the next git command runs in; None when forge cannot know it (an
    unknown directory, several possible ones)."""
    if len(ctx.cwds) != 1 or ctx.cwds[0] is None:
        return None
    output = _git(ctx.cwds[0], ctx, "rev-parse", "--show-toplevel", "--show-object-format")
    lines = output.split("\n")
    if len(lines) < 2 or not lines[0]:
        raise GitUnreadable
    top = os.path.realpath(lines[0])
    locations = []
    for entry in ctx.protected:
        if not inside(entry.path, top) or entry.path == top:
            continue
        relative = os.path.relpath(entry.path, top)
        if ".git" not in relative.split(os.sep):
            locations.append((relative, entry))
    return Tree(top, lines[1].strip() == "sha256", locations, ctx)


def _git(cwd: str, ctx: Context, *args: str, given: str | None = None,
         accepted: tuple[int, ...] = (0,)) -> str:
    """git's output, run read-only in `cwd` (with `given` as its input); GitUnreadable when
    it fails (exits other than `accepted`) or is slow."""
    import subprocess

    check_deadline(ctx)
    env = {name: value for name, value in os.environ.items() if not name.startswith("GIT_")}
    env.update(GIT_OPTIONAL_LOCKS="0", GIT_TERMINAL_PROMPT="0", LC_ALL="C")
    stdin = {"input": given} if given is not None else {"stdin": subprocess.DEVNULL}
    from forge_runtime.agent_roots import program

    try:
        done = subprocess.run([program("git"), "-c", "core.fsmonitor=false", "-C", cwd, *args],
                              capture_output=True, text=True, env=env, timeout=PROBE_SECONDS,
                              errors="surrogateescape", **stdin)
    except (OSError, subprocess.TimeoutExpired) as error:
        raise GitUnreadable from error
    if done.returncode not in accepted:
        raise GitUnreadable
    return done.stdout


def in_scope(tree: Tree, pathspecs: list[str] | None) -> list[str]:
    """The protected locations the pathspecs reach (all of them for None, `.`, a glob, a
    pathspec with magic, or one forge cannot value)."""
    if not pathspecs:
        return [relative for relative, _ in tree.locations]
    reached = []
    for relative, entry in tree.locations:
        for spec in pathspecs:
            if spec.startswith(":") or any(char in spec for char in _GLOB_CHARS):
                reached.append(relative)
                break
            paths = expansions(spec, tree.ctx)
            if any(path is None or inside(entry.path, path) or inside(path, entry.path)
                   for path in paths):
                reached.append(relative)
                break
    return reached


def commit(tree: Tree, ref: str) -> str:
    """The commit `ref` names, as git resolves it now."""
    if ref == "-":
        ref = "HEAD" if tree.ctx.git_minus else "@{-1}"
    if ref.startswith("-") or not ref:
        raise GitUnreadable
    key = ("commit", ref)
    if key not in tree.cache:
        try:
            tree.cache[key] = _git(tree.top, tree.ctx, "rev-parse", "--verify", "--quiet",
                                   ref + "^{commit}").strip()
        except GitUnreadable:
            if ref != "HEAD" or not _unborn(tree):
                raise
            tree.cache[key] = ""  # a branch with no commit yet: the empty tree
    return tree.cache[key]


def _unborn(tree: Tree) -> bool:
    """Is HEAD a branch with no commit yet (a new repository)? git itself says so: HEAD
    names a branch, and that branch does not exist."""
    branch = _git(tree.top, tree.ctx, "symbolic-ref", "--quiet", "HEAD").strip()
    try:
        _git(tree.top, tree.ctx, "show-ref", "--verify", "--quiet", branch)
    except GitUnreadable:
        return True
    return False


def resolves(tree: Tree, ref: str) -> bool:
    """Does `ref` name a commit (so `git checkout X` switches rather than restores paths)?"""
    try:
        commit(tree, ref)
    except GitUnreadable:
        return False
    return True


def parents(tree: Tree, ref: str) -> list[str]:
    if not commit(tree, ref):
        return []
    return _git(tree.top, tree.ctx, "rev-list", "--parents", "-n1", commit(tree, ref),
                "--").split()[1:]


def versions(tree: Tree, ref: str, scope: list[str]) -> dict[str, str]:
    """What commit `ref` holds under the scope: path -> object id."""
    if not scope or not commit(tree, ref):
        return {}
    key = ("tree", ref, tuple(scope))
    if key not in tree.cache:
        tree.cache[key] = _objects(_git(tree.top, tree.ctx, "ls-tree", "-r", "-z",
                                        "--full-tree", commit(tree, ref), "--", *scope), 2)
    return tree.cache[key]


def staged(tree: Tree, scope: list[str]) -> dict[str, str]:
    """What the index holds under the scope."""
    if not scope:
        return {}
    key = ("index", tuple(scope))
    if key not in tree.cache:
        tree.cache[key] = _objects(_git(tree.top, tree.ctx, "ls-files", "-s", "-z", "--",
                                        *scope), 1)
    return tree.cache[key]


def _objects(output: str, field: int) -> dict[str, str]:
    """Path -> object id from `ls-tree -z` / `ls-files -s -z` lines (`<meta>\t<path>`),
    the id being the meta's `field`-th word."""
    found = {}
    for line in output.split("\0"):
        meta, _, path = line.partition("\t")
        if path:
            found[path] = meta.split()[field]
    return found


def on_disk(tree: Tree, scope: list[str]) -> dict[str, str]:
    """What the work tree holds under the scope, hashed as git would store it (no filters)."""
    key = ("disk", tuple(scope))
    if key in tree.cache:
        return tree.cache[key]
    found: dict[str, str] = {}
    for relative in scope:
        path = os.path.join(tree.top, relative)
        if os.path.isdir(path) and not os.path.islink(path):
            for count, (directory, dirs, files) in enumerate(os.walk(path)):
                dirs[:] = [name for name in dirs if name != ".git"]
                if count + len(found) > _WALK_LIMIT:
                    raise GitUnreadable
                for name in files:
                    full = os.path.join(directory, name)
                    found[os.path.relpath(full, tree.top)] = _object_id(full, tree.sha256)
        elif os.path.lexists(path):
            found[relative] = _object_id(path, tree.sha256)
    tree.cache[key] = found
    return found


def _object_id(path: str, sha256: bool) -> str:
    import hashlib

    try:
        data = os.readlink(path).encode("utf-8", "surrogateescape") if os.path.islink(path) \
            else safeio.read_bytes(path)  # a FIFO is refused, never waited on
    except OSError as error:
        raise GitUnreadable from error
    digest = hashlib.sha256() if sha256 else hashlib.sha1()  # noqa: S324 - git's own ids
    digest.update(b"blob %d\0" % len(data) + data)
    return digest.hexdigest()


def ignored(tree: Tree, paths: list[str]) -> set[str]:
    """Which of `paths` git's ignore rules (not the index) ignore."""
    if not paths:
        return set()
    listed = _git(tree.top, tree.ctx, "check-ignore", "-z", "--stdin", "--no-index",
                  given="\0".join(paths) + "\0", accepted=(0, 1))  # 1: none is ignored
    return {path for path in listed.split("\0") if path}


def differs(first: dict[str, str], second: dict[str, str], within=None) -> str | None:
    """The first path whose version differs between the two (present in one only counts)."""
    for path in sorted(set(first) | set(second)):
        if (within is None or path in within) and first.get(path) != second.get(path):
            return path
    return None


def refusal(sub: str, path: str, tree: Tree) -> Finding:
    entry = next((entry for relative, entry in tree.locations
                  if path == relative or path.startswith(relative.rstrip(os.sep) + os.sep)),
                 None)
    label = entry.label if entry is not None else path
    return Finding(f"runs git {sub}, which would change {label} ({path}) from another "
                   "commit, a stash or a sweep of untracked files; name the paths it may "
                   "change (`-- src/`), or let a person run it", entry)


def unknown(sub: str, why: str, ctx: Context) -> Finding | None:
    """A git operation whose effect on the work tree forge cannot read beforehand."""
    if not risky_unknown("", ctx):
        return None
    return Finding(f"runs git {sub}, which {why}, so forge cannot tell beforehand whether it "
                   "changes a protected file; from a directory that holds a protected path "
                   "it is refused (let a person run it)")


# Options that take a value, per subcommand (the value is not a commit or a path).
_VALUES = {
    "checkout": {"-b", "-B", "--orphan", "--conflict", "--pathspec-from-file"},
    "switch": {"-c", "-C", "--create", "--force-create", "--orphan", "--conflict"},
    "restore": {"-s", "--source", "--conflict", "--pathspec-from-file"},
    "reset": {"--pathspec-from-file"},
    "merge": {"-m", "-F", "-s", "-X", "--message", "--file", "--strategy",
              "--strategy-option", "--cleanup", "--into-name"},
    "rebase": {"--onto", "-s", "-X", "--strategy", "--strategy-option", "-x", "--exec",
               "--empty", "-C", "--whitespace"},
    "cherry-pick": {"-m", "--mainline", "-s", "-X", "--strategy", "--strategy-option",
                    "--cleanup"},
    "revert": {"-m", "--mainline", "-s", "-X", "--strategy", "--strategy-option",
               "--cleanup"},
    "stash": {"-m", "--message", "--pathspec-from-file"},
    "clean": {"-e", "--exclude"},
    "checkout-index": {"--prefix", "--stage"},
}
_DRY_RUNS = frozenset({"-n", "--dry-run"})


def parse(sub: str, operands: list[str]) -> tuple[set[str], dict[str, str], list[str],
                                                   list[str] | None]:
    """(flags, option values, operands before `--`, paths after `--` or None)."""
    flags: set[str] = set()
    values: dict[str, str] = {}
    words: list[str] = []
    takes = _VALUES.get(sub, set())
    position = 0
    while position < len(operands):
        word = operands[position]
        position += 1
        if word == "--":
            return flags, values, words, operands[position:]
        if word.startswith("--"):
            name, equals, value = word.partition("=")
            if name in takes and not equals and position < len(operands):
                value, position = operands[position], position + 1
            if name in takes:
                values[name] = value
            else:
                flags.add(name)
        elif word.startswith("-") and len(word) > 1:
            for index, letter in enumerate(word[1:], start=1):
                if "-" + letter in takes:
                    value = word[index + 1:]
                    if not value and position < len(operands):
                        value, position = operands[position], position + 1
                    values["-" + letter] = value
                    break
                flags.add("-" + letter)
        else:
            words.append(word)
    return flags, values, words, None


PROBED, CHANGES, READS = "probed", "changes", "reads"


def check_history(sub: str, operands: list[str], ctx: Context) -> Finding | str:
    """A Finding, or how the command was let through: PROBED on what git said beforehand
    (see `shell.analyse`), CHANGES when nothing protected is in its reach but it changes
    git's state (`reset --soft`), READS when it writes nothing (a dry run, `git checkout
    -b NEW`)."""
    flags, values, words, paths = parse(sub, operands)
    if sub == "clean" and flags & _DRY_RUNS or \
            sub == "stash" and words[:1] in (["list"], ["show"], ["create"]) or \
            sub in ("checkout", "switch") and not words and paths is None and not (
                values.keys() & {"-b", "-B", "--orphan", "-c", "-C", "--create",
                                 "--force-create"}) and not flags & {"-f", "--force",
                                                                     "-m", "--merge"}:
        return READS  # nothing written (`git checkout` alone is a no-op)
    if sub in ("pull", "am") or (sub in ("rebase", "cherry-pick", "revert", "am") and
                                 flags & {"--continue", "--skip"}):
        return unknown(sub, "applies commits forge cannot read before it runs", ctx) or CHANGES
    if sub in ("read-tree", "bisect") or (sub == "checkout" and flags & {"-p", "--patch"}):
        return unknown(sub, "writes files forge does not model", ctx) or CHANGES
    if "--pathspec-from-file" in values:
        return unknown(sub, "takes its paths from a file", ctx) or CHANGES
    if any(shell_words.value(word, ctx.env) is None for word in words + (paths or [])):
        return unknown(sub, "names a commit or path forge cannot know before it runs", ctx) \
            or CHANGES
    checked = ctx.cache["git history"] = int(ctx.cache.get("git history", 0)) + 1
    if checked > HISTORY_COMMANDS_LIMIT:
        return Finding(f"runs more than {HISTORY_COMMANDS_LIMIT} git commands that write the "
                       "work tree, more than forge checks in one call; split it")
    try:
        tree = open_tree(ctx)
    except GitUnreadable:
        tree = None
    if tree is None:
        return unknown(sub, "runs where forge cannot know the repository", ctx) or CHANGES
    try:
        return _judge(sub, flags, values, words, paths, tree)
    except GitUnreadable:
        return Finding(f"runs git {sub}, and git could not say in time what it would change "
                       "(an unknown commit or path?); forge refuses what it cannot check")


def _judge(sub, flags, values, words, paths, tree: Tree) -> Finding | str:
    scope = in_scope(tree, paths if paths is not None else None)
    if sub == "clean":
        return _clean(flags, values, words + (paths or []), tree)
    if sub == "stash":
        return _stash(flags, words, paths, tree)
    if sub in ("checkout", "switch"):
        return _switch(sub, flags, values, words, paths, tree)
    if sub == "restore":
        return _restore(flags, values, words + (paths or []), tree)
    if sub == "reset":
        if not flags & {"--hard", "--merge", "--keep"}:
            return CHANGES  # the index only
        return _reset(sub, words[0] if words else "HEAD", scope, tree)
    if "--abort" in flags and not _in_progress(sub, tree):
        return READS  # nothing to abort: git says so and stops
    if sub in ("merge", "rebase"):
        if flags & {"--abort"}:
            return _reset(sub, "ORIG_HEAD" if sub == "rebase" else "HEAD", scope, tree)
        if flags & {"--quit", "--edit-todo", "--show-current-patch"} or (
                sub == "merge" and "--continue" in flags):
            return CHANGES
        targets = ([values["--onto"]] if "--onto" in values else []) + words
        if "--root" in flags:
            raise GitUnreadable
        return _switch_to(sub, targets or ["@{upstream}"], scope, tree, forced=False)
    if sub in ("cherry-pick", "revert"):
        if "--abort" in flags:
            return _reset(sub, "ORIG_HEAD", scope, tree)
        if "--quit" in flags:
            return CHANGES
        for ref in words:
            if ".." in ref or ref.startswith("^"):
                raise GitUnreadable  # a range: every commit in it
            mine = versions(tree, ref, scope)
            for parent in parents(tree, ref):
                changed = differs(versions(tree, parent, scope), mine)
                if changed:
                    return refusal(sub, changed, tree)
        return PROBED
    if sub == "checkout-index":
        if "--temp" in flags:
            return CHANGES  # temporary files, named on its output
        if "--prefix" in values:
            # the index written under another directory: refused where that lands in the
            # work tree, where forge would have to follow each file
            prefix = os.path.dirname(values["--prefix"] + "x") or "."
            if any(path is None or inside(path, tree.top)
                   for path in expansions(prefix, tree.ctx)):
                return unknown(sub, "writes the index under a directory of the work tree",
                               tree.ctx) or CHANGES
            return CHANGES
        written = staged(tree, in_scope(tree, words + (paths or []) or None))
        changed = differs(written, on_disk(tree, list(written)), within=written)
        return refusal(sub, changed, tree) if changed else PROBED
    raise GitUnreadable


# What git keeps while each operation is under way (in the git dir).
_IN_PROGRESS = {"merge": ("MERGE_HEAD",), "cherry-pick": ("CHERRY_PICK_HEAD", "sequencer"),
                "revert": ("REVERT_HEAD", "sequencer"),
                "rebase": ("rebase-merge", "rebase-apply"), "am": ("rebase-apply",)}


def _in_progress(sub: str, tree: Tree) -> bool:
    names = _IN_PROGRESS.get(sub, ())
    if not names:
        return True
    found = _git(tree.top, tree.ctx, "rev-parse",
                 *(part for name in names for part in ("--git-path", name)))
    return any(os.path.lexists(os.path.join(tree.top, path))
               for path in found.split("\n") if path)


def _switch_to(sub: str, targets: list[str], scope: list[str], tree: Tree, *,
               forced: bool) -> Finding | str:
    """Switching (or merging, rebasing) to each target leaves a protected file alone when
    the target holds the version HEAD holds; forced, a local change is discarded too."""
    head = versions(tree, "HEAD", scope)
    for target in targets:
        changed = differs(head, versions(tree, target, scope))
        if changed:
            return refusal(sub, changed, tree)
    if forced:
        changed = _local_change(tree, scope, head)
        if changed:
            return refusal(sub, changed, tree)
    return PROBED


def _local_change(tree: Tree, scope: list[str], head: dict[str, str]) -> str | None:
    """A tracked protected file whose work-tree or staged version is not HEAD's."""
    index = staged(tree, scope)
    tracked = set(head) | set(index)
    disk = on_disk(tree, scope)
    return differs(head, index, within=tracked) or differs(head, disk, within=tracked)


def _switch(sub, flags, values, words, paths, tree: Tree) -> Finding | str:
    forced = bool(flags & {"-f", "--force", "--discard-changes"})
    new_branch = values.keys() & {"-b", "-B", "--orphan", "-c", "-C", "--create",
                                  "--force-create"}
    if sub == "checkout" and (paths is not None or (words and not resolves(tree, words[0]))
                              or len(words) > 1):
        # `checkout [TREE] -- PATH...`: each path back to TREE's (or the index's) version
        source = words[0] if words and resolves(tree, words[0]) else None
        specs = (paths if paths is not None else []) + (words[1:] if source else words)
        return _restore_paths(sub, source, specs, tree, overlay=True)
    scope = in_scope(tree, None)
    if new_branch and not words:
        if not forced:
            tree.ctx.git_minus = True
            return READS  # a new branch where HEAD is: nothing is written
        words = ["HEAD"]
    return _switch_to(sub, words[:1] or ["HEAD"], scope, tree, forced=forced)


def _restore(flags, values, specs, tree: Tree) -> Finding | str:
    worktree = bool(flags & {"-W", "--worktree"}) or not flags & {"-S", "--staged"}
    if not worktree:
        return CHANGES  # the index only
    source = values.get("-s") or values.get("--source")
    return _restore_paths("restore", source, specs, tree, overlay=False)


def _restore_paths(sub: str, source: str | None, specs: list[str], tree: Tree, *,
                   overlay: bool) -> Finding | str:
    """Paths put back to `source`'s version (the index's when None); without overlay, a
    tracked file the source lacks is deleted."""
    scope = in_scope(tree, specs)
    if not scope:
        return CHANGES
    wanted = versions(tree, source, scope) if source else staged(tree, scope)
    disk = on_disk(tree, scope)
    within = set(wanted) if overlay else set(wanted) | set(staged(tree, scope))
    changed = differs(wanted, disk, within=within)
    return refusal(sub, changed, tree) if changed else PROBED


def _reset(sub: str, target: str, scope: list[str], tree: Tree) -> Finding | str:
    """The work tree made like `target`: every file it or the index tracks."""
    wanted = versions(tree, target, scope)
    within = set(wanted) | set(staged(tree, scope))
    changed = differs(wanted, on_disk(tree, scope), within=within)
    return refusal(sub, changed, tree) if changed else PROBED


def _stash(flags, words, paths, tree: Tree) -> Finding | str:
    action = words[0] if words else "push"
    if action in ("drop", "clear", "store"):
        return CHANGES
    if action in ("pop", "apply", "branch"):
        stash = words[2 if action == "branch" else 1:][:1] or ["stash@{0}"]
        ref = f"stash@{{{stash[0]}}}" if stash[0].isdigit() else stash[0]
        scope = in_scope(tree, None)
        found = parents(tree, ref)
        mine = versions(tree, ref, scope)
        changed = differs(versions(tree, found[0], scope), mine) if found else None
        if not changed and len(found) > 2:
            changed = next(iter(sorted(versions(tree, found[2], scope))), None)
        if not changed and action == "branch" and found:
            changed = differs(versions(tree, "HEAD", scope), versions(tree, found[0], scope))
        return refusal(f"stash {action}", changed, tree) if changed else PROBED
    specs = paths if paths is not None else (words[1:] if action == "push" else [])
    scope = in_scope(tree, specs or None)
    if not scope:
        return CHANGES
    head = versions(tree, "HEAD", scope)
    changed = _local_change(tree, scope, head)
    if not changed and flags & {"-u", "--include-untracked", "-a", "--all"}:
        tracked = set(head) | set(staged(tree, scope))
        loose = [path for path in on_disk(tree, scope) if path not in tracked]
        if flags & {"-a", "--all"}:
            changed = next(iter(loose), None)
        else:
            spared = ignored(tree, loose)
            changed = next((path for path in loose if path not in spared), None)
    return refusal("stash", changed, tree) if changed else PROBED


def _clean(flags, values, specs, tree: Tree) -> Finding | str:
    """Untracked files under the pathspec (the working directory when none) removed: the
    ignored ones too with -x, only those with -X."""
    if not specs:
        specs = ["."]
    scope = in_scope(tree, specs)
    if not scope:
        return CHANGES
    tracked = set(staged(tree, scope))
    loose = [path for path in on_disk(tree, scope) if path not in tracked]
    if not loose:
        return PROBED
    everything = "-x" in flags or any(pattern.startswith("!") for pattern in
                                      values.values())
    if everything:
        return refusal("clean", loose[0], tree)
    spared = ignored(tree, loose)
    for path in loose:
        if (path in spared) == ("-X" in flags):
            return refusal("clean", path, tree)
    return PROBED
