"""Claims shared through a git remote: `refs/forge/claims/<ID>` with compare-and-swap.

Agents on different machines share a repository, not a disk. A claim is a commit (empty
tree, the claim's JSON as its message) that `refs/forge/claims/<ID>` points at on the
remote. Every change is one `git push --atomic --force-with-lease=<ref>:<what we read>`:
the remote applies it only if the ref still points where this process last saw it (or
still does not exist), so of two machines racing for one claim exactly one push lands and
the other reads the winner and answers that the claim is held. An expired claim is taken
over the same way, leased on the expired commit, so two takers cannot both win it.
"""

from __future__ import annotations

import datetime as dt
import json
from pathlib import Path

from forge_runtime.artifacts import claims
from forge_runtime.gitrefs import GitFailed, RemoteRefs
from forge_runtime.steps import OpError, call

REF_PREFIX = "refs/forge/claims/"


class RemoteClaims:
    """Claims on the git remote `remote` of the repository at `root`."""

    def __init__(self, root: Path, remote: str) -> None:
        self.root = root
        self.remote = remote
        self.refs = RemoteRefs(root, remote, REF_PREFIX)

    def _failure(self, why: str) -> OpError:
        return OpError(f"the claims on remote {self.remote!r} cannot be read or written: {why}",
                       call("claims", remote=self.remote), code="FORGE_REMOTE_UNREACHABLE",
                       rationale="retries once the remote answers; local claims are not used "
                                 "in its place")

    def _fetch(self, pattern: str) -> dict[str, tuple[str, dict | None]]:
        """ID -> (commit, claim) for the remote refs matching `pattern`."""
        try:
            found = {}
            for name, sha in self.refs.fetch(pattern).items():
                try:
                    record = json.loads(self.refs.message(sha))
                except ValueError:
                    record = None
                found[name] = (sha, record if isinstance(record, dict) else None)
            return found
        except GitFailed as exc:
            raise self._failure(exc.why) from None

    def current(self, artifact_id: str) -> tuple[str | None, dict | None]:
        sha, record = self._fetch(artifact_id).get(artifact_id, (None, None))
        return sha, record

    def _commit(self, record: dict) -> str:
        try:
            return self.refs.commit(json.dumps(record, sort_keys=True))
        except GitFailed as exc:
            raise self._failure(exc.why) from None

    def _swap(self, artifact_id: str, expected: str | None, new: str | None) -> bool:
        """Point the remote ref at `new` (None: delete it) only if it is still `expected`."""
        try:
            return self.refs.swap(artifact_id, expected, new)
        except GitFailed as exc:
            raise self._failure(exc.why) from None

    def claim(self, artifact_id: str, agent: str, ttl: int, now: dt.datetime
              ) -> tuple[dict, str]:
        sha, current = self.current(artifact_id)
        record, what = claims.decide_claim(current, artifact_id, agent, ttl, now, self.remote)
        if self._swap(artifact_id, sha, self._commit(record)):
            return record, what
        _, winner = self.current(artifact_id)
        if winner:
            raise claims.held_error(winner, artifact_id, self.remote)
        raise self._failure("the claim changed while it was being taken; try again")

    def release(self, artifact_id: str, agent: str | None, force: bool, now: dt.datetime
                ) -> dict | None:
        sha, current = self.current(artifact_id)
        if not claims.decide_release(current, artifact_id, agent, force, now, self.remote):
            return None
        if not self._swap(artifact_id, sha, None):
            raise self._failure("the claim changed while it was being released; try again")
        return current

    def all(self) -> list[dict]:
        return [record for _, (_, record) in sorted(self._fetch("*").items()) if record]
