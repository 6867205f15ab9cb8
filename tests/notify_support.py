"""What the notification tests share: a project's or a person's channels, and waiting for a
sender (notify/sender.py) to finish."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

from forge_runtime.notify import outbox


def guard_with_channels(root: Path, *channels: dict, goal: str = "require_sandbox: false"
                        ) -> None:
    """The project's .forge/guard.yaml: `goal: {<goal>}` and `notify: {channels: [...]}`."""
    (root / ".forge").mkdir(parents=True, exist_ok=True)
    (root / ".forge" / "guard.yaml").write_text(
        f"goal: {{{goal}}}\nnotify:\n  channels: {json.dumps(list(channels))}\n")


def user_channels(config_home: Path, *channels: dict) -> Path:
    """The person's own ~/.config/forge/notify.yaml (under `config_home`)."""
    path = config_home / "forge" / "notify.yaml"
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(f"channels: {json.dumps(list(channels))}\n")
    return path


def webhook(url: str, **settings) -> dict:
    return {"type": "webhook", "url": url, **settings}


def wait_for(pids: list[int]) -> None:
    """Reap the senders a test started (each ends on its own within its deadline)."""
    for pid in pids:
        os.waitpid(pid, 0)


def finished(ledger_root, count: int = 1, timeout: float = 60.0) -> list[dict]:
    """The outbox's records once `count` of them are no longer sending."""
    deadline = time.monotonic() + timeout
    while True:
        done = [record for record in outbox.records(ledger_root)
                if record.get("status") != outbox.SENDING]
        if len(done) >= count or time.monotonic() > deadline:
            return done
        time.sleep(0.1)
