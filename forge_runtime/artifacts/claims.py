"""Claims on one disk: which agent works on which artifact, until when.

A claim is a small JSON file per artifact, shared by every work tree of the repository
(`<git common dir>/forge-claims/`, or `.forge/local/claims/` outside git), written under
one exclusive lock. A claim lasts `ttl_minutes` (default 30, 1..1440); the same agent
claiming again renews it; an expired claim is free to anyone; a held one is refused with
the holder and its expiry, and `release --force` frees it.

`check_agent` is the one check of an agent name, used by every surface and operation.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from pathlib import Path

from forge_runtime.artifacts.store import atomic_write
from forge_runtime.goal.store.lock import locked
from forge_runtime.project import Project
from forge_runtime.steps import Call, OpError, call

DEFAULT_TTL_MINUTES = 30
MAX_TTL_MINUTES = 1440
AGENT_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$")
CLAIMS_DIR = "forge-claims"


def check_agent(name: object, retry) -> str:
    """The agent name, or OpError whose Fix retries (`retry(name)`) with a valid one.

    Letters, digits, `.`, `_` and `-`, starting with a letter or digit, at most 64:
    a name that is safe in a file name, a git ref and a shell command alike.
    """
    if isinstance(name, str) and AGENT_NAME.match(name):
        return name
    cleaned = re.sub(r"[^A-Za-z0-9._-]+", "-", str(name or "")).strip("-._")[:64]
    raise OpError(f"agent name {str(name)!r} is not allowed: use letters, digits, '.', '_' "
                  "and '-', starting with a letter or digit, at most 64 characters",
                  retry(cleaned or "worker-1"), code="FORGE_AGENT_NAME_INVALID")


def check_ttl(minutes: object, retry) -> int:
    if isinstance(minutes, int) and not isinstance(minutes, bool) and (
            1 <= minutes <= MAX_TTL_MINUTES):
        return minutes
    raise OpError(f"--ttl-minutes must be a whole number from 1 to {MAX_TTL_MINUTES}, "
                  f"not {minutes!r}", retry(DEFAULT_TTL_MINUTES), code="FORGE_TTL_INVALID")


def stamp(moment: dt.datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def parse_stamp(text: str) -> dt.datetime:
    return dt.datetime.fromisoformat(text.replace("Z", "+00:00"))


def new_record(artifact_id: str, agent: str, ttl: int, now: dt.datetime,
               since: str | None = None) -> dict:
    return {"id": artifact_id, "agent": agent, "claimed_at": since or stamp(now),
            "until": stamp(now + dt.timedelta(minutes=ttl)), "ttl_minutes": ttl}


def is_live(record: dict | None, now: dt.datetime) -> bool:
    """True while a claim holds; an unreadable expiry counts as expired (a claim can be
    taken over, never held forever by a broken record)."""
    if not record:
        return False
    try:
        return parse_stamp(str(record.get("until"))) > now
    except ValueError:
        return False


def held_error(record: dict, artifact_id: str, remote: str | None = None) -> OpError:
    return OpError(f"{artifact_id} is held by {record.get('agent')} until {record.get('until')}",
                   call("claims", remote=remote),
                   or_=[call("release", id=artifact_id, force=True, remote=remote)],
                   code="FORGE_CLAIM_HELD", exit_code=2,
                   rationale="lists who holds what and when each claim ends",
                   data={"holder": record.get("agent"), "until": record.get("until")})


def decide_claim(current: dict | None, artifact_id: str, agent: str, ttl: int,
                 now: dt.datetime, remote: str | None = None) -> tuple[dict, str]:
    """The claim to write and what it is (`claimed`, `renewed`, `taken over`), or the
    held error: the one rule both the local and the remote store follow."""
    if is_live(current, now) and current.get("agent") != agent:
        raise held_error(current, artifact_id, remote)
    if is_live(current, now):
        return new_record(artifact_id, agent, ttl, now, current.get("claimed_at")), "renewed"
    return new_record(artifact_id, agent, ttl, now), ("taken over" if current else "claimed")


def decide_release(current: dict | None, artifact_id: str, agent: str | None, force: bool,
                   now: dt.datetime, remote: str | None = None) -> bool:
    """True when the claim may be removed; the held error when it may not."""
    if current is None:
        return False
    if is_live(current, now) and not force and current.get("agent") != agent:
        raise held_error(current, artifact_id, remote)
    return True


class LocalClaims:
    """Claims of one repository on this disk."""

    def __init__(self, project: Project) -> None:
        base = project.git_common_dir if project.is_git else project.local_dir
        self.dir = Path(base) / (CLAIMS_DIR if project.is_git else "claims")

    def _path(self, artifact_id: str) -> Path:
        return self.dir / f"{artifact_id}.json"

    def _read(self, artifact_id: str) -> dict | None:
        try:
            record = json.loads(self._path(artifact_id).read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return None
        return record if isinstance(record, dict) else None

    def _locked(self):
        self.dir.mkdir(parents=True, exist_ok=True)
        return locked(self.dir)

    def claim(self, artifact_id: str, agent: str, ttl: int, now: dt.datetime
              ) -> tuple[dict, str]:
        with self._locked():
            record, what = decide_claim(self._read(artifact_id), artifact_id, agent, ttl, now)
            atomic_write(self._path(artifact_id), json.dumps(record, indent=2) + "\n")
        return record, what

    def release(self, artifact_id: str, agent: str | None, force: bool, now: dt.datetime
                ) -> dict | None:
        with self._locked():
            current = self._read(artifact_id)
            if not decide_release(current, artifact_id, agent, force, now):
                return None
            os.unlink(self._path(artifact_id))
        return current

    def all(self) -> list[dict]:
        try:
            names = sorted(name for name in os.listdir(self.dir) if name.endswith(".json"))
        except FileNotFoundError:
            return []
        return [record for name in names if (record := self._read(name[:-5]))]


def retry_claim(artifact_id: str, agent: str, ttl: int | None, remote: str | None):
    """Builders of the Fix that retries a claim with one argument corrected."""
    def with_agent(name: str) -> Call:
        return call("claim", id=artifact_id, agent=name, ttl_minutes=ttl, remote=remote)

    def with_ttl(minutes: int) -> Call:
        return call("claim", id=artifact_id, agent=agent, ttl_minutes=minutes, remote=remote)

    return with_agent, with_ttl
