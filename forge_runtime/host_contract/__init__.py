"""What forge knows of each host: one contract per host, plain data, each fact with the
host versions it was measured on.

    claude_code.py           every fact forge reads from Claude Code
    claude_code_ignored.py   what Claude Code has that forge knowingly does not read
    codex.py                 every fact forge reads from Codex CLI
    codex_ignored.py         what Codex has that forge knowingly does not read

The modules that read a host read it through these (the guard's table of what a host
loads, the hook events, the settings the guard judges, the status line's fields, Codex's
rollout). `python -m forge_runtime.host_drift` reads each host build's own surfaces out of
its binary and fails on any the contract does not classify, so a new host version is
caught the day it ships. What the contract does not know reads safe: an unknown verdict
ends a goal, an unknown turn origin is the host's, an unknown settings key or
frontmatter key is refused where it could run code.

Plain tuples, dicts and strings only: hooks import these on every tool call.
"""

# How forge treats a surface of a host.
READ = "read"  # forge reads it (a hook input field, a transcript field, a settings key)
PROTECTED = "protected"  # the guard keeps agents from writing it
IGNORED = "ignored"  # forge knows the host has it and does not read it
# Who started a turn, as a prompt's field says: a person, or the host (anything else:
# a schedule, a peer, a plugin, a resume). A field that says nothing either way is
# IRRELEVANT; a value forge has not measured is HOST.
PERSON, HOST, IRRELEVANT = "person", "host", "irrelevant"

# Where a path a host loads lives (host_loaded.bases turns each into folders).
PROJECT, CLAUDE_HOME, CLAUDE_CONFIG, HOME, AGENTS_HOME, CODEX_HOME, MANAGED = (
    "project", "claude home", "claude config", "home", "agents home", "codex home", "managed")
# How a write to such a path is decided (protected/host_loaded.py).
TREE = "tree"  # refused: any write
SETTINGS = "host settings"  # a Claude Code settings JSON file: its resulting content decides
CODEX_CONFIG = "codex config"  # a Codex config.toml: its resulting content decides
DEFINITIONS = "definitions"  # Markdown definitions: a .md with descriptive frontmatter only


def version_key(text: str | None) -> tuple[int, ...] | None:
    """`2.1.337` (or `2.1.337 (Claude Code)`, `codex-cli 0.171.0`) as (2, 1, 337); None
    for text with no version in it."""
    if not isinstance(text, str):
        return None
    for word in text.split():
        parts = word.split("-", 1)[0].split(".")
        if len(parts) >= 2 and all(part.isdigit() for part in parts):
            return tuple(int(part) for part in parts)
    return None


def newer_than(version: str | None, measured: tuple[str, ...]) -> bool:
    """Whether `version` is newer than every version in `measured` (an unreadable version
    is not: forge says nothing it cannot tell)."""
    key = version_key(version)
    known = [version_key(each) for each in measured]
    return key is not None and all(other is not None and key > other for other in known)
