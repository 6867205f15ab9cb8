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
import os
import subprocess
import uuid
from pathlib import Path

from forge_runtime.artifacts import claims
from forge_runtime.steps import OpError, call

REF_PREFIX = "refs/forge/claims/"
SEEN_PREFIX = "refs/forge/seen/"
GIT_TIMEOUT_SECONDS = 60
IDENTITY = {"GIT_AUTHOR_NAME": "forge", "GIT_AUTHOR_EMAIL": "forge@localhost",
            "GIT_COMMITTER_NAME": "forge", "GIT_COMMITTER_EMAIL": "forge@localhost"}


class RemoteClaims:
    """Claims on the git remote `remote` of the repository at `root`."""

    def __init__(self, root: Path, remote: str) -> None:
        self.root = root
        self.remote = remote

    def _git(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        env = {**os.environ, **IDENTITY, "GIT_TERMINAL_PROMPT": "0"}
        try:
            return subprocess.run(["git", "-C", str(self.root), *args], input=stdin,
                                  capture_output=True, text=True, env=env,
                                  timeout=GIT_TIMEOUT_SECONDS, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise self._failure(f"git {args[0]} did not run ({exc})") from None

    def _failure(self, why: str) -> OpError:
        return OpError(f"the claims on remote {self.remote!r} cannot be read or written: {why}",
                       call("claims", remote=self.remote), code="FORGE_REMOTE_UNREACHABLE",
                       rationale="retries once the remote answers; local claims are not used "
                                 "in its place")

    def _fetch(self, pattern: str) -> dict[str, tuple[str, dict | None]]:
        """ID -> (commit, claim) for the remote refs matching `pattern`, read through a
        private ref namespace so concurrent readers in one clone never collide."""
        private = f"{SEEN_PREFIX}{uuid.uuid4().hex}/"
        listed = self._git("ls-remote", self.remote, f"{REF_PREFIX}{pattern}")
        if listed.returncode != 0:
            raise self._failure(listed.stderr.strip() or "ls-remote failed")
        if not listed.stdout.strip():
            return {}
        fetched = self._git("fetch", "--no-tags", "--quiet", self.remote,
                            f"+{REF_PREFIX}{pattern}:{private}{pattern}")
        try:
            if fetched.returncode != 0:
                if "couldn't find remote ref" in fetched.stderr:
                    return {}
                raise self._failure(fetched.stderr.strip() or "fetch failed")
            shown = self._git("for-each-ref", "--format=%(refname) %(objectname)", private)
            found = {}
            for line in shown.stdout.splitlines():
                ref, sha = line.split()
                body = self._git("log", "-1", "--format=%B", sha).stdout
                try:
                    record = json.loads(body)
                except ValueError:
                    record = None
                found[ref[len(private):]] = (sha, record if isinstance(record, dict) else None)
            return found
        finally:
            refs = self._git("for-each-ref", "--format=delete %(refname)", private).stdout
            if refs:
                self._git("update-ref", "--stdin", stdin=refs)

    def current(self, artifact_id: str) -> tuple[str | None, dict | None]:
        sha, record = self._fetch(artifact_id).get(artifact_id, (None, None))
        return sha, record

    def _commit(self, record: dict) -> str:
        tree = self._git("hash-object", "-t", "tree", "-w", "--stdin", stdin="")
        made = self._git("commit-tree", tree.stdout.strip(), "-m",
                         json.dumps(record, sort_keys=True))
        if made.returncode != 0:
            raise self._failure(made.stderr.strip())
        return made.stdout.strip()

    def _swap(self, artifact_id: str, expected: str | None, new: str | None) -> bool:
        """Point the remote ref at `new` (None: delete it) only if it is still `expected`."""
        ref = f"{REF_PREFIX}{artifact_id}"
        pushed = self._git("push", "--atomic", "--porcelain", "--quiet",
                           f"--force-with-lease={ref}:{expected or ''}", self.remote,
                           f"{new or ''}:{ref}")
        if pushed.returncode == 0:
            return True
        text = pushed.stdout + pushed.stderr
        if "stale info" in text or "rejected" in text or "fetch first" in text:
            return False
        raise self._failure(text.strip() or "push failed")

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
