"""The surfaces of one Codex CLI build, read from its native executable.

Codex is Rust (host_drift/elf.py says how its names are read). Anchors:
    hook event       the hook events its config's tables list (a run of PascalCase names
                     holding `UserPromptSubmit`), and those with an input schema
    hook input       `<Event>.<field>`: the `properties` of the JSON schema Codex embeds
                     for each event's command input (`<event>.command.input`)
    config key       the fields of `ConfigToml`, config.toml's top level: the serde table
                     whose first name stands right after the struct's name
    rollout event    the `type`s an `event_msg` line of the rollout can have: the serde
                     table of snake_case names holding `thread_goal_updated`
    rollout entry    the rollout line and item types the contract reads, where the build
                     has them (presence only: no table delimits them)
An anchor that finds nothing raises `AnchorLost`.
"""

from __future__ import annotations

import json
import re

from forge_runtime.host_drift import js
from forge_runtime.host_drift.claude_code import AnchorLost, _need
from forge_runtime.host_drift.elf import Image

SCHEMA = b'{\n  "$schema": "http://json-schema.org/draft-07/schema#"'
INPUT_TITLE = ".command.input"
PASCAL = re.compile(r"[A-Z][A-Za-z]+\Z")
SNAKE = re.compile(r"[a-z][a-z0-9_]*\Z")
# A version, and a pre-release's suffix: the bytes after it are another string.
VERSION = re.compile(rb"codex-(mcp-client|doctor)/([0-9]+\.[0-9]+\.[0-9]+"
                     rb"(?:-(?:alpha|beta|rc)\.[0-9]+)?)")
CONFIG_STRUCT = "ConfigToml"
# Other structs' names end in `ConfigToml` too: config.toml's own table holds these.
CONFIG_MARKERS = frozenset({"model_provider", "sandbox_mode", "hooks", "profiles"})


def hook_inputs(image: Image) -> tuple[set[str], set[str]]:
    """(`<Event>.<field>` names, the events with an input schema)."""
    found, events, data = set(), set(), image.data
    position = data.find(SCHEMA)
    while position != -1:
        end = js.closing(data, position)
        try:
            schema = json.loads(data[position:end + 1])
        except ValueError:
            schema = {}
        properties = schema.get("properties") or {}
        event = (properties.get("hook_event_name") or {}).get("const")
        if str(schema.get("title", "")).endswith(INPUT_TITLE) and isinstance(event, str):
            events.add(event)
            found |= {f"{event}.{field}" for field in properties if field != "hook_event_name"}
        position = data.find(SCHEMA, end)
    return found, _need(events, "the hook input schemas (<event>.command.input)")


def hook_events(image: Image) -> set[str]:
    tables = [image.table_around(at, lambda _a, _l, text: bool(text and PASCAL.match(text)))
              for at in image.rows_naming("UserPromptSubmit")]
    listed = {name for table in tables if "PreToolUse" in table for name in table}
    return _need(listed, "the tables of hook event names") | hook_inputs(image)[1]


def config_keys(image: Image) -> set[str]:
    """The fields of `ConfigToml`: the table whose first row names the bytes right after the
    struct's name (serde writes them together) and that holds CONFIG_MARKERS. Its rows go
    on while each continues those bytes or names a string kept elsewhere (one other code
    shares); the first row that leaves a gap is the next struct's."""
    _, offset, size = image.relro
    for name_at in image.addresses(CONFIG_STRUCT):
        first = name_at + len(CONFIG_STRUCT)
        needle = first.to_bytes(8, "little")
        position = image.data.find(needle, offset, offset + size)
        while position != -1:
            if (position - offset) % 8 == 0:
                fields = _chained(image, position, first)
                if set(fields) >= CONFIG_MARKERS:
                    return set(fields)
            position = image.data.find(needle, position + 1, offset + size)
    raise AnchorLost(f"anchor lost: the fields of {CONFIG_STRUCT}")


def _chained(image: Image, at: int, block: int) -> list[str]:
    fields, chain_end = [], block
    _, offset, size = image.relro
    while at + 16 <= offset + size:
        address, length, text = image.row(at)
        if text is None or not SNAKE.match(text):
            break
        if address == chain_end:
            chain_end = address + length
        elif address >= block:
            break
        fields.append(text)
        at += 16
    return fields


def rollout_events(image: Image) -> set[str]:
    tables = [image.table_around(at, lambda _a, _l, text: bool(text and SNAKE.match(text)))
              for at in image.rows_naming("thread_goal_updated")]
    listed = {name for table in tables if "task_started" in table for name in table}
    return _need(listed, "the table of rollout event types")


def version(image: Image) -> str:
    """The build's version, as its MCP client and its doctor name themselves
    (`codex-mcp-client/<version>`, `codex-doctor/<version>`): both, and the same."""
    _, offset, size = image.rodata
    found = {match.group(2).decode() for match in
             VERSION.finditer(image.data, offset, offset + size)}
    if len(found) != 1:
        raise AnchorLost(f"anchor lost: the build's version ({sorted(found) or 'none'} "
                         "in codex-mcp-client/<version>, codex-doctor/<version>)")
    return found.pop()


PRESENCE_ONLY = ("rollout entry",)


def surfaces(path, presence: dict[str, tuple[str, ...]]) -> tuple[str, dict[str, set[str]]]:
    """(the build's version, {category: names}) for the Codex executable at `path`."""
    image = Image(path)
    found = {"hook event": hook_events(image), "hook input": hook_inputs(image)[0],
             "config key": config_keys(image), "rollout event": rollout_events(image)}
    for category in PRESENCE_ONLY:
        found[category] = {name for name in presence.get(category, ())
                           if next(image.addresses(name), None) is not None}
    return version(image), found
