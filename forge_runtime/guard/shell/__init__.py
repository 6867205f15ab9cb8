"""The shell model: what a Bash command would do to protected paths, read instead of run.

The guard asks it one question, `analyse` (decide.py); everything else is the model's own.
Its modules are in layers, and each imports only from the layers below it:

    text      lexer    shlex's posix word splitting and quoting, without importing re
              syntax   a command's text as pipelines of simple commands, substitutions
                       lifted out
    words     words    one word's values: braces, sequences, `~`, parameters, bounded
    state     state    what the shell knows between commands (working directories,
                       variables, glob options, links), how a word becomes paths, and
                       what every model asks of its operands (writes, deletes, options,
                       code it runs for you)
    models    files    the file tools: readers, writers, copies, sed, find, xargs, forge
              git      git, git_tree for what git says its history would write, and
                       git_refs for forge's refs on a remote
              archives archivers and patch
              hosts    the host CLIs' off switches
              awk      what an awk program writes and runs
    walk      walk     follows the shell from command to command as bash would, and
                       names the family that models each command

A model may use a family beside it (git's `mv` is the copy model) but never the walk: code
a program runs for you is judged by the walk's child shell, which the walk hands down on
the Context. tests/test_architecture.py holds these layers (ARCHITECTURE.md's second
table). They are few on purpose: each module is one more load on every Bash call.

Nothing is imported here: the hooks import single modules of the model (a SessionStart
quotes a path with `lexer`), and a Bash call imports the walk through `analyse`.
"""

TYPE_CHECKING = False  # `typing` and `__future__` are imports of their own on every Bash call
if TYPE_CHECKING:  # annotations only: the walk is imported when a command is analysed
    from forge_runtime.protected.paths import Finding, Protected


def analyse(command: str, cwd: str, env: dict[str, str],
            protected: "list[Protected]") -> "Finding | None":
    """The first reason to refuse `command` (a paths.Finding), or None when it touches no
    protected path (see walk.analyse)."""
    from forge_runtime.guard.shell.walk import analyse as walk

    return walk(command, cwd, env, protected)
