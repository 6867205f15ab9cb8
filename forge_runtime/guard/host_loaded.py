"""Every file a host turns into code it runs, or turns it starts: one table for both hosts.

An agent that writes such a file gets its code run by the host, as the user, outside the
Bash sandbox and past forge's guard (a skill's `hooks` frontmatter, a subagent's MCP
server, a plugin or a mod dropped in a skill folder, a `~/.bashrc` the host's Bash
sources). So no agent tool may write these files, in any permission mode. The table feeds
three layers, each from the same rows:
- the guard's protected paths (`paths.host_paths`): file tools, Bash, apply_patch and
  opaque tools;
- the deny rules of forge's kernel layer (`sandbox/layer.py`): `Edit(<path>)`, which the
  host enforces on its file tools before any hook in every permission mode, and turns into
  a read-only bind for every sandboxed Bash command;
- `forge sandbox status`, through those rules (`rule_forms`).

Where a row comes from (Claude Code 2.1.332 and Codex 0.171.0): the hosts' own docs
(hooks, skills, subagents, plugins, output styles; Codex config, hooks, skills) and their
binaries' strings, chiefly Claude Code's own list of what its sandbox keeps Bash from
writing (per project folder: `.claude/{settings.json, settings.local.json, skills,
commands, agents, hooks, workflows, routines, output-styles, launch.json,
scheduled_tasks.json, loop.md}` and `.mcp.json`; in the home: the shell start-up files,
`~/.claude`, `~/.claude.json`; the folders its own write check refuses, `~/.claude/{daemon,
daemon.json, shell-snapshots, session-env}`, and the session mods folder `dev-mods`) and
Codex's discovery paths (`.codex/{config.toml, hooks.json, hooks, agents, skills, rules}`,
`.agents/{skills, plugins}`).

Two kinds of row decide differently:
- REFUSED (`paths.TREE`): any write is refused, and the kernel layer denies it.
- DEFINITIONS: a folder of Markdown definitions (skills, subagents, commands, output
  styles). A person's agent writing a plain skill is ordinary work, so here the guard
  judges content: the file tools may write a `.md` file whose frontmatter holds only
  descriptive keys (`definitions.SAFE_KEYS`: no `hooks`, `mcpServers`, `permissionMode`,
  nothing unknown) and whose body has no inline shell (`` !`cmd` ``). Anything else in the
  folder (a `plugin.json`, `hooks/hooks.json`, a script, a mod's JavaScript) is refused,
  as is every Bash write there. The kernel layer adds no `Edit` rule for these folders
  (it would refuse the plain skill too); Claude Code's sandbox binds them read-only for
  Bash by itself (the list above), and the guard decides for the file tools, failing
  closed.
The settings files (SETTINGS, CODEX_CONFIG) are judged by what the edit leaves
(`host_settings`).

Scopes: PROJECT (the project root), CLAUDE_HOME (`~/.claude` and `$CLAUDE_CONFIG_DIR`),
CLAUDE_CONFIG (the folders holding `.claude.json`: the home and `$CLAUDE_CONFIG_DIR`), HOME,
AGENTS_HOME (`~/.agents`), CODEX_HOME (`$CODEX_HOME`, default `~/.codex`) and MANAGED
(`/etc/claude-code`).
"""

import os

from forge_runtime.records import record

CLAUDE, CODEX, BOTH = "claude", "codex", "both"
PROJECT, CLAUDE_HOME, CLAUDE_CONFIG, HOME, AGENTS_HOME, CODEX_HOME, MANAGED = (
    "project", "claude home", "claude config", "home", "agents home", "codex home", "managed")
MANAGED_DIR = "/etc/claude-code"

TREE = "tree"  # refused: any write (paths.TREE)
SETTINGS = "host settings"  # a Claude Code settings JSON file: its resulting content decides
CODEX_CONFIG = "codex config"  # a Codex config.toml: its resulting content decides
DEFINITIONS = "definitions"  # Markdown definitions: a .md with descriptive frontmatter only


class Loaded(record("Loaded", "host scope place label kind")):
    """One file or folder a host loads: which host, where (scope and the path under it),
    what it is called in messages, and how a write there is decided."""

    __slots__ = ()


SHELL_LABEL = "a shell start-up file the host's Bash sources outside the sandbox"
SHELL_FILES = (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases",
               ".profile", ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout")

# Order matters where rows nest: the guard takes the first row a path is inside.
TABLE = (
    # Claude Code's settings (hooks, MCP servers, env, the sandbox): judged by content.
    Loaded(CLAUDE, PROJECT, ".claude/settings.json", "the host's project settings", SETTINGS),
    Loaded(CLAUDE, PROJECT, ".claude/settings.local.json", "the host's local settings",
           SETTINGS),
    Loaded(CLAUDE, MANAGED, "managed-settings.json", "the host's managed settings", SETTINGS),
    Loaded(CLAUDE, CLAUDE_HOME, "settings.json", "the host's user settings", SETTINGS),
    Loaded(CLAUDE, CLAUDE_HOME, "settings.local.json", "the host's user settings", SETTINGS),
    Loaded(CLAUDE, CLAUDE_CONFIG, ".claude.json", "the host's user config (MCP servers)",
           SETTINGS),
    Loaded(CLAUDE, PROJECT, ".mcp.json", "the project's MCP servers", SETTINGS),
    Loaded(CODEX, PROJECT, ".codex/config.toml", "Codex's project config", CODEX_CONFIG),
    Loaded(CODEX, CODEX_HOME, "config.toml", "Codex's user config", CODEX_CONFIG),
    Loaded(CLAUDE, MANAGED, "managed-settings.d", "the host's managed settings", TREE),
    Loaded(CODEX, PROJECT, ".codex/hooks.json", "Codex's project hooks", TREE),
    Loaded(CLAUDE, CLAUDE_HOME, "plugins",
           "the host's plugin tree, which holds forge's code, data and forge-env", TREE),
    # Markdown definitions whose frontmatter can carry hooks and MCP servers.
    *(Loaded(CLAUDE, scope, f"{base}skills", "the host's skills (a skill's hooks, or a "
             "plugin or mod in a skill folder, run outside the sandbox)", DEFINITIONS)
      for scope, base in ((PROJECT, ".claude/"), (CLAUDE_HOME, ""))),
    *(Loaded(CLAUDE, scope, f"{base}agents", "the host's subagent definitions (their hooks "
             "and MCP servers run outside the sandbox)", DEFINITIONS)
      for scope, base in ((PROJECT, ".claude/"), (CLAUDE_HOME, ""))),
    *(Loaded(CLAUDE, scope, f"{base}commands", "the host's commands (their hooks run "
             "outside the sandbox)", DEFINITIONS)
      for scope, base in ((PROJECT, ".claude/"), (CLAUDE_HOME, ""))),
    *(Loaded(CLAUDE, scope, f"{base}output-styles", "the host's output styles",
             DEFINITIONS) for scope, base in ((PROJECT, ".claude/"), (CLAUDE_HOME, ""))),
    # Code and scheduled turns the host runs from its own folders.
    *(Loaded(CLAUDE, scope, f"{base}{name}", label, TREE)
      for scope, base in ((PROJECT, ".claude/"), (CLAUDE_HOME, ""))
      for name, label in (
          ("hooks", "hook scripts the host's settings run"),
          ("workflows", "the host's workflow scripts"),
          ("routines", "the host's routines"),
          ("mods", "the host's mods (JavaScript it runs in-process)"),
          ("monitors", "the host's monitors (commands it runs unsandboxed)"),
          ("launch.json", "the host's launch configurations (commands it starts)"),
          ("scheduled_tasks.json", "the host's scheduled tasks (turns it starts)"),
          ("loop.md", "a /loop's tasks (turns the host starts)"))),
    # The host's own state that it runs: mods written in a session (`dev-mods`), the shell
    # snapshots and session environments its Bash sources, its daemon's configuration.
    *(Loaded(CLAUDE, CLAUDE_HOME, name, label, TREE) for name, label in (
        ("dev-mods", "the host's session mods (JavaScript it runs in-process)"),
        ("shell-snapshots", "the host's shell snapshots (its Bash sources them)"),
        ("session-env", "the host's session environments (its Bash sources them)"),
        ("daemon", "the host's daemon state"),
        ("daemon.json", "the host's daemon configuration"))),
    # Codex: its project folder's hooks, agents, skills and rules; skills and plugins in
    # `.agents` (project and user); its home as a whole (hooks, goal store, profiles).
    *(Loaded(CODEX, PROJECT, f".codex/{name}", label, TREE) for name, label in (
        ("hooks", "Codex's project hooks"), ("agents", "Codex's project agents"),
        ("skills", "Codex's project skills"),
        ("rules", "Codex's command rules (they let commands run unasked)"))),
    *(Loaded(CODEX, scope, f"{base}skills", "Codex's skills", DEFINITIONS)
      for scope, base in ((PROJECT, ".agents/"), (AGENTS_HOME, ""))),
    *(Loaded(CODEX, scope, f"{base}plugins", "Codex's plugins and marketplaces", TREE)
      for scope, base in ((PROJECT, ".agents/"), (AGENTS_HOME, ""))),
    Loaded(CODEX, CODEX_HOME, "", "Codex's home, which holds its hooks, goal store and "
           "profiles", TREE),
    # The shell start-up files both hosts' shells source (Claude Code's Bash outside the
    # sandbox, in the same session; Codex's login shell and its snapshot).
    *(Loaded(BOTH, HOME, name, SHELL_LABEL, TREE) for name in SHELL_FILES),
)


def bases(scope: str, root: str, env) -> list[str]:
    """The folders a scope stands for, for the project at `root` and the hook's `env`."""
    home = env.get("HOME") or os.path.expanduser("~")
    config_dir = env.get("CLAUDE_CONFIG_DIR")
    if scope == PROJECT:
        return [root]
    if scope == CLAUDE_HOME:
        return [os.path.join(home, ".claude"), *([config_dir] if config_dir else [])]
    if scope == CLAUDE_CONFIG:
        return [home, *([config_dir] if config_dir else [])]
    if scope == HOME:
        return [home]
    if scope == AGENTS_HOME:
        return [os.path.join(home, ".agents")]
    if scope == CODEX_HOME:
        return [env.get("CODEX_HOME") or os.path.join(home, ".codex")]
    if scope == MANAGED:
        return [MANAGED_DIR]
    raise ValueError(f"unknown scope {scope!r}")


def places(root: str, env) -> list[tuple[str, str, Loaded]]:
    """(folder, name, row) for every row and each folder its scope stands for: the path
    the host reads is the folder joined with the name."""
    found = []
    for row in TABLE:
        for base in bases(row.scope, root, env):
            folder, name = os.path.split(os.path.join(base, row.place) if row.place else base)
            found.append((folder, name, row))
    return found


def is_tree(row: Loaded) -> bool:
    """Whether a row names a folder (its deny rule then covers the tree under it)."""
    name = row.place.rpartition("/")[2]
    return "." not in name or name in ("", "managed-settings.d")


def kernel_rows() -> list[Loaded]:
    """The rows forge's kernel layer denies with an `Edit(...)` rule: every REFUSED row
    (a Codex row too: an agent in Claude Code that writes Codex's hooks gets them run by
    Codex), but the managed folder (only root writes there) and the plugin tree, which has
    its own rule (`layer.PLUGINS_RULE`). Settings files keep theirs (`layer._targets`)."""
    return [row for row in TABLE if row.kind == TREE and row.scope != MANAGED
            and not (row.scope == CLAUDE_HOME and row.place == "plugins")]
