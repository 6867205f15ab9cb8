"""forge's state kept on a git remote under `refs/forge/`: the plumbing claims and goal
ledgers share.

A value forge keeps on the remote is a commit that a ref under `refs/forge/` points at.
Reading fetches the refs into a private namespace of this clone (so concurrent readers in
one clone never collide) and drops them again; writing is one `git push --atomic
--force-with-lease=<ref>:<what we read>`, which the remote applies only if the ref still
points where this process last saw it (or still does not exist): of two clones racing, one
push lands and the other reads the winner. Nothing new to operate: the repository's own
remote is the shared store, and its hosting protects the namespace (docs/remote-ledger.md).
"""

from __future__ import annotations

import os
import subprocess

SEEN_PREFIX = "refs/forge/seen/"
IDENTITY = {"GIT_AUTHOR_NAME": "forge", "GIT_AUTHOR_EMAIL": "forge@localhost",
            "GIT_COMMITTER_NAME": "forge", "GIT_COMMITTER_EMAIL": "forge@localhost",
            "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z"}
GIT_TIMEOUT_SECONDS = 60


class GitFailed(Exception):
    """git did not run, or answered with an error: `why` says what it said."""

    def __init__(self, why: str) -> None:
        super().__init__(why)
        self.why = why


class RemoteRefs:
    """Refs under `prefix` on the git remote `remote` of the repository at `root`.

    Commits forge makes carry a fixed identity and date, so the same content always makes
    the same commit (two clones building one snapshot get one object id)."""

    def __init__(self, root, remote: str, prefix: str,
                 timeout: float = GIT_TIMEOUT_SECONDS) -> None:
        self.root = os.fspath(root)
        self.remote = remote
        self.prefix = prefix
        self.timeout = timeout

    def git(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        env = {**os.environ, **IDENTITY, "GIT_TERMINAL_PROMPT": "0"}
        try:
            return subprocess.run(["git", "-C", self.root, *args], input=stdin,
                                  capture_output=True, text=True, env=env,
                                  timeout=self.timeout, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise GitFailed(f"git {args[0]} did not run ({exc})") from None

    def checked(self, *args: str, stdin: str | None = None) -> str:
        """git's standard output, or GitFailed with what it said."""
        done = self.git(*args, stdin=stdin)
        if done.returncode != 0:
            raise GitFailed(done.stderr.strip() or f"git {args[0]} failed")
        return done.stdout

    def fetch(self, pattern: str) -> dict[str, str]:
        """name -> commit for the remote refs `<prefix><pattern>`; the objects stay in this
        clone's store, the refs that carried them are dropped again."""
        listed = self.git("ls-remote", self.remote, f"{self.prefix}{pattern}")
        if listed.returncode != 0:
            raise GitFailed(listed.stderr.strip() or "ls-remote failed")
        if not listed.stdout.strip():
            return {}
        private = f"{SEEN_PREFIX}{os.urandom(16).hex()}/"
        fetched = self.git("fetch", "--no-tags", "--quiet", "--no-write-fetch-head",
                           self.remote, f"+{self.prefix}{pattern}:{private}{pattern}")
        try:
            if fetched.returncode != 0:
                if "couldn't find remote ref" in fetched.stderr:
                    return {}
                raise GitFailed(fetched.stderr.strip() or "fetch failed")
            shown = self.checked("for-each-ref", "--format=%(refname) %(objectname)", private)
            return {ref[len(private):]: sha for ref, sha in
                    (line.split() for line in shown.splitlines())}
        finally:
            refs = self.git("for-each-ref", "--format=delete %(refname)", private).stdout
            if refs:
                self.git("update-ref", "--stdin", stdin=refs)

    def message(self, commit: str) -> str:
        return self.checked("log", "-1", "--format=%B", commit)

    def messages(self, commits: list[str]) -> dict[str, str]:
        """commit -> message for many commits, in one git process."""
        if not commits:
            return {}
        shown = self.checked("show", "-s", "--format=%H%n%B%x00", *commits)
        found = {}
        for block in shown.split("\0"):
            sha, _, body = block.lstrip("\n").partition("\n")
            if sha:
                found[sha] = body
        return found

    def blobs(self, shas: list[str]):
        """The contents of `shas`, in order, read one at a time from `git cat-file --batch`
        (a 2,000-record ledger is never held whole: the hook that takes one in stays small).
        The object names go in from a file, so neither pipe can fill while the other waits."""
        import tempfile

        with tempfile.TemporaryFile() as names:
            names.write("".join(f"{sha}\n" for sha in shas).encode("ascii"))
            names.seek(0)
            try:
                reader = subprocess.Popen(["git", "-C", self.root, "cat-file", "--batch"],
                                          stdin=names, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL)
            except OSError as exc:
                raise GitFailed(f"git cat-file did not run ({exc})") from None
            try:
                for sha in shas:
                    header = reader.stdout.readline().split()
                    if len(header) != 3 or header[1] != b"blob" or not header[2].isdigit():
                        raise GitFailed(f"object {sha} is not a blob in this clone")
                    size = int(header[2])
                    data = reader.stdout.read(size)
                    reader.stdout.read(1)
                    if len(data) != size:
                        raise GitFailed(f"object {sha} ended early")
                    yield data
            finally:
                reader.stdout.close()
                if reader.poll() is None:
                    reader.kill()
                reader.wait()
    def commit(self, message: str, tree: str | None = None, parent: str | None = None) -> str:
        """A commit of `tree` (default: the empty tree) carrying `message`, on top of
        `parent` when given (so the ref only ever moves forward: see goal/remote.py)."""
        if tree is None:
            tree = self.checked("hash-object", "-t", "tree", "-w", "--stdin", stdin="").strip()
        parents = ["-p", parent] if parent else []
        return self.checked("commit-tree", tree, *parents, "-m", message).strip()

    def swap(self, name: str, expected: str | None, new: str | None) -> bool:
        """Point `<prefix><name>` at `new` (None: delete it) only if it is still `expected`
        (None: absent); False when another writer moved it first."""
        ref = f"{self.prefix}{name}"
        pushed = self.git("push", "--atomic", "--porcelain", "--quiet", "--no-verify",
                          f"--force-with-lease={ref}:{expected or ''}", self.remote,
                          f"{new or ''}:{ref}")
        if pushed.returncode == 0:
            return True
        text = pushed.stdout + pushed.stderr
        if "stale info" in text or "rejected" in text or "fetch first" in text:
            return False
        raise GitFailed(text.strip() or "push failed")
