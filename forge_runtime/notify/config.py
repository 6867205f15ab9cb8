"""Where a person says how forge reaches them, and nowhere else.

Two places, both out of the agent's reach (the guard refuses its writes to each,
protected/paths.py, and `forge sandbox enable` binds both read-only):

- the project's `.forge/guard.yaml`, section `notify:`;
- the person's own `$XDG_CONFIG_HOME/forge/notify.yaml` (by default
  `~/.config/forge/notify.yaml`), the same section at the top level.

    notify:
      channels:
        - type: desktop                       # notify-send; osascript on macOS
        - type: webhook                       # ntfy: a plain-text POST with Title,
          url: https://ntfy.sh/my-topic       # Priority and Tags headers
        - type: webhook
          url: https://hooks.slack.com/services/T000/B000/XXXX
          format: json                        # {"text", "content", ...}: Slack, Teams, Discord
          headers: {Authorization: Bearer tk_...}
          timeout: 10                         # seconds per attempt (default 5)
        - type: command                       # an argv list, never a shell string: the
          argv: [/usr/local/bin/page-me, --loud]   # message on stdin and in FORGE_NOTIFY_*

Both files' channels are used. No other file is ever read for a channel: a `notify:` an
agent writes into state.md, CLAUDE.md or a `notify.yaml` of the project chooses nothing.
Each file is read through safeio (a link at the name or a FIFO is refused) and checked
with jsonschema; a broken one is an error naming its line, reported by `forge doctor`,
`forge notify test` and the failed send it causes, never raised inside a hook.
"""

from __future__ import annotations

import os

from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.records import record

INVALID = "FORGE_NOTIFY_CONFIG_INVALID"
FIX = "forge notify test"
USER_FILE = "notify.yaml"
TIMEOUT_SECONDS = 5
FORMATS = ("ntfy", "json")

_TIMEOUT = {"type": "integer", "minimum": 1, "maximum": 30}
_CHANNEL = {
    "type": "object",
    "required": ["type"],
    "properties": {"type": {"enum": ["desktop", "webhook", "command"]}},
    "allOf": [
        {"if": {"properties": {"type": {"const": "desktop"}}},
         "then": {"additionalProperties": False,
                  "properties": {"type": {}, "timeout": _TIMEOUT}}},
        {"if": {"properties": {"type": {"const": "webhook"}}},
         "then": {"additionalProperties": False, "required": ["url"],
                  "properties": {
                      "type": {},
                      "url": {"type": "string", "pattern": "^https?://[^\\s/]+"},
                      "format": {"enum": list(FORMATS)},
                      "headers": {"type": "object",
                                  "propertyNames": {"pattern": "^[A-Za-z0-9-]+$"},
                                  "additionalProperties": {"type": "string",
                                                           "pattern": "^[ -~]*$"}},
                      "timeout": _TIMEOUT}}},
        {"if": {"properties": {"type": {"const": "command"}}},
         "then": {"additionalProperties": False, "required": ["argv"],
                  "properties": {
                      "type": {},
                      "argv": {"type": "array", "minItems": 1,
                               "items": {"type": "string", "minLength": 1}},
                      "timeout": _TIMEOUT}}},
    ],
}
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {"channels": {"type": "array", "items": _CHANNEL}},
}
# `.forge/guard.yaml` as this module reads it: its `notify:` section (the guard checks the
# rest, and takes the section as any object: protected/guard_file.py)
GUARD_SCHEMA = {"type": "object", "properties": {"notify": SCHEMA}}


class Channel(record("Channel", "kind source settings")):
    """One configured channel: `kind` (desktop, webhook, command), the file that names it
    (`source`), and its settings as written."""

    __slots__ = ()

    @property
    def timeout(self) -> int:
        return self.settings.get("timeout", TIMEOUT_SECONDS)

    @property
    def label(self) -> str:
        """How status lines name it: never a webhook's path or query, which often hold its
        secret."""
        if self.kind == "webhook":
            from urllib.parse import urlsplit

            parts = urlsplit(self.settings["url"])
            return f"webhook {parts.scheme}://{parts.netloc} " \
                   f"({self.settings.get('format', 'ntfy')})"
        if self.kind == "command":
            return f"command {os.path.basename(self.settings['argv'][0])}"
        return "desktop"


def user_file() -> str:
    from forge_runtime.roots import config_dir

    return os.path.join(config_dir(), USER_FILE)


def guard_file(project_root) -> str:
    return os.path.join(os.fspath(project_root), ".forge", "guard.yaml")


def present(project_root) -> bool:
    """Whether either place may name a channel, cheaply (a stat, and guard.yaml's bytes,
    which the guard reads on every tool call anyway): a hook that finds neither sends
    nothing and imports nothing more."""
    if os.path.lexists(user_file()):
        return True
    from forge_runtime import safeio

    try:
        raw = safeio.read_bytes(guard_file(project_root), os.fspath(project_root))
    except OSError:
        return False
    return b"notify" in raw


def load(project_root) -> list[Channel]:
    """Every configured channel, the user's first; ForgeError (Error/Fix, naming the file
    and line) when a file is broken."""
    channels = _read(user_file(), SCHEMA, None)
    project_channels = _read(guard_file(project_root), GUARD_SCHEMA, os.fspath(project_root))
    return _distinct(channels + project_channels)


def _read(path: str, schema: dict, below: str | None) -> list[Channel]:
    from forge_runtime import safeio

    try:
        raw = safeio.read_bytes(path, below)
    except FileNotFoundError:
        return []
    except OSError as exc:
        raise _invalid(path, None, f"cannot be read ({exc.strerror or exc})") from None
    from forge_runtime.yamlcheck import checked

    document = checked(raw, schema, lambda line, problem: _invalid(path, line, problem), {})
    if schema is GUARD_SCHEMA:
        document = document.get("notify") or {}
    return [Channel(item["type"], path, item) for item in document.get("channels") or []]


def _distinct(channels: list[Channel]) -> list[Channel]:
    """One of each: a webhook or a command named in both files is sent to once."""
    seen, kept = set(), []
    for channel in channels:
        key = (channel.kind, channel.settings.get("url"),
               tuple(channel.settings.get("argv") or ()))
        if key not in seen:
            seen.add(key)
            kept.append(channel)
    return kept


def _invalid(path: str, line: int | None, problem: str) -> ForgeError:
    where = f"{path}:{line}" if line else path
    return ForgeError(f"notification settings {where} {problem}", FIX, exit_code=EXIT_REFUSED,
                      code=INVALID, rationale=f"correct {where}, then run this to check it")
