"""What an edit of a host settings file would leave behind: forge still on, or switched off.

People edit their permissions in `.claude/settings*.json`, so the file tools may change a
settings file, judged on the content that would result (the text after the edit, parsed,
against the text before). Refused when the result:
- disables forge: an `enabledPlugins` entry `forge@<any marketplace>` set to anything but
  true, or removed where it was true;
- turns hooks off: `disableAllHooks` or `allowManagedHooksOnly` made anything but false
  (removing a `false`, which a managed scope uses to hold them on, included);
- changes code the host runs outside forge's guard and sandbox: `hooks` (forge's own, for a
  pip install, live there), the status line, credential, proxy and policy helpers, the
  corporate launcher (`processWrapper`), Desktop's SSH host commands, MCP servers and
  their switches (also per project in `~/.claude.json`, and in `.mcp.json`),
  marketplaces and command-sourced plugins (the contract's SETTINGS_CODE): such a command
  can stop forge's hooks before they run;
- adds or changes an `env` entry: the host gives these to every hook, so `FORGE_PYTHON`,
  `PATH`, `PYTHON*`, `CLAUDE_PLUGIN_DATA` or any name forge's launcher or interpreter reads
  points the hook at other code. forge cannot list every name a program consults, so it
  refuses every addition and change (removing one is allowed);
- weakens the host's sandbox, forge's kernel layer: `sandbox.enabled` or
  `failIfUnavailable` not true, `allowUnsandboxedCommands` or `enableWeakerNestedSandbox`
  not false, commands excluded from it or paths made writable, or a `permissions.deny`
  rule forge's layer wrote (its `.forge-record`, or a rule naming a path forge protects)
  taken out.
A value set where it was absent counts as a change: a higher scope overrides a lower one.
A result that does not parse is refused too (fail closed).

Codex's `config.toml` the same way, with tomllib: `features.hooks` (also in a profile),
`hooks` (forge's hooks and their trust), a project's `trust_level` (an untrusted project's
hooks are skipped), `sandbox_mode` made weaker, and the sandbox's writable roots, the shell
environment policy, `notify`, `mcp_servers`, plugins and marketplaces, the REPL's Node.js,
OpenTelemetry (its header helper), model providers and the default `profile` (the
contract's CONFIG_CODE).
"""

from __future__ import annotations

from forge_runtime import safeio
from forge_runtime.host_contract import claude_code, codex
from forge_runtime.protected.paths import CODEX_CONFIG, SWITCH_OFF, Finding, Protected

MISSING = object()
FORGE_PLUGIN = "forge"
# What each host's contract says about its settings (host_contract/claude_code.py, codex.py).
CLAUDE_NEEDS = claude_code.SETTINGS_NEEDS
CLAUDE_CODE = (*claude_code.SETTINGS_CODE, *claude_code.CONFIG_CODE)
CLAUDE_OPENERS = claude_code.SETTINGS_OPENERS
CLAUDE_CLOSERS = claude_code.SETTINGS_CLOSERS
CODEX_CODE = tuple(codex.CONFIG_CODE)
SANDBOX_RANK = codex.SANDBOX_RANK


def judge(entry: Protected, path: str, before: str | None, after: str) -> Finding | None:
    """Why turning `before` (None: no file) into `after` in host file `path` is refused."""
    codex = entry.kind == CODEX_CONFIG
    parsed_after = _parse(after, codex)
    if parsed_after is None:
        what = "TOML" if codex else "a JSON object"
        return Finding(f"would leave {entry.label} unreadable (not {what}): {SWITCH_OFF}, "
                       "since the host skips a settings file it cannot read", entry)
    parsed_before = (_parse(before, codex) if before is not None else None) or {}
    if codex:
        problems = codex_problems(parsed_before, parsed_after)
    else:
        problems = claude_problems(parsed_before, parsed_after, _forge_rules(path))
    if not problems:
        return None
    return Finding(f"would change {entry.label}: {SWITCH_OFF} ({'; '.join(problems)})", entry)


def claude_problems(before: dict, after: dict, forge_rules: frozenset[str]) -> list[str]:
    """Each way `after` switches forge off (or opens its way to) compared with `before`."""
    problems = []
    keys = {key for side in (before, after) for key in _table(side, ("enabledPlugins",))
            if key.split("@", 1)[0].strip().lower() == FORGE_PLUGIN}
    for key in sorted(keys):
        problems += _override(before, after, ("enabledPlugins", key), True)
    for keys_path, needed in CLAUDE_NEEDS:
        problems += _override(before, after, keys_path, needed)
    problems += [f"changes `{key}`, code the host runs outside forge's guard"
                 for key in CLAUDE_CODE if _get(before, (key,)) != _get(after, (key,))]
    projects = {key for side in (before, after) for key in _table(side, ("projects",))}
    problems += [f"changes `projects.{project}.{key}`, code the host runs outside forge's guard"
                 for project in sorted(projects) for key in CLAUDE_CODE
                 if _get(before, ("projects", project, key)) !=
                 _get(after, ("projects", project, key))]
    old_env, new_env = _table(before, ("env",)), _table(after, ("env",))
    problems += [f"sets env {name}, which reaches forge's hooks" for name in new_env
                 if old_env.get(name, MISSING) != new_env[name]]
    env = _get(after, ("env",))
    if env is not MISSING and not isinstance(env, dict):
        problems.append("replaces `env` with something that is not an object")
    for keys_path in CLAUDE_OPENERS:
        added = _items(after, keys_path) - _items(before, keys_path)
        if added:
            problems.append(f"adds {', '.join(sorted(added))} to {'.'.join(keys_path)}")
    for keys_path in CLAUDE_CLOSERS:
        removed = _items(before, keys_path) - _items(after, keys_path)
        if removed:
            problems.append(f"removes {', '.join(sorted(removed))} from {'.'.join(keys_path)}")
    removed = _items(before, ("permissions", "deny")) - _items(after, ("permissions", "deny"))
    ours = sorted(rule for rule in removed if rule in forge_rules or _names_protected(rule))
    if ours:
        problems.append(f"removes forge's deny rule(s) {', '.join(ours)}")
    return problems


def codex_problems(before: dict, after: dict) -> list[str]:
    problems = []
    for prefix in _profiles(before, after):
        problems += _override(before, after, (*prefix, *codex.HOOKS_FEATURE), True)
        old = _get(before, (*prefix, "sandbox_mode"))
        new = _get(after, (*prefix, "sandbox_mode"))
        if new != old and _rank(new) > _rank(old):
            problems.append(f"makes {'.'.join((*prefix, 'sandbox_mode'))} weaker "
                            f"({_shown(old)} -> {_shown(new)})")
    projects = {key for side in (before, after) for key in _table(side, ("projects",))}
    for project in sorted(projects):
        problems += _override(before, after, ("projects", project, "trust_level"),
                              codex.TRUSTED)
    problems += [f"changes `{key}`, which runs code or sets what forge's hooks run with"
                 for key in CODEX_CODE if _get(before, (key,)) != _get(after, (key,))]
    return problems


def _override(before: dict, after: dict, keys: tuple[str, ...], needed) -> list[str]:
    """A setting forge needs at `needed`: refused when the edit sets it to anything else
    (an explicit value overrides lower scopes) or removes it where it was `needed`."""
    old, new = _get(before, keys), _get(after, keys)
    if _same(new, old) or _same(new, needed) or (new is MISSING and not _same(old, needed)):
        return []
    where = ".".join(keys)
    if new is MISSING:
        return [f"removes {where} (it was {_shown(old)})"]
    return [f"sets {where} to {_shown(new)}"]


def _same(first, second) -> bool:
    """Equal as JSON values: `1` is not `true` (the host's schema tells them apart)."""
    return type(first) is type(second) and first == second


def _get(settings, keys: tuple[str, ...]):
    for key in keys:
        if not isinstance(settings, dict) or key not in settings:
            return MISSING
        settings = settings[key]
    return settings


def _table(settings: dict, keys: tuple[str, ...]) -> dict:
    value = _get(settings, keys)
    return value if isinstance(value, dict) else {}


def _items(settings: dict, keys: tuple[str, ...]) -> set[str]:
    value = _get(settings, keys)
    if not isinstance(value, list):
        return set()
    return {item if isinstance(item, str) else repr(item) for item in value}


def _profiles(before: dict, after: dict) -> list[tuple[str, ...]]:
    names = {key for side in (before, after) for key in _table(side, ("profiles",))}
    return [(), *(("profiles", name) for name in sorted(names))]


def _rank(mode) -> int:
    if mode is MISSING:
        return SANDBOX_RANK["workspace-write"]
    return SANDBOX_RANK.get(mode, len(SANDBOX_RANK)) if isinstance(mode, str) \
        else len(SANDBOX_RANK)


def _shown(value) -> str:
    if value is MISSING:
        return "unset"
    import json

    return json.dumps(value)


def _parse(text: str, codex: bool) -> dict | None:
    if codex:
        import tomllib

        try:
            return tomllib.loads(text)
        except (tomllib.TOMLDecodeError, ValueError):
            return None
    import json

    try:
        value = json.loads(text) if text.strip() else {}
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


def _forge_rules(settings_path: str) -> frozenset[str]:
    """The deny rules forge's layer recorded adding to this file (`<file>.forge-record`)."""
    import json

    try:
        with safeio.reader(settings_path + ".forge-record", encoding="utf-8",
                           follow_links=True) as handle:
            record = json.load(handle)
        rules = record["added"]["deny"]
    except (OSError, ValueError, KeyError, TypeError):
        return frozenset()
    return frozenset(rule for rule in rules if isinstance(rule, str)) \
        if isinstance(rules, list) else frozenset()


def _names_protected(rule: str) -> bool:
    """Does a deny rule name a location forge protects (the ledger, guard files, the
    witness, the host's settings or plugin tree)? Such a rule is forge's layer."""
    from forge_runtime.guard.shell.state import mentions

    return mentions(rule) or "witness" in rule.lower() or "commondir" in rule.lower()
