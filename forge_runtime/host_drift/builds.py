"""Which host builds the drift check reads: the newest each registry has, and every build
the contract was measured on.

- Claude Code: the newest is the one `pip install claude-agent-sdk` brought (what `.ci/run`
  installs, `claude_binary.find_claude`); the measured ones are fetched once into the
  user's cache (`hostkit.binary.pinned_claude`).
- Codex: the newest is what `npm view @openai/codex version` names, the measured ones are
  `host_contract.codex.MEASURED`; each is installed once into the user's cache
  (`hostkit.codex_binary.find_codex`).
A build that is already in the list (the newest is often a measured one) is read once.
"""

from __future__ import annotations

import os
from pathlib import Path

from forge_runtime.claude_binary import find_claude
from forge_runtime.host_contract import claude_code, codex
from forge_runtime.hostkit.binary import pinned_claude
from forge_runtime.hostkit.codex_binary import find_codex, native, newest_version


def _version_beside(path: Path) -> str | None:
    """The version a bundled CLI's `<name>.version` file states, when it has one."""
    try:
        return (path.parent / f"{path.name}.version").read_text().split()[0]
    except (OSError, IndexError):
        return None


def claude_builds(newest: bool = True, measured: bool = True) -> list[Path]:
    found = [find_claude()] if newest else []
    have = {_version_beside(path) for path in found}
    if measured:
        found += [pinned_claude(version) for version in claude_code.MEASURED
                  if version not in have]
    return _unique(found)


def codex_builds(newest: bool = True, measured: bool = True) -> list[Path]:
    versions = [newest_version()] if newest else []
    if measured:
        versions += [version for version in codex.MEASURED if version not in versions]
    return _unique([native(find_codex(version)) for version in versions])


def _unique(paths: list[Path]) -> list[Path]:
    seen, kept = set(), []
    for path in paths:
        real = os.path.realpath(path)
        if real not in seen:
            seen.add(real)
            kept.append(path)
    return kept
