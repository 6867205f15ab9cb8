"""What a Bash command would do to protected paths, read as a model of the shell instead of run.

The analysis has its parts in this package (see its __init__): `syntax` splits the text
into pipelines of simple commands and the operators between them; `words` values one word
(braces, sequences, `~`, parameters), bounded before it expands; `state` holds what the
shell knows between commands (possible working directories, variables, glob options,
links it made) and turns words into paths, and answers what every command model asks of
its operands; the command models (the table below names which) say what each known
command does to its operands. This module walks the command: it
follows the state from command to command as bash would, and dispatches each simple
command.

It is the early, explaining layer of the guard, not the last one: a shell is a
programming language, and code forge cannot read (a script file, `python -c`) may still
write anything the Bash tool can. The host's kernel sandbox is what makes the ledger
read-only whatever runs (see `forge sandbox`). What the model does:

- it values variables only from what the command sets and from the few the Bash tool
  shares with the hook (`HOME`, `USER`, `LOGNAME`, `TMPDIR`); `read`, `set --`,
  `mapfile`, function arguments, `$(...)` and `${x%y}` make a value unknown, and IFS is
  honoured when an expansion is split into words;
- it follows `cd` wherever the shell could be: a `cd` can fail, a command after `&&`,
  `||` or inside `if`/`while` may not run, a pipeline's and a background job's `cd` ends
  with it, `eval` and `source` run in the same shell, `env -C` and `sudo -D` move one
  command;
- a command that writes, deletes or re-permissions a path it cannot value, from a
  directory that holds a protected path, is refused; so are paths that resolve into one
  after `~`/`~+`/`~-`, braces, `{a..b}`, globs under the options the command turns on
  (`dotglob`, `GLOBIGNORE`, ...), `..`, symlinks (also ones the same command makes) and
  `/proc/self/cwd`;
- every option of a tool that writes a file or runs a program (`sort -o`, `split
  --filter`, `git diff --output`, `git grep -O`) is a row of its family's table, read by
  one rule however it is spelled (`state.check_options`), before the command's model;
- commands it models only (readers, `cp`, `mv`, `tar`, `sed`, `git`, `find`, ...) may
  work inside `.forge/local`; anything else (an interpreter, `make`) may not run in a
  pipeline that names a protected location, nor beside forge's own entry points;
- code it cannot read is refused where it could reach a protected path: a shell reading
  its program from its input (`curl ... | sh`) or from a file the command makes, a
  process substitution, `BASH_ENV`, a variable that loads code or another repository, and
  code a program runs for you (`core.sshCommand`, `tar -I`) that is not code forge
  models (`run_for_you`); so is a tar or unzip option forge does not know (its members
  may not land where their names say), a global git option or a GIT_* variable it does
  not know;
- git that writes the work tree from history is judged on what git itself says
  (`git_tree`), and only when nothing else in the command changes git's state;
- forge's hook-side entry points (`forge ledger activate|charge`, `forge mode exit`,
  `forge init --force`, `forge sandbox disable`, the hook launcher) and the host CLIs' off
  switches (`claude plugin disable forge`, `codex features disable hooks`: `hosts`)
  are refused however their words are spelled.
"""

import os
import sys

from forge_runtime import safeio
from forge_runtime.guard.shell import files
from forge_runtime.guard.shell import words as shell_words
from forge_runtime.guard.shell.lexer import is_word_char
from forge_runtime.guard.shell.state import (
    UNKNOWN_VALUE,
    Context,
    OutOfTime,
    candidates,
    check_options,
    check_unmodelled,
    check_write,
    expansions,
    in_sensitive_dir,
    known_program,
    mentions,
    risky_unknown,
    run_for_you,
    shell_env,
    split,
    touches,
    union,
)
from forge_runtime.guard.shell.syntax import (
    LIFTED,
    SUBSHELL_CLOSE,
    SUBSHELL_OPEN,
    Pipeline,
    Simple,
    lift_substitutions,
    parse,
    strip_reserved,
)
from forge_runtime.protected.paths import Finding, Protected

SHELLS = frozenset({"sh", "bash", "zsh", "dash", "ksh", "fish", "rbash", "mksh", "yash",
                    "ash", "csh", "tcsh", "posh"})
# Programs that run a shell command given as an option (`script -c CMD`; `flock F -c CMD`
# is unwrapped) or as their operands (`tmux new CMD`, `screen -dm CMD`).
COMMAND_OPTIONS = {"script": ("-c", "--command")}
MULTIPLEXERS = frozenset({"tmux", "screen"})
DECLARERS = frozenset({"export", "declare", "typeset", "local", "readonly"})
# Builtins that set variables to values forge cannot know: name options, then names.
READERS_OF_INPUT = {"read": "adnNptu", "mapfile": "dnOsuCc", "readarray": "dnOsuCc",
                    "getopts": ""}
DEFAULT_NAMES = {"read": "REPLY", "mapfile": "MAPFILE", "readarray": "MAPFILE"}
# Wrappers that run the rest of the line as a command; value = options taking an argument.
WRAPPERS = {
    "sudo": frozenset({"-u", "-g", "-C", "-D", "-h", "-p", "-r", "-t", "-U", "--chdir",
                       "--user", "--group"}),
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
    "watch": frozenset({"-n", "--interval"}), "chroot": frozenset(),
    "unshare": frozenset(), "nsenter": frozenset({"-t"}), "fakeroot": frozenset(),
    "unbuffer": frozenset(),
}
CHDIR_OPTIONS = frozenset({"-C", "--chdir", "-D"})  # env -C DIR, sudo -D DIR
WRAPPER_OPERAND = frozenset({"timeout", "flock", "chroot"})
ARGUMENT_FEEDERS = frozenset({"xargs", "parallel"})
STDIN_RUNNERS = frozenset({"at", "batch"})
# Variables whose value a program runs as shell code (git, pagers, editors, bash).
CODE_VARIABLES = frozenset({"GIT_EDITOR", "GIT_SEQUENCE_EDITOR", "GIT_PAGER", "GIT_SSH_COMMAND",
                            "GIT_EXTERNAL_DIFF", "GIT_ASKPASS", "GIT_SSH", "SSH_ASKPASS",
                            "EDITOR", "VISUAL", "PAGER", "MANPAGER", "LESSOPEN", "LESSCLOSE",
                            "PROMPT_COMMAND"})
# Variables bash expands as a double-quoted word, substitutions and all (`bash -x` prints
# PS4 before each command); the interactive prompts do not apply to the Bash tool.
PROMPT_VARIABLES = frozenset({"PS4"})
# Variables naming a file a shell runs before its own code (`BASH_ENV=x bash -c ...`).
SCRIPT_VARIABLES = frozenset({"BASH_ENV", "ENV"})
# Variables that load code forge cannot read into every program, or change how git reads
# its repository and configuration (the history and code it runs are then not the ones
# forge asked git about); a shell's options, which could turn on what forge does not model.
LOADER_VARIABLES = frozenset({"LD_PRELOAD", "LD_AUDIT", "GCONV_PATH", "SHELLOPTS",
                              "BASHOPTS", "GIT_EXEC_PATH", "GIT_CONFIG_PARAMETERS",
                              "GIT_CONFIG_GLOBAL", "GIT_CONFIG_SYSTEM", "GIT_CONFIG_COUNT",
                              "GIT_DIR", "GIT_WORK_TREE", "GIT_INDEX_FILE", "GIT_COMMON_DIR",
                              "GIT_OBJECT_DIRECTORY", "GIT_ALTERNATE_OBJECT_DIRECTORIES",
                              "GIT_NAMESPACE", "GIT_TEMPLATE_DIR"})
# Variables that only change what programs forge does not model anyway do.
SOFT_CODE_VARIABLES = frozenset({"LD_LIBRARY_PATH", "PERL5OPT", "NODE_OPTIONS",
                                 "PYTHONSTARTUP"})
GLOB_OPTIONS = frozenset({"dotglob", "globstar", "nocaseglob", "extglob", "expand_aliases"})
MAX_COMMAND = 100_000
_TIME_BUDGET_SECONDS = 3.0
_DEPTH_LIMIT = 8
_SCRIPT_LIMIT = 65_536
_SUBSTITUTIONS_LIMIT = 512
# forge's hook-side entry points named anywhere in a command, even inside a script it writes
# or in an interpreter's code (`main(['mode', 'exit'])`): a first word, then a second one
# after up to this many other characters, or one dotted name.
# The host CLIs' off switches too (`claude plugin disable`, `codex features disable hooks`):
# named beside code forge cannot read, or after a command word it cannot name, they are
# refused (hosts.py models `claude` and `codex` themselves).
_ENTRY_POINTS = (("mode", ("exit",)), ("ledger", ("activate", "charge")),
                 ("plugin", ("disable", "uninstall", "remove")),
                 ("plugins", ("disable", "uninstall", "remove")),
                 ("marketplace", ("remove", "rm")), ("features", ("disable",)),
                 ("disable", ("hooks",)))
_ENTRY_POINT_GAP = 8
_ENTRY_POINT_NAME = "modes.leave"


# -- the command models: which family models each command ----------------------------------
# A command family is a module of this package with a `MODELS` table, command name -> model
# `model(name, args, ctx, child)`, which returns a Finding or (are the command's effects
# modelled, does it name a protected path). `files` models most commands a session runs and
# is imported with the walk; the other families are imported the first time one of their
# commands runs (a Bash call that runs no git pays nothing for git's model), so their
# commands are named here. A new model is a function and its `MODELS` row in its family,
# plus its name in LAZY_FAMILIES when the family is a lazy one; a new family is a module
# and its row here. tests/test_guard_shell_models.py holds these names and the families'
# own tables to each other.
PACKAGE = "forge_runtime.guard.shell"
# The families imported only when one of their commands runs, and the commands they model.
LAZY_FAMILIES = {
    "git": frozenset({"git"}),
    "archives": frozenset({"tar", "bsdtar", "gtar", "unzip", "cpio", "zip", "patch", "pax",
                           "ar", "7z", "7za", "7zr", "7zz", "gzip", "gunzip", "pigz", "bzip2",
                           "bunzip2", "xz", "unxz", "lzma", "unlzma", "compress", "uncompress",
                           "lzip", "zstd", "unzstd", "lz4", "brotli"}),
    "hosts": frozenset({"claude", "codex"}),  # the host CLIs' off switches
    "awk": frozenset({"awk", "gawk", "mawk", "nawk"}),
}
# Command name -> the lazy family that models it (`files` models what files.MODELS names).
LAZY = {name: owner for owner, names in LAZY_FAMILIES.items() for name in names}


def family(name: str):
    """The module of family `name` (`__import__` and sys.modules: `importlib` is one more
    import for every Bash call)."""
    qualified = f"{PACKAGE}.{name}"
    __import__(qualified)
    return sys.modules[qualified]


def check_command(name: str, args: list[str], ctx: Context,
                  child) -> Finding | tuple[bool, bool]:
    """The model of command `name`; `child(code, ctx)` judges code it runs in a child.
    First, whatever the model: the options its family's OPTION_EFFECTS says write a file or
    run a program (`sort -o`, `split --filter`, `tar --to-command`)."""
    owner = LAZY.get(name) if name not in files.MODELS else None
    models = files if owner is None else family(owner)
    finding = check_options(name, args, models.OPTION_EFFECTS.get(name), ctx)
    if finding:
        return finding
    model = models.MODELS.get(name)
    if model is None:
        return check_unmodelled(name, args, ctx)
    return model(name, args, ctx, child)


def analyse(command: str, cwd: str, env: dict[str, str],
            protected: list[Protected]) -> Finding | None:
    """The first reason to refuse `command`, or None when it touches no protected path.

    Reading costs about 10 s per megabyte on this project's loaded 2-core machine, and the
    host lets a hook that times out through, so a command longer than MAX_COMMAND is refused
    unread (long content belongs in the Write tool).
    """
    if len(command) > MAX_COMMAND:
        return Finding(f"is {len(command)} characters long, more than forge reads "
                       f"({MAX_COMMAND}); write long content with the Write tool instead")
    if "\0" in command:
        return Finding("contains a NUL byte, which shells drop or cut at in different ways, "
                       "so forge cannot tell what runs")
    import time

    ctx = Context(cwd, shell_env(env, cwd), protected)
    ctx.child = _in_child_shell
    ctx.deadline = time.monotonic() + _TIME_BUDGET_SECONDS
    try:
        finding = _analyse(command, ctx)
    except OutOfTime:
        return Finding(f"takes forge longer than {_TIME_BUDGET_SECONDS:g} s to read, and the "
                       "host would let it through unread; split it into simpler commands")
    if finding is None and ctx.probed and (ctx.effects or len(ctx.probed) > 1):
        # each one changes what the next would find (HEAD, the index, what stash@{1} is)
        return Finding(f"runs {ctx.probed[-1]}, which forge lets through only on what git says "
                       "before the command runs, beside commands that may change git's state "
                       "first (a commit, a moved ref, another checkout or stash, a write into "
                       "the git dir, a program forge does not model); run it on its own")
    return finding


def _analyse(command: str, ctx: Context) -> Finding | None:
    """Walk `command` in the shell `ctx` describes, leaving `ctx` as the shell ends."""
    if ctx.depth > _DEPTH_LIMIT:
        return Finding("nests shells too deeply for forge to follow")
    names_entry_point = _names_entry_point(command)
    command, bodies = lift_substitutions(command)
    if len(bodies) > _SUBSTITUTIONS_LIMIT:
        return Finding(f"holds {len(bodies)} command substitutions, more than forge reads "
                       f"({_SUBSTITUTIONS_LIMIT}); split it into simpler commands")
    for body in bodies:
        finding = _in_child_shell(body, ctx)
        if finding:
            return finding
    pipelines = parse(command)
    if pipelines is None:
        if mentions(command):
            return Finding("cannot be parsed (unbalanced quotes) and names a protected path")
        return None
    outside: list[tuple] = []
    pending: tuple | None = None  # other states an and-or list may end in
    for pipeline in pipelines:
        if pipeline == SUBSHELL_OPEN:
            outside.append(ctx.snapshot())
            continue
        if pipeline == SUBSHELL_CLOSE:
            if outside:  # a `cd` or assignment in a subshell ends with it
                ctx.restore(outside.pop())
            continue
        before = ctx.snapshot()
        ctx.fallible = False
        outcome = _check_pipeline(pipeline, ctx)
        if isinstance(outcome, Finding):
            return outcome
        sensitive, unproven = outcome
        if unproven and sensitive:
            return Finding(f"names a protected location and runs {unproven}, which forge "
                           "cannot prove read-only")
        if unproven and names_entry_point:
            return Finding(f"names forge's hook-side commands or the host's off switches "
                           f"(`forge mode exit`, `claude plugin disable`) and runs {unproven}, "
                           "which forge cannot prove read-only")
        pending = _next_state(pipeline, ctx, before, pending)
    if pending is not None:
        ctx.restore(union(ctx.snapshot(), pending))
    return None


def _next_state(pipeline: Pipeline, ctx: Context, before: tuple,
                pending: tuple | None) -> tuple | None:
    """Carry the shell's state past `pipeline` as bash would: a pipeline of several
    commands and a background job run in subshells; after `&&` only success goes on, after
    `||` only failure; at the end of the and-or list every way it could have gone holds."""
    if len(pipeline) > 1 or pipeline.then == "&":
        ctx.restore(before)
    after = ctx.snapshot()
    failed = before if ctx.fallible else after
    if pipeline.then == "&&":
        return failed if pending is None else union(pending, failed)
    if pipeline.then == "||":
        ctx.restore(failed)
        return after if pending is None else union(pending, after)
    ends = union(after, failed)
    ctx.restore(ends if pending is None else union(ends, pending))
    return None


def _names_entry_point(command: str) -> bool:
    lowered = command.lower()
    if names_entry_point(lowered):
        return True
    if "$'" in command or "'" in command or '"' in command or "\\" in command:
        from forge_runtime.guard.shell.syntax import normalise

        unquoted = normalise(lowered).replace('"', "").replace("'", "").replace("\\", "")
        return names_entry_point(unquoted)
    return False


def names_entry_point(text: str) -> bool:
    """Does `text` hold `mode` and `exit` (or `ledger` and `activate` or `charge`) as whole
    words with 1 to 8 other characters between them, or the whole word `modes.leave`?
    Words as re's `\\w` has them: the regex `\\bmode\\W{1,8}exit\\b|...` this replaces."""
    for first, seconds in _ENTRY_POINTS:
        start = _word_starting(text, first, 0)
        while start != -1:
            gap = end = start + len(first)
            while end < len(text) and end - gap <= _ENTRY_POINT_GAP and \
                    not is_word_char(text[end]):
                end += 1
            if 1 <= end - gap <= _ENTRY_POINT_GAP and \
                    any(_word_ending(text, second, end) for second in seconds):
                return True
            start = _word_starting(text, first, start + 1)
    start = _word_starting(text, _ENTRY_POINT_NAME, 0)
    while start != -1:
        if _word_ending(text, _ENTRY_POINT_NAME, start):
            return True
        start = _word_starting(text, _ENTRY_POINT_NAME, start + 1)
    return False


def _word_starting(text: str, word: str, position: int) -> int:
    """The first place from `position` where `word` stands after no word character; -1."""
    start = text.find(word, position)
    while start > 0 and is_word_char(text[start - 1]):
        start = text.find(word, start + 1)
    return start


def _word_ending(text: str, word: str, position: int) -> bool:
    """Does `word` stand at `position`, with no word character after it?"""
    after = position + len(word)
    return text.startswith(word, position) and \
        (after == len(text) or not is_word_char(text[after]))


def is_assignment(word: str) -> bool:
    """`NAME=value`, `NAME+=value`, `NAME[index]=value`: a word the shell takes as a
    variable assignment (an index holds no `]`)."""
    if not word or word[0] not in shell_words.NAME_START:
        return False
    end = 1
    while end < len(word) and word[end] in shell_words.NAME_CHARS:
        end += 1
    if word.startswith("[", end):
        end = word.find("]", end + 1)
        if end == -1:
            return False
        end += 1
    if word.startswith("+", end):
        end += 1
    return word.startswith("=", end)


def _check_pipeline(pipeline: Pipeline, ctx: Context) -> Finding | tuple[bool, str | None]:
    """A Finding, or (does the pipeline name a protected place, its first unproven command)."""
    sensitive = False
    unproven: str | None = None
    finding = files.check_xargs_feed(pipeline, ctx, _command_words, _in_child_shell)
    if finding:
        return finding
    for index, simple in enumerate(pipeline):
        ctx.feed = (simple.stdin, simple.reads, pipeline[index - 1].words if index else None)
        finding = _check_redirects(simple, ctx)
        if finding:
            return finding
        finding = _check_code_variables(simple.words, ctx)
        if finding:
            return finding
        words = _assign(simple.words, ctx)
        if not words:
            continue
        ctx.stdin = simple.reads[-1] if simple.reads else None
        outcome = _check_simple(words, ctx)
        if isinstance(outcome, Finding):
            return outcome
        modelled, touched = outcome
        sensitive = sensitive or touched or mentions(
            " ".join(simple.words + simple.writes + simple.stdin))
        sensitive = sensitive or in_sensitive_dir(ctx)
        if not modelled:
            _record_unproven(words, ctx)
            unproven = unproven or os.path.basename(words[0])
    return sensitive, unproven


def _record_unproven(words: list[str], ctx: Context) -> None:
    """A command whose effects forge does not model may write any file it names (`curl -o
    x.sh`) and change git's state: what is on disk is not what a later command reads."""
    ctx.unproven += 1
    ctx.effects += 1
    for word in candidates(words[1:16]):
        ctx.made.update(path for path in expansions(word, ctx) if path)


def _check_redirects(simple: Simple, ctx: Context) -> Finding | None:
    echoed = len(simple.writes) == 1 and simple.words[:1] in (["echo"], ["printf"])
    unknown_before = echoed and bool(ctx.made) and any(
        path in ctx.made for path in expansions(simple.writes[0], ctx))
    for target, appends in zip(simple.writes, simple.appends, strict=True):
        finding = check_write(target, ctx, verb="writes to", appends=appends)
        if finding:
            return finding
    if echoed and not (unknown_before and simple.appends[0]):
        files.remember_text(simple.writes[0], simple.words, ctx, simple.appends[0])
    return None


def _check_code_variables(words: list[str], ctx: Context) -> Finding | None:
    """`GIT_EDITOR='rm -rf .git' git commit`, `export GIT_SSH_COMMAND=...`, `BASH_ENV=x.sh
    bash -c ...`: the value is code (or a file of code) a program runs later; judged now,
    as a child shell would run it, and refused where it could reach a protected path when
    forge cannot read it."""
    for word in words:
        if word in DECLARERS or word.startswith("-"):
            continue
        if not is_assignment(word):
            break
        finding = check_assignment(word, ctx)
        if finding:
            return finding
    return None


def check_assignment(word: str, ctx: Context) -> Finding | None:
    """One `NAME=value` given to a command (`X=1 cmd`, `export X=1`, `env X=1 cmd`)."""
    name, _, code = word.partition("=")
    name = name.rstrip("+")
    if name in CODE_VARIABLES:
        return run_for_you(code, ctx, f"${name}")
    if name in PROMPT_VARIABLES:
        return _in_child_shell('echo "' + code.replace('"', '\\"') + '"', ctx)
    if name in SCRIPT_VARIABLES:
        outcome = _run_script([code], ctx, same_shell=False)
        return outcome if isinstance(outcome, Finding) else None
    if (name in LOADER_VARIABLES or name.startswith(("BASH_FUNC_", "GIT_CONFIG_KEY_",
                                                       "GIT_CONFIG_VALUE_"))) \
            and risky_unknown("", ctx):
        return Finding(f"sets {name}, which makes the programs it runs load code or a "
                       "repository forge cannot read, from a directory that holds a "
                       "protected path")
    return None


def _assign(words: list[str], ctx: Context) -> list[str]:
    """Record leading `NAME=value` words (later words may use them); return the rest."""
    index = 0
    while index < len(words) and is_assignment(words[index]):
        _set_variable(words[index], ctx)
        index += 1
    return words[index:]


def _set_variable(assignment: str, ctx: Context) -> None:
    name, _, text = assignment.partition("=")
    appends = name.endswith("+")
    name = name.rstrip("+")
    if "[" in name:  # an array element: the array's value is no longer one forge knows
        ctx.env[name.split("[", 1)[0]] = UNKNOWN_VALUE
        return
    value = shell_words.value(text, ctx.env) if len(text) < shell_words.WORD_LIMIT else None
    if appends and value is not None:
        current = ctx.env.get(name, UNKNOWN_VALUE)
        value = None if current is None or "`" in current else current + value
    ctx.env[name] = UNKNOWN_VALUE if value is None else value
    if name == "GLOBIGNORE":
        ctx.globs |= {"dotglob"}  # bash: a non-empty GLOBIGNORE turns dotglob on
    if (name in CODE_VARIABLES and not known_program(text)) or name in SCRIPT_VARIABLES \
            or name in LOADER_VARIABLES or name in SOFT_CODE_VARIABLES:
        ctx.runs_code = True  # what it runs was judged where it was set, not proven


def _check_simple(words: list[str], ctx: Context) -> Finding | tuple[bool, bool]:
    """A Finding, or (are the command's effects modelled, does it name a protected path)."""
    words, via_xargs, chdir, assignments = _unwrap(strip_reserved(words))
    for assignment in assignments:  # `env X=1 cmd`: as `X=1 cmd`
        finding = check_assignment(assignment, ctx)
        if finding:
            return finding
        if is_assignment(assignment):
            _set_variable(assignment, ctx)
    if not words:
        return True, False
    if chdir is not None:
        state = ctx.snapshot()
        files.change_dir([chdir], ctx)
        try:
            return _check_simple(words, ctx)
        finally:
            ctx.restore(state)
    if "$" in words[0] or "`" in words[0]:
        named = _command_name(words[0], ctx)
        if named is None:
            return files.check_unknown_command(words[0], words[1:], ctx)
        words = [*named, *words[1:]]
        if not words:
            return True, False
    name = os.path.basename(words[0])
    # A shell's `-c CODE` (and a runner's command) is one word whatever `$` it holds: split,
    # `sh -c 'rm -rf "$PWD/.git"'` would read as `sh -c rm` and the code would go unread.
    code_runner = name in SHELLS or name == "su" or name in COMMAND_OPTIONS or \
        name in MULTIPLEXERS
    args = list(words[1:]) if code_runner else _split_fields(words[1:], ctx)
    outcome = _check_named(name, args, ctx, via_xargs)
    if ctx.runs_code and name not in files.READERS and not isinstance(outcome, Finding):
        return False, outcome[1]  # its effects are modelled, what the variable runs is not
    return outcome


def _check_named(name: str, args: list[str], ctx: Context,
                 via_xargs: bool) -> Finding | tuple[bool, bool]:
    state_change = _change_state(name, args, ctx)
    if state_change is not None:
        return state_change
    forge_args = files.forge_args(name, args)
    if forge_args is not None:
        outcome = files.check_forge(forge_args, ctx)
        # `... | xargs forge`: the subcommand comes from the input, forge cannot read it
        return outcome if isinstance(outcome, Finding) or not via_xargs else (False, False)
    if name in SHELLS or name == "su":
        return _check_shell(name, args, ctx)
    if name in COMMAND_OPTIONS or name in MULTIPLEXERS:
        return _check_command_runner(name, args, ctx)
    if name in STDIN_RUNNERS:
        script = args[args.index("-f") + 1:][:1] if "-f" in args else []
        return _run_script(script, ctx, same_shell=False) if script else \
            _run_input(name, ctx)
    return check_command(name, args, ctx, _in_child_shell)


def _command_name(word: str, ctx: Context) -> list[str] | None:
    """The words an unquoted expansion in command position becomes (split at IFS)."""
    value = shell_words.value(word, ctx.env)
    ifs = ctx.env.get("IFS") if "IFS" in ctx.env else None
    if value is None or (ifs is not None and "`" in ifs):
        return None
    return shell_words.fields(value, ifs)


def _split_fields(args: list[str], ctx: Context) -> list[str]:
    """Arguments as bash splits an unquoted expansion: `x='-rf .git'; rm $x` is
    `rm -rf .git`. forge cannot see the quotes shlex removed, so it splits every one (a
    quoted `"$x"` is then read as more words than it is, never fewer)."""
    if not any("$" in arg for arg in args):
        return args
    split: list[str] = []
    for arg in args:
        fields = _command_name(arg, ctx) if "$" in arg else None
        if fields is None:
            split.append(arg)
        else:
            split.extend(fields)
    return split


def _change_state(name: str, args: list[str], ctx: Context) -> tuple[bool, bool] | None:
    """Builtins that change the shell's state rather than files; None for other commands."""
    if name in DECLARERS:
        for arg in args:
            if is_assignment(arg):
                _set_variable(arg, ctx)
        if any(arg.startswith("-") and "n" in arg for arg in args):  # a nameref: unknown
            for arg in args:
                if not arg.startswith("-"):
                    ctx.env[arg.split("=", 1)[0]] = UNKNOWN_VALUE
        return True, False
    if name == "unset":
        for arg in args:
            if not arg.startswith("-"):
                ctx.env[arg] = None
        return True, False
    if name in READERS_OF_INPUT or (name == "printf" and "-v" in args):
        for variable in _input_names(name, args):
            ctx.env[variable] = UNKNOWN_VALUE
        return True, False
    if name == "set":
        return True, False  # `set -- ...` sets positional parameters, which are never valued
    if name == "shopt":
        options = {a for a in args if not a.startswith("-")} & GLOB_OPTIONS
        ctx.globs = ctx.globs - options if "-u" in args else ctx.globs | options
        return True, False
    if name in ("for", "select") and len(args) >= 2 and args[1] == "in":
        ctx.loops[args[0]] = args[2:66]
        ctx.env[args[0]] = UNKNOWN_VALUE
        return True, touches(args[2:], ctx)
    if name in ("cd", "pushd"):
        files.change_dir(args, ctx)
        return True, False
    if name == "popd":
        ctx.fallible = True
        ctx.move_to([None])  # forge keeps no directory stack: unknown from here on
        return True, False
    if name in ("alias", "hash", "enable", "trap") and args:
        return _check_deferred_code(name, args, ctx)
    if name == "eval":
        if any("`" in arg for arg in args):
            return _unknown_code("eval", ctx)
        return _nested_same_shell(" ".join(args), ctx) or (True, False)
    if name in ("source", "."):
        return _run_script(args, ctx, same_shell=True)
    if name == "case":
        return True, False  # `case WORD in PATTERN`: the commands after `)` are checked
    return None


def _unknown_code(what: str, ctx: Context) -> Finding | tuple[bool, bool]:
    """Code forge cannot read before it runs (`bash -c "$(...)"`, `eval $(...)`, `curl ... |
    sh`, `source <(...)`, a script the command fetches): refused where it could reach a
    protected path, else code forge cannot prove read-only."""
    if risky_unknown("", ctx):
        return Finding(f"runs {what}, code forge cannot read before it runs (made at run "
                       "time, by a substitution or another program), from a directory that "
                       "holds a protected path")
    return False, False


def _input_names(name: str, args: list[str]) -> list[str]:
    if name == "printf":
        return [args[args.index("-v") + 1]] if args.index("-v") + 1 < len(args) else []
    if name == "getopts":
        return [*args[1:2], "OPTARG", "OPTIND"]
    takes_value = READERS_OF_INPUT[name]
    names, position = [], 0
    while position < len(args):
        arg = args[position]
        position += 1
        if arg.startswith("-") and len(arg) > 1:
            if arg[-1] in takes_value and position < len(args):
                if arg[-1] == "a":
                    names.append(args[position])
                position += 1
            continue
        names.append(arg)
    return names or [DEFAULT_NAMES[name]]


def _check_deferred_code(name: str, args: list[str], ctx: Context) -> Finding | tuple:
    """Code the shell keeps to run later (a trap, an alias, a hashed path, a loaded
    builtin) is judged now, as if it ran where it is defined."""
    if name == "trap":
        code = next((arg for arg in args if not arg.startswith("-")), "")
        return _nested_same_shell(code, ctx) or (True, False)
    if name == "alias":
        for arg in args:
            _, _, code = arg.partition("=")
            finding = code and _nested_same_shell(code + " x", ctx)
            if finding:
                return finding
        return True, False
    return False, False  # `hash -p PATH NAME`, `enable -f LIB`: code forge cannot read


def _check_shell(name: str, args: list[str], ctx: Context) -> Finding | tuple[bool, bool]:
    """`bash -c CODE`, combined flags (`-lc`, `-ec`), `-O dotglob`, `--rcfile FILE`, a
    script file, or (no script, or `-s`) a program read on its input."""
    options = frozenset()
    position, runs_code, from_input = 0, False, False
    while position < len(args) and args[position].startswith(("-", "+")) \
            and args[position] not in ("-", "--"):
        option = args[position]
        position += 1
        if option in ("--rcfile", "--init-file") and position < len(args):
            outcome = _run_script(args[position:position + 1], ctx, same_shell=False)
            if isinstance(outcome, Finding):
                return outcome
            position += 1
        elif option in ("-o", "+o", "-O", "+O") and position < len(args):
            if option == "-O" and args[position] in GLOB_OPTIONS:
                options |= {args[position]}
            if option == "-o" and args[position] == "noexec":
                return True, False  # reads the program, runs none of it: a dry run
            position += 1
        elif option.startswith("-") and not option.startswith("--") and "n" in option \
                and "i" not in option:
            return True, False  # `bash -n`: reads the program, runs none of it
        elif not option.startswith("--") and "c" in option:
            runs_code = True
        elif not option.startswith("--") and "s" in option:
            from_input = True
    if position < len(args) and args[position] in ("-", "--"):
        from_input = from_input or args[position] == "-"
        position += 1
    if runs_code and position < len(args):
        if shell_words.value(args[position], {}) is None and "`" in args[position]:
            return _unknown_code(f"{name} -c", ctx)
        code = files.positional(args[position], args[position + 1:])
        state = ctx.snapshot()
        ctx.globs |= options
        try:
            return _in_child_shell(code, ctx) or (True, False)
        finally:
            ctx.restore(state)
    if position < len(args) and not from_input:
        return _run_script(args[position:], ctx, same_shell=False)
    return _run_input(name, ctx)


def _check_command_runner(name: str, args: list[str], ctx: Context) -> Finding | tuple:
    """`script -c CMD [FILE]`: CMD runs in `sh -c`
    (and script writes its typescript FILE); `tmux`/`screen` run their operands as a
    command, judged when forge can read them."""
    if name in MULTIPLEXERS:
        if any(shell_words.value(arg, ctx.env) is None for arg in args):
            return _unknown_code(f"{name} on a command made at run time", ctx)
        return False, touches(candidates(args), ctx)
    code = None
    for index, arg in enumerate(args):
        option, equals, value = arg.partition("=")
        if option in COMMAND_OPTIONS[name]:
            code = value if equals else (args[index + 1] if index + 1 < len(args) else "")
            break
    if name == "script":
        operands = [arg for arg in args if not arg.startswith("-") and arg != code]
        for word in operands[-1:] or ["typescript"]:
            finding = check_write(word, ctx, verb="runs script writing")
            if finding:
                return finding
    if code is None:
        return _run_input(name, ctx) if name == "script" else (False, False)
    return _check_shell("sh", ["-c", code], ctx)


def _run_input(name: str, ctx: Context) -> Finding | tuple[bool, bool]:
    """A shell (or `at`) running the program it reads on its input: here-strings and
    heredocs, `<` files, `echo`/`printf`/`cat FILE` before it in the pipeline, as forge
    reads them; anything else (`curl ... | sh`, `base64 -d | bash`) is code it cannot read."""
    here, reads, before = ctx.feed
    if not here and not reads and before is None:
        # nothing in sight: what the shell reads comes from around it (`{ sh; } < x`,
        # `bash -c sh < x`), which forge does not follow
        return _unknown_code(f"{name} reading its program from its input", ctx)
    texts: list[str | None] = list(here)
    texts += ["" if word == "/dev/null" else _script_text(path, ctx) for word in reads
              for path in expansions(word, ctx)]
    if before is not None:
        texts += _printed_text(before, ctx)
    for text in texts:
        if text is None or LIFTED in text:
            return _unknown_code(f"{name} reading its program from its input", ctx)
        finding = _in_child_shell(text, ctx)
        if finding:
            return finding
    return True, False


def _printed_text(words: list[str], ctx: Context) -> list[str | None]:
    """What the command before a shell in a pipeline writes to it, when forge can tell:
    `echo` and `printf` their words, `cat` its files; None for anything else."""
    words, _ = _command_words(words)
    name = os.path.basename(words[0]) if words else ""
    if name in ("echo", "printf"):
        return [" ".join(a for a in words[1:] if a not in ("-e", "-n", "-en", "-ne"))
                .replace("\\n", "\n")]
    if name == "cat" and words[1:] and not any(a.startswith("-") for a in words[1:]):
        return [_script_text(path, ctx) for word in words[1:] for path in expansions(word, ctx)]
    return [None]


def _script_text(path: str | None, ctx: Context) -> str | None:
    """The text of a script file as it will run: what the command itself wrote there, or
    a small text file on disk that nothing in the command rewrites; else None."""
    if path is None or path in ctx.made:
        return None
    if path in ctx.written:
        return ctx.written[path]
    try:
        if not os.path.isfile(path) or os.path.getsize(path) > _SCRIPT_LIMIT:
            return None
        with safeio.reader(path, encoding="utf-8", follow_links=True) as handle:
            return handle.read()
    except (OSError, UnicodeDecodeError):
        return None


def _run_script(args: list[str], ctx: Context, *, same_shell: bool) -> Finding | tuple:
    """A shell running a script file: read it when forge can (the command wrote it, or it
    is a small text file nothing in the command rewrites); one it cannot read (a path from
    a substitution, `<(...)`, `/dev/stdin`, a file the command makes or fetches, a large
    or missing one) is code it cannot read."""
    if not args:
        return True, False
    for path in expansions(args[0], ctx):
        code = _script_text(path, ctx)
        if code is None:
            return _unknown_code(f"the script {args[0]}", ctx)
        code = files.positional(code, args)
        finding = _nested_same_shell(code, ctx) if same_shell else _in_child_shell(code, ctx)
        if finding:
            return finding
    return True, False


def _nested_same_shell(code: str, ctx: Context) -> Finding | None:
    """`eval CODE`, `source FILE`: the code runs in this shell; its `cd` holds after it."""
    ctx.depth += 1
    try:
        return _analyse(code, ctx)
    finally:
        ctx.depth -= 1


def _in_child_shell(code: str, ctx: Context) -> Finding | None:
    """`bash -c CODE`, `$(CODE)`: a child shell, whose state ends with it."""
    state = ctx.snapshot()
    ctx.depth += 1
    try:
        return _analyse(code, ctx)
    finally:
        ctx.depth -= 1
        ctx.restore(state)


def _unwrap(words: list[str]) -> tuple[list[str], bool, str | None, list[str]]:
    """Strip `sudo`, `env`, `nohup`, `xargs` and the like down to the command they run;
    also say whether `xargs` runs it (with arguments read from its input), where `env -C
    DIR` / `sudo -D DIR` run it, and the variables `env NAME=value` gives it (any name
    env takes, `BASH_FUNC_f%%` included)."""
    chdir = None
    assignments: list[str] = []
    while words and os.path.basename(words[0]) in WRAPPERS:
        wrapper = os.path.basename(words[0])
        takes_value = WRAPPERS[wrapper]
        rest = words[1:]
        while rest and (rest[0].startswith("-") or is_assignment(rest[0]) or (
                wrapper in ("env", "sudo") and "=" in rest[0].lstrip("="))):
            option = rest.pop(0)
            if option == "--":
                break
            if not option.startswith("-"):
                assignments.append(option)
                continue
            if option.startswith("--split-string="):  # env -S 'rm -rf x' runs rm
                rest = split(option.split("=", 1)[1]) + rest
            elif option.startswith("--chdir="):
                chdir = option.split("=", 1)[1]
            elif option.startswith("-C") and wrapper == "env" and len(option) > 2:
                chdir = option[2:]
            elif option in ("-S", "--split-string") and rest:
                rest = split(rest.pop(0)) + rest
            elif option in takes_value and rest:
                value = rest.pop(0)
                if option in CHDIR_OPTIONS and wrapper in ("env", "sudo"):
                    chdir = value if (wrapper, option) != ("sudo", "-C") else chdir
        if wrapper in WRAPPER_OPERAND and rest:
            rest.pop(0)
        if wrapper == "flock" and rest[:1] in (["-c"], ["--command"]):
            rest = ["sh", "-c", *rest[1:]]  # `flock FILE -c CMD` runs CMD in a shell
        if wrapper == "nice" and rest and rest[0].lstrip("-").isdigit():
            rest.pop(0)
        if wrapper in ARGUMENT_FEEDERS:
            rest = [word for word in rest if word not in (":::", "::::")]  # parallel's lists
            return rest or ["echo"], True, chdir, assignments  # xargs alone echoes its input
        words = rest
    return words, False, chdir, assignments


def _command_words(words: list[str]) -> tuple[list[str], bool]:
    """The command a simple command runs, read without recording its assignments: for the
    pipeline-wide checks that look at each command before it runs."""
    found, via_xargs, _, _ = _unwrap(
        strip_reserved([word for word in words if not is_assignment(word)]))
    return found, via_xargs
