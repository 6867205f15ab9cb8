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

The rows are the hosts' contracts (host_contract/claude_code.py and codex.py: their
`SETTINGS_FILES` / `CONFIG_FILES`, `LOADED` and the shell start-up files), each with the
versions it was measured on; the drift check fails on a folder a new host build names
that the contracts do not classify.

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
  Bash by itself (its own list of what its sandbox keeps Bash from writing), and the
  guard decides for the file tools, failing closed.
The settings files (SETTINGS, CODEX_CONFIG) are judged by what the edit leaves
(`host_settings`).

Scopes: PROJECT (the project root), CLAUDE_HOME (`~/.claude` and `$CLAUDE_CONFIG_DIR`),
CLAUDE_CONFIG (the folders holding `.claude.json`: the home and `$CLAUDE_CONFIG_DIR`), HOME,
AGENTS_HOME (`~/.agents`), CODEX_HOME (`$CODEX_HOME`, default `~/.codex`) and MANAGED
(`/etc/claude-code`).
"""

import os

from forge_runtime.host_contract import (
    AGENTS_HOME,
    CLAUDE_CONFIG,
    CLAUDE_HOME,
    CODEX_CONFIG,
    CODEX_HOME,
    DEFINITIONS,
    HOME,
    MANAGED,
    PROJECT,
    SETTINGS,
    TREE,
    claude_code,
    codex,
)
from forge_runtime.records import record

__all__ = ("AGENTS_HOME", "CLAUDE_CONFIG", "CLAUDE_HOME", "CODEX_CONFIG", "CODEX_HOME",
           "DEFINITIONS", "HOME", "MANAGED", "PROJECT", "SETTINGS", "TREE", "TABLE", "Loaded",
           "bases", "places", "is_tree", "kernel_rows")

CLAUDE, CODEX, BOTH = "claude", "codex", "both"
MANAGED_DIR = "/etc/claude-code"


class Loaded(record("Loaded", "host scope place label kind")):
    """One file or folder a host loads: which host, where (scope and the path under it),
    what it is called in messages, and how a write there is decided."""

    __slots__ = ()


def _rows(host: str, rows) -> tuple[Loaded, ...]:
    return tuple(Loaded(host, scope, place, label, kind)
                 for scope, place, label, kind, _measured in rows)


# Order matters where rows nest (Codex's `config.toml` in its home): the guard takes the
# first row a path is inside, so the files judged by content come first.
TABLE = (*_rows(CLAUDE, claude_code.SETTINGS_FILES), *_rows(CODEX, codex.CONFIG_FILES),
         *_rows(CLAUDE, claude_code.LOADED), *_rows(CODEX, codex.LOADED),
         *_rows(BOTH, claude_code.SHELLS))


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
