"""The host CLIs' own off switches, as Bash would run them: `claude` and `codex` modelled.

`claude plugin disable forge@forge` answers "Successfully disabled plugin: forge" and the
next session has no forge hooks at all; Codex's `features disable hooks` does the same for
Codex. So the guard reads these commands however they are spelled (any path to the
binary, wrappers, quoting and variables the shell model values) and refuses, for every
role and posture:
- `claude plugin|plugins disable|uninstall|remove` of forge (`forge`, `forge@<anything>`),
  of a name forge cannot value, of no name, or `--all`; `claude plugin marketplace
  remove|rm` of forge's marketplace (`forge`, any that `installed_plugins.json` lists
  forge from) or of a name forge cannot value. `install`, `enable`, `update`, `list` and
  the like, or these verbs aimed at another plugin, go through; so does `claude mcp` but for
  `add*`: an MCP server is a command the host starts outside the guard and the sandbox;
- a `claude` run that would leave forge's hooks behind: `--bare`, `--safe-mode`,
  `--restricted`, `--settings`, `--setting-sources`, or a `HOME`, `CLAUDE_CONFIG_DIR`,
  `CLAUDE_CODE_SIMPLE` or `CLAUDE_CODE_SAFE_MODE` the command sets (an `env NAME=...`
  wrapper's assignments are not seen: the walk drops them when it unwraps);
- `codex features disable hooks`, `--disable hooks`, `-c features.hooks=false` and other
  `-c` overrides of what forge's hooks rest on (`hooks`, `features`, `projects`,
  `sandbox_mode`, `shell_environment_policy`, `notify`), Codex's own sandbox bypassed
  (`--dangerously-bypass-approvals-and-sandbox`, `--sandbox danger-full-access`),
  `--ignore-user-config`, a `CODEX_HOME` or `HOME` the command sets, and `codex plugin remove` or
  marketplace removal aimed at forge.
A session either CLI starts (`claude -p ...`, `codex exec ...`) is code forge cannot prove
read-only, like any interpreter; the subcommands that only read or manage other things are
modelled. A command word forge cannot name followed by such words (`$C plugin disable
forge`, `./c plugin disable`) is refused by the walk's check of what a pipeline names.
"""

from __future__ import annotations

import os

from forge_runtime.guard.shell import words as shell_words
from forge_runtime.guard.shell.state import Context, touches
from forge_runtime.protected.paths import HOST_FIX, HOST_RATIONALE, SWITCH_OFF, Finding, Protected

FORGE = "forge"
REMOVERS = frozenset({"disable", "uninstall", "remove", "rm"})
CLAUDE_VALUE_OPTIONS = frozenset({"-s", "--scope"})
CLAUDE_UNHOOKED = frozenset({"--bare", "--safe-mode", "--restricted", "--settings",
                             "--setting-sources"})
CLAUDE_UNHOOKED_ENV = ("CLAUDE_CONFIG_DIR", "CLAUDE_CODE_SIMPLE", "CLAUDE_CODE_SAFE_MODE")
CLAUDE_READ_ONLY = frozenset({"--version", "-v", "--help", "-h", "doctor", "agents", "logs"})
PLUGIN_MANAGERS = frozenset({"list", "validate", "details", "install", "i", "enable", "update",
                             "prune", "autoremove", "help", "configure", "tag"})
MCP_READERS = frozenset({"list", "get", "remove", "help", "logout"})
CODEX_UNHOOKED = frozenset({"--dangerously-bypass-approvals-and-sandbox",
                            "--ignore-user-config"})
CODEX_CONFIG_KEYS = ("hooks", "features", "projects", "profiles", "sandbox_mode",
                     "shell_environment_policy", "notify")
CODEX_SAFE_SANDBOXES = frozenset({"read-only", "workspace-write"})
CODEX_READ_ONLY = frozenset({"--version", "-V", "--help", "-h", "doctor", "completion"})
_ENTRY = Protected("", "forge's plugin", "host command", HOST_FIX,
                   HOST_RATIONALE + "; to change forge's plugin, a person runs the command "
                   "in their own terminal")


_A_PERSONS_GOAL = Protected("", "a person's /goal", "host command", "forge goal status",
                            "a host session an agent starts is not a person: its /goal "
                            "activates nothing (forge refuses it at its prompt too); a person "
                            "types /goal in a session they started")


def _off(what: str, note: str = "") -> Finding:
    return Finding(f"runs `{what}`{note}: {SWITCH_OFF}", _ENTRY)


def _goal_prompt(host: str, words: list[str | None]) -> Finding | None:
    """A host session started with a `/goal` prompt (`claude -p "/goal ..."`, `codex exec
    "/goal ..."`): refused, the explaining layer over the runtime rule (goal/hosts/nesting.py)."""
    for word in words:
        if word is not None and word.split(None, 1)[:1] == ["/goal"]:
            return Finding(f"runs `{host}` with the prompt `/goal ...` (a session the agent "
                           f"starts, whose goal would run as a person's): {SWITCH_OFF}",
                           _A_PERSONS_GOAL)
    return None


def _values(args: list[str], ctx: Context) -> list[str | None]:
    """Each argument as the shell would pass it; None where forge cannot know it (a
    substitution, an unknown variable, a glob that may match anything)."""
    found: list[str | None] = []
    for arg in args[:64]:
        variants = shell_words.values(arg, ctx.env)
        if len(variants) != 1 or variants[0] is None or \
                any(char in variants[0] for char in "*?["):
            found.append(None)
        else:
            found.append(variants[0])
    return found


def _positionals(words: list[str | None], value_options: frozenset[str]) -> list[str | None]:
    """The operands among `words`: options dropped, with the value of those that take one."""
    found, skip = [], False
    for word in words:
        if skip:
            skip = False
        elif word is None or not word.startswith("-") or word == "-":
            found.append(word)
        elif word in value_options:
            skip = True
    return found


def _named(targets: list[str | None]) -> str:
    """The plugins a removal names, as a message shows them ([]: it names none)."""
    if not targets:
        return "<no name>"
    return " ".join(target or "<a name forge cannot know>" for target in targets)


def _moved(ctx: Context, relative: str) -> bool:
    """Did the command point HOME elsewhere (`HOME=/tmp/h claude -p ...`)? The host then
    reads settings where forge is not enabled. Told apart by the host file under the home
    being one forge protects; a HOME forge cannot value counts as moved."""
    home = ctx.env.get("HOME")
    if home is None:
        return False
    if shell_words.unknown(home):
        return True
    path = os.path.realpath(os.path.join(home, relative))
    return not any(entry.path == path for entry in ctx.protected)


def _is_forge(name: str | None, forge_names: frozenset[str]) -> bool:
    return name is None or name.split("@", 1)[0].strip().lower() in forge_names


def check_claude(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    words = _values(args, ctx)
    for word in words:
        option = word.split("=", 1)[0] if word else word
        if option in CLAUDE_UNHOOKED:
            return _off(f"claude {option}")  # a session without forge's hooks
    set_here = [variable for variable in CLAUDE_UNHOOKED_ENV if variable in ctx.env]
    if set_here:
        return _off(f"{set_here[0]}=... claude")
    if _moved(ctx, os.path.join(".claude", "settings.json")):
        return _off("HOME=... claude", " (another home has no forge)")
    goal = _goal_prompt("claude", words)
    if goal is not None:
        return goal
    if "plugin" in words or "plugins" in words:
        at = next(i for i, word in enumerate(words) if word in ("plugin", "plugins"))
        return _check_claude_plugin(words[at + 1:], ctx)
    operands = _positionals(words, frozenset())
    if None in operands[:1]:
        return _unknown("claude")
    if operands[:1] == ["mcp"]:
        action = operands[1] if len(operands) > 1 else "list"
        if action is None or action.startswith("add"):
            return _off(f"claude mcp {action or '?'}",
                        " (an MCP server runs outside forge's guard and sandbox)")
        return (True, False) if action in MCP_READERS else (False, touches(args, ctx))
    if words[:1] and words[0] in CLAUDE_READ_ONLY:
        return True, False
    return False, touches(args, ctx)  # a session, or a subcommand forge does not model


def _unknown(program: str) -> Finding:
    return Finding(f"runs {program} with a subcommand or prompt forge cannot know before it "
                   f"runs: {SWITCH_OFF} if it is `plugin disable`; write the words out in "
                   "the command", _ENTRY)


def _check_claude_plugin(words: list[str | None], ctx: Context) -> Finding | tuple:
    operands = _positionals(words, CLAUDE_VALUE_OPTIONS)
    action = operands[0] if operands else "list"
    if action is None:
        return _unknown("claude plugin")
    if action in REMOVERS:
        if "-a" in words or "--all" in words:
            return _off(f"claude plugin {action} --all")
        targets = operands[1:]
        if any(_is_forge(target, frozenset({FORGE})) for target in targets or [None]):
            return _off(f"claude plugin {action} {_named(targets)}")
        return True, False
    if action == "marketplace":
        sub = operands[1] if len(operands) > 1 else "list"
        if sub is None or sub in ("remove", "rm"):
            targets = operands[2:]
            ours = forge_marketplaces(ctx)
            if sub is None or any(_is_forge(target, ours) for target in targets or [None]):
                return _off(f"claude plugin marketplace {sub or '?'} {_named(targets)}",
                            " (forge is installed from it)")
        return True, False
    return (True, False) if action in PLUGIN_MANAGERS else (False, False)


def forge_marketplaces(ctx: Context) -> frozenset[str]:
    """`forge` and every marketplace the host's `installed_plugins.json` has forge from."""
    found = {FORGE}
    home = ctx.env.get("HOME")
    if not home or "`" in home:
        return frozenset(found)
    import json

    try:
        from forge_runtime import safeio

        with safeio.reader(os.path.join(home, ".claude", "plugins", "installed_plugins.json"),
                           encoding="utf-8", follow_links=True) as handle:
            installed = json.load(handle).get("plugins", {})
        found |= {key.split("@", 1)[1].lower() for key in installed
                  if key.split("@", 1)[0].lower() == FORGE and "@" in key}
    except (OSError, ValueError, AttributeError):
        pass
    return frozenset(found)


def check_codex(name: str, args: list[str], ctx: Context, child) -> Finding | tuple:
    words = _values(args, ctx)
    if "CODEX_HOME" in ctx.env or _moved(ctx, ".codex"):
        moved = "CODEX_HOME" if "CODEX_HOME" in ctx.env else "HOME"
        return _off(f"{moved}=... codex", " (another home has no forge)")
    for index, word in enumerate(words):
        option, _, inline = (word or "").partition("=")
        if option[:2] in ("-c", "-s") and len(option) > 2 and option[2] != "-":
            option, inline = option[:2], (word or "")[2:]  # `-cKEY=VALUE`, `-sMODE`
        following = words[index + 1] if index + 1 < len(words) else ""
        value = inline if inline else following
        if option in CODEX_UNHOOKED:
            return _off(f"codex {option}")
        if option in ("-s", "--sandbox") and value not in CODEX_SAFE_SANDBOXES:
            return _off(f"codex {option} {value or '?'}")
        if option == "--disable" and (value is None or value == "hooks"):
            return _off(f"codex --disable {value or '?'}")
        if option in ("-c", "--config") and _weakens_config(value):
            return _off(f"codex {option} {value or '?'}")
    goal = _goal_prompt("codex", words)
    if goal is not None:
        return goal
    operands = _positionals(words, frozenset({"-c", "--config", "--enable", "--disable", "-s",
                                              "--sandbox", "-p", "--profile", "-m", "--model",
                                              "-C", "--cd", "--add-dir", "-a", "-i"}))
    first = operands[0] if operands else None
    if first == "features":
        action = operands[1] if len(operands) > 1 else None
        if action in ("list", "enable", "help"):
            return True, False
        if action is None or (action == "disable" and (
                len(operands) < 3 or operands[2] in (None, "hooks"))):
            return _off(f"codex features {action or '?'} "
                        f"{operands[2] if len(operands) > 2 and operands[2] else 'hooks'}")
        return True, False
    if first == "plugin":
        action = operands[1] if len(operands) > 1 else None
        if action is None or action == "remove" and any(
                _is_forge(target, frozenset({FORGE})) for target in operands[2:] or [None]):
            return _off(f"codex plugin {action or '?'} {_named(operands[2:])}")
        if action == "marketplace" and (len(operands) < 3 or operands[2] in (None, "remove")):
            targets = operands[3:] or [None]
            if any(_is_forge(target, frozenset({FORGE})) for target in targets):
                return _off("codex plugin marketplace remove (forge's marketplace)")
        return True, False
    if None in operands[:1]:
        return _unknown("codex")
    if words[:1] and words[0] in CODEX_READ_ONLY:
        return True, False
    return False, touches(args, ctx)


def _weakens_config(override: str | None) -> bool:
    """Does a `-c key=value` override reach what forge's hooks rest on?"""
    if override is None:
        return True
    key, _, value = override.partition("=")
    key = key.strip().strip('"').lower()
    if key == "sandbox_mode":
        return value.strip().strip("\"'") not in CODEX_SAFE_SANDBOXES
    if key == "features.hooks":
        return value.strip() != "true"
    return key.split(".", 1)[0] in CODEX_CONFIG_KEYS and not key.startswith("features.")


# This family's models, by command (see the table in walk.py); the host CLIs' off switches
# are their subcommands, read by the models, not options the walk's tables hold.
MODELS = {"claude": check_claude, "codex": check_codex}
OPTION_EFFECTS: dict = {}
