"""The drift check: does a host build have a surface forge's host contract does not classify?

A host moves every few days, and forge's guarantees are only as good as its picture of
it. For each build (Claude Code's Bun bundle, Codex's native executable) the check reads
the build's own surfaces out of the binary (claude_code.py, codex.py: hook events and
their input, tools, paths, frontmatter and settings keys, goal and transcript writers,
config keys, rollout events) and compares them with host_contract/:
- a surface the build has that the contract classifies nowhere (read, protected or
  knowingly ignored) is drift: a person decides what it means for forge;
- a surface the contract says forge reads, measured on this version (or on the newest
  measured, for a newer build), that the build no longer has is drift too;
- an anchor that finds nothing is drift (`AnchorLost`): never a silent pass.

    js.py            brackets, strings and object keys of minified JavaScript
    bun.py           the module sources inside a Bun executable
    claude_code.py   Claude Code's surfaces
    elf.py           Rust string tables inside an ELF executable
    codex.py         Codex's surfaces
    builds.py        which builds CI checks: the newest on each registry, the pinned ones
    __main__.py      `python -m forge_runtime.host_drift`
"""

# lazy: host_drift's claude_code and codex share their names with host_contract's, and
# importing a submodule rebinds its name in the package.
from __future__ import annotations

from forge_runtime.host_contract import (
    CLAUDE_HOME,
    HOST,
    IGNORED,
    IRRELEVANT,
    PERSON,
    PROJECT,
    PROTECTED,
    READ,
    newer_than,
)
from forge_runtime.records import record


class Drift(record("Drift", "category name problem")):
    """One surface that does not match the contract: `unclassified` or `gone`."""

    __slots__ = ()


class Report(record("Report", "host version path surfaces drift measured")):
    """One build's check: its version, how many surfaces it has, what drifted."""

    __slots__ = ()


UNCLASSIFIED, GONE = "unclassified", "gone"
RELIED_ON = (READ, PROTECTED, PERSON, HOST)


def _each(table: dict, role: str) -> dict[str, tuple[str, tuple[str, ...]]]:
    return {name: (role, versions) for name, versions in table.items()}


def _valued(table: dict, measured: tuple[str, ...]) -> dict:
    """A table of values and how forge reads them, measured on every version."""
    return {name: (reading, measured) for name, reading in table.items()}


def _first_parts(rows, scope: str, prefix: str = "") -> dict[str, tuple[str, ...]]:
    """{the first part of each place under `prefix` in `scope`: its versions}: the names
    the binary lists under ~/.claude or a project's .claude/ that forge protects."""
    return {place[len(prefix):].split("/")[0]: versions
            for row_scope, place, _, _, versions in rows
            if row_scope == scope and place.startswith(prefix)}


def claude_contract() -> dict[str, dict[str, tuple[str, tuple[str, ...]]]]:
    """{category: {name: (role, versions)}} for Claude Code, from host_contract/."""
    from forge_runtime.host_contract import claude_code as c
    from forge_runtime.host_contract.claude_code_ignored import IGNORED as ignored
    from forge_runtime.host_contract.claude_code_ignored import PROMPT_INPUT

    every = c.MEASURED
    rows = (*c.SETTINGS_FILES, *c.LOADED)
    home, project = _first_parts(rows, CLAUDE_HOME), _first_parts(rows, PROJECT, ".claude/")
    frontmatter = {**_each(c.FRONTMATTER_SAFE, READ), **_each(c.FRONTMATTER_CODE, PROTECTED)}
    classified = {
        "hook event": _each(c.HOOK_EVENTS, READ), "hook input": _each(c.HOOK_INPUT, READ),
        "tool": _each(c.TOOLS, READ), "home path": _each(home, PROTECTED),
        "project path": _each(project, PROTECTED), "frontmatter": frontmatter,
        "goal_status": _each(c.GOAL_STATUS_WRITERS, READ),
        "goal reader": _each(c.GOAL_READER, READ),
        "settings": {**_each(c.SETTINGS_JUDGED, READ), **_each(c.SETTINGS_CODE, PROTECTED)},
        "statusline": _each(c.STATUSLINE, READ), "prompt input": dict(PROMPT_INPUT),
        "turn origin": _valued(c.TURN_ORIGINS, every),
        "host initiator": _valued(c.HOST_INITIATORS, every),
        "prompt source": _valued(c.PROMPT_SOURCES, every),
        "origin kind": _valued(c.ORIGIN_KINDS, every),
        "evaluator answer": _each(c.EVALUATOR_ANSWER, READ),
        "prompt entry": {**{name: (READ, versions)
                            for name, (_, versions) in c.PROMPT_ENTRY.items()},
                         **_each(c.PROMPT_ENTRY_IRRELEVANT, IRRELEVANT)},
    }
    for category, names in ignored.items():
        classified[category] = {**_each(names, IGNORED), **classified[category]}
    return classified


def codex_contract() -> dict[str, dict[str, tuple[str, tuple[str, ...]]]]:
    """{category: {name: (role, versions)}} for Codex, from host_contract/."""
    from forge_runtime.host_contract import codex as c
    from forge_runtime.host_contract.codex_ignored import IGNORED as ignored

    classified = {
        "hook event": _each(c.HOOK_EVENTS, READ), "hook input": _each(c.HOOK_INPUT, READ),
        "config key": {**_each(c.CONFIG_JUDGED, READ), **_each(c.CONFIG_CODE, PROTECTED)},
        "rollout event": _each(c.ROLLOUT_EVENTS, READ),
        "rollout entry": _each(c.ROLLOUT_ENTRY, READ),
    }
    for category, names in ignored.items():
        classified[category] = {**_each(names, IGNORED), **classified[category]}
    return classified


def compare(found: dict[str, set[str]], contract: dict, version: str,
            measured: tuple[str, ...], complete: tuple[str, ...]) -> list[Drift]:
    """What drifted between a build's surfaces (`found`) and the contract. A category in
    `complete` is read whole from the binary, so a classified name missing there is gone:
    any name measured on this very version, and for a newer build what forge relies on
    as of the newest measured version."""
    drift = []
    newer = newer_than(version, measured)
    for category in sorted(set(found) | set(contract)):
        names, known = found.get(category, set()), contract.get(category, {})
        drift += [Drift(category, name, UNCLASSIFIED) for name in sorted(names - set(known))]
        if category not in complete:
            continue
        for name, (role, versions) in sorted(known.items()):
            expected = version in versions or (
                newer and measured[-1] in versions and role in RELIED_ON)
            if expected and name not in names:
                drift.append(Drift(category, name, GONE))
    return drift


COMPLETE_CLAUDE = ("hook event", "hook input", "tool", "frontmatter", "goal_status",
                   "goal reader", "settings", "statusline", "prompt input", "turn origin",
                   "host initiator", "prompt source", "origin kind", "evaluator answer",
                   "prompt entry")
COMPLETE_CODEX = ("hook event", "hook input", "config key", "rollout event", "rollout entry")


def check_claude(path, contract: dict | None = None) -> Report:
    """Claude Code's build at `path` against the contract (or `contract`, a test's)."""
    from forge_runtime.host_contract import claude_code
    from forge_runtime.host_drift import claude_code as extract

    contract = claude_contract() if contract is None else contract
    presence = {category: tuple(contract.get(category, ()))
                for category in extract.PRESENCE_ONLY}
    version, found = extract.surfaces(path, presence)
    return Report("Claude Code", version, str(path), sum(map(len, found.values())),
                  compare(found, contract, version, claude_code.MEASURED, COMPLETE_CLAUDE),
                  claude_code.MEASURED)


def check_codex(path, contract: dict | None = None) -> Report:
    """Codex's native executable at `path` against the contract (or `contract`)."""
    from forge_runtime.host_contract import codex
    from forge_runtime.host_drift import codex as extract

    contract = codex_contract() if contract is None else contract
    presence = {category: tuple(contract.get(category, ()))
                for category in extract.PRESENCE_ONLY}
    version, found = extract.surfaces(path, presence)
    return Report("Codex", version, str(path), sum(map(len, found.values())),
                  compare(found, contract, version, codex.MEASURED, COMPLETE_CODEX),
                  codex.MEASURED)
