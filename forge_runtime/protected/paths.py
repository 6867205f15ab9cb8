"""The paths no agent may write, and how a path an agent names is matched against them.

Protected, for every role including an unguarded main session:
- the goal ledger (`Project.ledger_root`, normally `<git common dir>/forge-goals/`);
- forge's guard files: the guard directory (main-session modes, the rule cache) and the
  project rule file `.forge/guard.yaml`;
- the `goal:` front matter of `.forge/local/state.md` (its Markdown body stays editable);
- the goal witness outside the work tree (`forge_runtime.goal.sync.witness.witness_root()`);
- the person's forge settings outside the work tree (`roots.config_dir()`: the channels
  a goal's end is sent through, notify/config.py);
- the files that tell git where a work tree's repository is, which forge holds against
  the layout (goal/sync/ledger_location.py): the git dir's `commondir`, a linked worktree's `.git`
  file, and those of every other linked worktree of the repository;
- the host's own off switches (`host_paths`): its settings files at every scope, the
  plugin install tree and data (forge's code and its hook interpreter, forge-env), and
  Codex's home (config, hooks, goal store) and the project's `.codex` config and hooks,
  and the code forge's hooks run (its plugin directory and this package).
  A settings file or a Codex `config.toml` may still be edited with the file tools: the
  resulting content is judged (`host_settings`); every other write is refused.

A path is compared after what the shell or the host would do to it: `~` and `$VAR`
expansion, joining a relative path to the working directory, `..` and symlinks resolved
(`os.path.realpath`). Destroying, moving or re-permissioning a directory that holds a
protected path (`rm -rf .git`) counts as touching it. Hard links are not visible to
`realpath`, which is why `ln` with a protected source is refused too (see guard/shell/walk.py).
"""

import os

from forge_runtime.protected import host_loaded
from forge_runtime.protected.host_loaded import CODEX_CONFIG as CODEX_CONFIG
from forge_runtime.protected.host_loaded import DEFINITIONS as DEFINITIONS
from forge_runtime.protected.host_loaded import MANAGED_DIR as MANAGED_DIR
from forge_runtime.protected.host_loaded import SETTINGS as SETTINGS
from forge_runtime.protected.host_loaded import TREE as TREE
from forge_runtime.records import record
from forge_runtime.roots import FORGE_DIR, config_dir, ledger_root, witness_dir

GUARD_DIR_NAME = "forge-guard"
RULE_FILE = "guard.yaml"

LEDGER_LABEL = "the goal ledger"
WITNESS_LABEL = "forge's goal witness"
CONFIG_LABEL = "forge's settings of this user (where a goal's end is sent)"
CONFIG_RATIONALE = ("the person chooses where forge tells them how a goal ended, in their own "
                    "terminal or editor; an agent never chooses a channel or a command")
FRONT_MATTER = "front matter"
SWITCH_OFF = "this would switch forge off"
HOST_FIX = "forge sandbox status"

# forge's entry points the host runs (hooks, the status line): fed an agent's input they
# would write the ledger's and the plan's records (goal/hosts/plan_readings.py) through forge's code
HOST_ENTRY_POINTS = ("forge_runtime.hooks", "forge_runtime.statusline")
# Words whose mere mention makes a shell command sensitive (it must then be provably
# read-only), the host's entry points among them. Generic names such as `state.md` are
# matched by resolved path instead.
# The host's homes count by their names, however a program builds the rest of the path
# (`os.path.join(home, ".claude", "settings.json")`, `$CODEX_HOME + "/config.toml"`).
MARKERS = ("forge-goals", "forge-guard", ".forge/local", ".forge/guard", "forge-hook",
           ".config/forge", "notify.yaml",
           *HOST_ENTRY_POINTS, "goal-ledger", ".claude", "claude_config_dir",
           "managed-settings", "forge-env", ".codex", "codex_home", "enabledplugins",
           "disableallhooks", ".mcp.json", ".agents/", ".bashrc", ".bash_profile",
           ".bash_login", ".profile", ".zshrc", ".zshenv", ".zprofile", ".zlogin")


# `project` arguments below are a `forge_runtime.project.Project` or `roots.locate()`'s
# strings, unannotated so that the hook need not import `project` to decide.

# Records (forge_runtime/records.py), not dataclasses or named tuples: `dataclasses` imports
# `inspect`, `collections` a few modules more, which every tool call would pay.
class Protected(record("Protected", "path label kind fix rationale", defaults=(None,))):
    """One protected path: what it is called in messages, the command to use instead and
    (when not the ledger's) why it is protected."""

    __slots__ = ()


class Finding(record("Finding", "message entry", defaults=(None,))):
    """Why a tool call is refused: what it would do, and the protected entry (when known)."""

    __slots__ = ()


def guard_dir(project) -> str:
    """Where forge keeps main-session modes and the rule cache: beside the ledger (takes
    `roots.locate()`'s strings too, the guard's allow path)."""
    if project[2] is not None:
        return os.path.join(project[2], GUARD_DIR_NAME)
    return os.path.join(project[0], FORGE_DIR, "local", "guard")


def rule_file(project) -> str:
    """`.forge/guard.yaml` of a Project (or of `roots.locate()`'s strings)."""
    return os.path.join(project[0], FORGE_DIR, RULE_FILE)


def protected_paths(project, extra: tuple[str, ...] = (),
                    env: dict[str, str] | None = None) -> list[Protected]:
    """Every protected path of `project` (a Project or `roots.locate()`'s strings: the guard
    decides without `pathlib`), resolved; `extra` are project-rule additions; `env` is
    where the host's home directories are read from (the hook's environment)."""
    root, git_dir, git_common_dir = project
    found = [
        Protected(os.path.realpath(ledger_root(root, git_common_dir)), LEDGER_LABEL, TREE,
                  "forge goal status"),
        Protected(os.path.realpath(guard_dir(project)), "forge's guard files", TREE,
                  "forge guard roles"),
        Protected(os.path.realpath(rule_file(project)), "forge's guard rule file", TREE,
                  "forge guard roles"),
        Protected(os.path.realpath(os.path.join(root, FORGE_DIR, "local", "state.md")),
                  "the goal fields of state.md", FRONT_MATTER, "forge goal sync"),
        Protected(os.path.realpath(witness_dir()), WITNESS_LABEL, TREE, "forge goal verify"),
        Protected(os.path.realpath(config_dir()), CONFIG_LABEL, TREE, "forge notify test",
                  CONFIG_RATIONALE),
    ]
    if git_dir is not None:
        found += _pointers(root, git_dir, git_common_dir)
    for relative in extra:
        path = os.path.realpath(os.path.join(root, relative))
        found.append(Protected(path, f"the protected path {relative}", TREE,
                               "forge guard roles"))
    return found + host_paths(root, os.environ if env is None else env)


def _pointers(root: str, git_dir: str, common: str) -> list[Protected]:
    """The files that tell git where a work tree's repository is, which forge checks
    against the layout (goal/sync/ledger_location.py): the git dir's `commondir`, this work tree's
    `.git` file when it is a linked one, and for every linked work tree of the repository
    (`<common>/worktrees/<name>/`) its `commondir`, its `gitdir` and the `.git` file that
    names. One `listdir` when the repository has no linked work tree."""
    found = [Protected(os.path.realpath(os.path.join(git_dir, "commondir")),
                       "the git dir's commondir file (it says where the ledger is)", TREE,
                       "forge goal status")]
    dot_git = os.path.join(root, ".git")
    if os.path.isfile(dot_git):  # a linked worktree: the file naming its git dir
        found.append(Protected(dot_git, "the worktree's .git file (it says where the ledger "
                               "is)", TREE, "forge goal status"))
    admin = os.path.join(common, "worktrees")
    try:
        names = os.listdir(admin)
    except OSError:
        return found
    label = "a linked work tree's pointer to its repository (it says where the ledger is)"
    for name in names:
        for file in ("commondir", "gitdir"):
            found.append(Protected(os.path.realpath(os.path.join(admin, name, file)), label,
                                   TREE, "forge goal status"))
        from forge_runtime import safeio

        try:
            named = safeio.read_text(os.path.join(admin, name, "gitdir")).strip()
        except (OSError, UnicodeDecodeError):
            continue
        if os.path.isabs(named):
            found.append(Protected(os.path.realpath(named), label, TREE, "forge goal status"))
    return found


HOST_RATIONALE = ("the host's settings, its plugin tree and Codex's config and hooks are what "
                  "keep forge on; an agent may not switch it off in any session, so a person "
                  "makes such a change in their own terminal or editor")


def host_paths(root: str, env) -> list[Protected]:
    """The host's own off switches for the project at `root`, each resolved (and, when it
    is a symlink, also as itself: removing the link removes the file the host reads).

    Every file the hosts load as code or settings (`host_loaded.TABLE`: their settings,
    MCP servers, skills, subagents, commands, hooks, plugins, mods, scheduled turns,
    Codex's home and project folder, the shell start-up files), at each scope; the
    `settings.json.forge-record` that `forge sandbox disable` restores from;
    `$CLAUDE_PLUGIN_DATA` when set; forge's own code: `$CLAUDE_PLUGIN_ROOT` and the
    `forge_runtime` package, unless the project is that code.
    """
    home = env.get("HOME") or os.path.expanduser("~")
    claude_dirs = host_loaded.bases(host_loaded.CLAUDE_HOME, root, env)
    project_claude = os.path.join(root, ".claude")
    items = [(folder, name, row.label, row.kind)
             for folder, name, row in host_loaded.places(root, env)]
    items += [(directory, "settings.json.forge-record", "forge's sandbox record", TREE)
              for directory in (project_claude, *claude_dirs)]  # where `forge sandbox` writes
    trees = []
    if env.get("CLAUDE_PLUGIN_DATA"):
        trees.append((env["CLAUDE_PLUGIN_DATA"], "forge's plugin data, which holds its forge-env"))
    # The code forge's hooks run: the plugin (a local marketplace's runs from its own
    # directory) and this package (a pip install's site-packages). Not when it and the
    # project hold one another: then the project is forge itself, being worked on.
    for code in (env.get("CLAUDE_PLUGIN_ROOT"), os.path.dirname(os.path.dirname(__file__))):
        real = os.path.realpath(code) if code else None
        if real and not (inside(os.fspath(root), real) or inside(real, os.fspath(root))):
            trees.append((real, "forge's own code, which its hooks run"))
    resolved = {os.path.normpath(place): os.path.realpath(place) for place in (home, root)}
    found: list[Protected] = []
    links: dict[str, frozenset[str]] = {}
    for directory, name, label, kind in items:
        found += _spellings(_resolved(directory, resolved, found), name, label, kind, links)
    for directory, label in trees:
        found.append(Protected(_resolved(directory, resolved, found), label, TREE, HOST_FIX,
                               HOST_RATIONALE))
    return found


def _resolved(directory: str, resolved: dict[str, str], found: list[Protected]) -> str:
    """`directory` resolved, each parent once per call of `host_paths` (a `realpath` is one
    system call per part of the path, and the hook pays it on every Bash call): under a
    directory already resolved (the home, the project) one `lstat` does. A directory that
    is a symlink (dotfiles kept elsewhere) is protected as the link too, spelled as a
    command that removes the link names it: removing it removes what the host reads."""
    plain = os.path.normpath(directory)
    if plain not in resolved:
        parent, name = os.path.split(plain)
        base = resolved.get(parent)
        if base is None or not name:
            resolved[plain] = os.path.realpath(plain)
            if os.path.islink(plain):
                found.append(_link(os.path.join(os.path.realpath(parent), name)))
        else:
            candidate = os.path.join(base, name)
            linked = os.path.islink(candidate)
            resolved[plain] = os.path.realpath(candidate) if linked else candidate
            if linked:
                found.append(_link(candidate))
    return resolved[plain]


def _link(path: str) -> Protected:
    return Protected(path, "a link to the host's settings", TREE, HOST_FIX, HOST_RATIONALE)


def _spellings(directory: str, name: str, label: str, kind: str,
               links: dict[str, frozenset[str]]) -> list[Protected]:
    """The file `name` in the resolved `directory`; when it is a symlink, both what it
    points to (judged as `kind`) and the link itself (any write refused). `links` keeps
    each directory's symlinks, read once (one listing instead of an `lstat` a row)."""
    plain = os.path.join(directory, name)
    if directory not in links:
        try:
            with os.scandir(directory) as entries:
                links[directory] = frozenset(e.name for e in entries if e.is_symlink())
        except OSError:  # no such directory: nothing in it is a link
            links[directory] = frozenset()
    if name not in links[directory]:
        return [Protected(plain, label, kind, HOST_FIX, HOST_RATIONALE)]
    return [Protected(os.path.realpath(plain), label, kind, HOST_FIX, HOST_RATIONALE),
            _link(plain)]


def expand(word: str, cwd: str, env: dict[str, str], *, follow: bool = True) -> str | None:
    """`word` as the absolute, resolved path it names, or None when it cannot be known.

    Unknown variables and command substitutions leave a `$` or a backquote behind: such a
    word names a path forge cannot predict. With `follow=False` a final symlink is kept as
    itself (`rm link` removes the link, not what it points to).
    """
    if word == "~" or word.startswith("~/"):
        home = env.get("HOME") or os.path.expanduser("~")
        word = home + word[1:]
    elif word.startswith("~"):
        word = os.path.expanduser(word)  # `~user/...`: that user's home, as the shell does
    if "$" in word:
        from string import Template

        word = Template(word).safe_substitute(env)
    if "$" in word or "`" in word or "\0" in word or not word:
        return None
    joined = os.path.join(cwd, word)
    if follow or not os.path.islink(joined.rstrip(os.sep)) or joined.endswith(os.sep):
        return os.path.realpath(joined)
    return os.path.join(os.path.realpath(os.path.dirname(joined)), os.path.basename(joined))



def inside(path: str, protected: str) -> bool:
    return path == protected or path.startswith(protected.rstrip(os.sep) + os.sep)


def holds(path: str, protected: str) -> bool:
    """True when `path` is a directory above `protected` (destroying it destroys that)."""
    return protected.startswith(path.rstrip(os.sep) + os.sep)


def hit(path: str, protected: list[Protected], *, destructive: bool) -> Protected | None:
    """The protected entry `path` touches: inside it, or (when destructive) above it."""
    for entry in protected:
        if inside(path, entry.path) or (destructive and holds(path, entry.path)):
            return entry
    return None


def front_matter(text: str) -> str | None:
    """The front matter block of a Markdown text, fences included; None when it has none
    (state.md's is the protected part of it: edits.py and the shell's writes judge it)."""
    if not text.startswith("---"):
        return None
    first_newline = text.find("\n")
    if first_newline == -1 or text[:first_newline].rstrip() != "---":
        return None
    position = first_newline + 1
    while position <= len(text):
        end = text.find("\n", position)
        line = text[position:] if end == -1 else text[position:end]
        if line.rstrip() in ("---", "..."):
            return text[:len(text) if end == -1 else end + 1]
        if end == -1:
            return None
        position = end + 1
    return None
