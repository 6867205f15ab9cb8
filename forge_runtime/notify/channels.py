"""Send one message through one channel, within its timeout: a desktop notification, a
webhook, or a person's command.

- desktop: `notify-send` (Linux), `osascript` (macOS), each the first on PATH outside the
  directories the agent can write (agent_roots.py), given the title and text as arguments,
  never through a shell;
- webhook, `format: ntfy` (the default): the text as a plain POST body, with ntfy's
  `Title`, `Priority` and `Tags` headers; `format: json`: `{"text", "content", "title",
  "forge"}`, which Slack's and Teams' incoming webhooks read as `text` and Discord's as
  `content` (cut to its 2,000 characters), and `forge` holds the figures;
- command: the person's argv (its program found on PATH outside the agent's directories,
  or named by an absolute path outside them), the text on stdin and the message in
  FORGE_NOTIFY_* variables.

`send` returns None when the channel took the message, else why not; `Unavailable` is a
failure that trying again cannot mend (no such program here).
"""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
import urllib.error
import urllib.request

from forge_runtime import agent_roots
from forge_runtime.notify.message import TEXT_LIMIT

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_runtime.notify.config import Channel
    from forge_runtime.notify.message import Message

USER_AGENT = "forge-notify"


class Unavailable(Exception):
    """The channel cannot work on this machine as configured: retrying will not help."""


def send(channel: Channel, message: Message) -> str | None:
    """Deliver `message` through `channel`; None when it was taken, else why not."""
    if channel.kind == "webhook":
        return _webhook(channel, message)
    if channel.kind == "command":
        return _command(channel, message)
    return _desktop(channel, message)


def webhook_request(channel: Channel, message: Message) -> tuple[bytes, dict[str, str]]:
    """The body and headers a webhook channel POSTs."""
    if channel.settings.get("format", "ntfy") == "json":
        body = json.dumps({"text": message.text, "content": message.text[:TEXT_LIMIT],
                           "title": message.title, "forge": message.data}).encode("utf-8")
        headers = {"Content-Type": "application/json"}
    else:
        body = message.text.encode("utf-8")
        headers = {"Content-Type": "text/plain; charset=utf-8", "Title": message.title,
                   "Priority": message.priority, "Tags": message.tags}
    return body, {"User-Agent": USER_AGENT, **headers, **(channel.settings.get("headers") or {})}


def _webhook(channel: Channel, message: Message) -> str | None:
    body, headers = webhook_request(channel, message)
    request = urllib.request.Request(channel.settings["url"], data=body, headers=headers,
                                     method="POST")
    try:
        with urllib.request.urlopen(request, timeout=channel.timeout) as answer:
            answer.read(65536)
    except urllib.error.HTTPError as exc:
        return f"HTTP {exc.code}"
    except urllib.error.URLError as exc:
        reason = exc.reason
        if isinstance(reason, (socket.timeout, TimeoutError)):
            return f"no answer within {channel.timeout} s"
        return str(getattr(reason, "strerror", None) or reason)
    except TimeoutError:
        return f"no answer within {channel.timeout} s"
    except (OSError, ValueError) as exc:  # a connection reset, a malformed answer
        return f"{exc.__class__.__name__}: {exc}"
    return None


def _desktop(channel: Channel, message: Message) -> str | None:
    if sys.platform == "darwin":
        argv = [_program("osascript"), "-e", "on run argv", "-e",
                "display notification (item 2 of argv) with title (item 1 of argv)",
                "-e", "end run", message.title, message.text]
    else:
        urgency = "critical" if message.priority == "high" else "normal"
        argv = [_program("notify-send"), "--app-name=forge", f"--urgency={urgency}",
                message.title, message.text]
    return _run(argv, b"", dict(os.environ), channel.timeout)


def _command(channel: Channel, message: Message) -> str | None:
    argv = list(channel.settings["argv"])
    argv[0] = _program(argv[0])
    env = {**os.environ,
           "FORGE_NOTIFY_TITLE": message.title, "FORGE_NOTIFY_TEXT": message.text,
           "FORGE_NOTIFY_PRIORITY": message.priority,
           "FORGE_NOTIFY_END": str(message.data.get("end") or ""),
           "FORGE_NOTIFY_CODE": str(message.data.get("code") or ""),
           "FORGE_NOTIFY_NEXT": str(message.data.get("next") or ""),
           "FORGE_NOTIFY_NONCE": str(message.data.get("nonce") or ""),
           "FORGE_NOTIFY_OBJECTIVE": str(message.data.get("objective") or ""),
           "FORGE_NOTIFY_JSON": json.dumps(message.data)}
    return _run(argv, message.text.encode("utf-8"), env, channel.timeout)


def _program(name: str) -> str:
    """The program a channel runs: by name, the first on PATH outside the agent's
    directories; by path, an absolute one outside them."""
    if os.sep not in name:
        found = agent_roots.tool(name)
        if found is None:
            raise Unavailable(f"no {name} on PATH outside the directories the agent can "
                              "write")
        return found
    if not os.path.isabs(name):
        raise Unavailable(f"{name} is a relative path; name the program by an absolute one")
    holder = agent_roots.holder(name, agent_roots.roots())
    if holder is not None:
        raise Unavailable(f"{name} is in {holder}, which the agent can write")
    return name


def _run(argv: list[str], stdin: bytes, env: dict[str, str], timeout: int) -> str | None:
    home = os.path.expanduser("~")
    try:
        done = subprocess.run(argv, input=stdin, env=env, timeout=timeout,
                              capture_output=True, cwd=home if os.path.isdir(home) else "/")
    except subprocess.TimeoutExpired:
        return f"{os.path.basename(argv[0])} did not finish within {timeout} s"
    except OSError as exc:
        raise Unavailable(f"{argv[0]} cannot run ({exc.strerror or exc})") from None
    if done.returncode != 0:
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()
        return f"{os.path.basename(argv[0])} exited {done.returncode}" + \
            (f": {said[-1][:200]}" if said else "")
    return None
