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

from forge_runtime.agent_roots import program

SEEN_PREFIX = "refs/forge/seen/"
IDENTITY = {"GIT_AUTHOR_NAME": "forge", "GIT_AUTHOR_EMAIL": "forge@localhost",
            "GIT_COMMITTER_NAME": "forge", "GIT_COMMITTER_EMAIL": "forge@localhost",
            "GIT_AUTHOR_DATE": "2000-01-01T00:00:00Z",
            "GIT_COMMITTER_DATE": "2000-01-01T00:00:00Z"}
GIT_TIMEOUT_SECONDS = 60
RECORD_BYTES_LIMIT = 8 * 1024 * 1024  # a merge record carries its side; none is near this
# What `git rev-parse --local-env-vars` lists, and GIT_NAMESPACE: inherited from whatever
# started forge, they would point its git at another repository, index, object store or
# namespace than the project's (and its pushes at other refs).
LOCAL_VARIABLES = frozenset({
    "GIT_ALTERNATE_OBJECT_DIRECTORIES", "GIT_CONFIG", "GIT_CONFIG_PARAMETERS",
    "GIT_CONFIG_COUNT", "GIT_OBJECT_DIRECTORY", "GIT_DIR", "GIT_WORK_TREE",
    "GIT_IMPLICIT_WORK_TREE", "GIT_GRAFT_FILE", "GIT_INDEX_FILE", "GIT_NO_REPLACE_OBJECTS",
    "GIT_REPLACE_REF_BASE", "GIT_PREFIX", "GIT_INTERNAL_SUPER_PREFIX", "GIT_SHALLOW_FILE",
    "GIT_COMMON_DIR", "GIT_NAMESPACE"})
# The transports forge's own fetches and pushes may use: never `ext::` (it runs a command)
# or `fd::`, whatever a repository's `protocol.*.allow` says (the variable overrides it).
SAFE_PROTOCOLS = "file:git:http:https:ssh"
# `-c` settings over the repository's config, which the agent's Bash can write (.git/config,
# .git/hooks): forge's git runs in a hook process, outside any sandbox of the agent's, so it
# runs no hook, no fsmonitor and no proxy command there; the transports' programs are named
# on the command line (UPLOAD, RECEIVE), since git takes the first `remote.<name>.uploadpack`
# it reads, the repository's before any `-c`.
# `core.alternateRefsCommand` runs for a repository with alternates (a file the agent can
# write too); `true` answers no refs (measured with git 2.39: it ran in a fetch otherwise).
PINNED = ("-c", f"core.hooksPath={os.devnull}", "-c", "core.fsmonitor=false",
          "-c", "core.gitProxy=", "-c", "commit.gpgSign=false",
          "-c", "core.alternateRefsCommand=true")
# Settings whose value git runs as a program for a fetch or push: taken only from the
# user's and the system's config, never the repository's (`RemoteRefs._programs`).
PROGRAM_KEYS = r"^(core\.sshcommand|core\.askpass|credential\..*helper)$"
_REPOSITORY_SCOPES = ("local", "worktree")
_NETWORK = frozenset({"ls-remote", "fetch", "push"})
UPLOAD, RECEIVE = "--upload-pack=git-upload-pack", "--receive-pack=git-receive-pack"
# Over a local transport (a path, `file://`) the other side is a git process on this
# machine reading that repository's config and hooks, which forge's `-c` does not reach
# (measured: a bare repository's `pre-receive`, `reference-transaction` and
# `core.alternateRefsCommand` ran in forge's push), and that repository may be one the
# agent made. There the programs themselves carry the pinned settings; every other
# transport refuses a local path (GIT_ALLOW_PROTOCOL), so a rewrite to one
# (`url.<base>.pushInsteadOf`) fails instead of running the other side's hooks.
_OTHER_SIDE = " ".join(PINNED)
LOCAL_UPLOAD = f"--upload-pack=git {_OTHER_SIDE} upload-pack"
LOCAL_RECEIVE = f"--receive-pack=git {_OTHER_SIDE} receive-pack"


def git_environment(protocols: str = SAFE_PROTOCOLS) -> dict[str, str]:
    """The environment of forge's git: the caller's minus what points git elsewhere, with
    forge's identity, no prompt, only `protocols` as transports, and no replacement objects
    (a `refs/replace/` ref would change what a record reads as)."""
    env = {name: value for name, value in os.environ.items()
           if name not in LOCAL_VARIABLES and not name.startswith("GIT_CONFIG_")}
    return {**env, **IDENTITY, "GIT_TERMINAL_PROMPT": "0", "GIT_ALLOW_PROTOCOL": protocols,
            "GIT_NO_REPLACE_OBJECTS": "1"}


def is_local_url(url: str) -> bool:
    """Whether git reaches `url` by a local transport: `file://`, or a path (git's own
    rule: no `://`, and no `:` before the first `/`, which would make it `host:path`)."""
    if "://" in url:
        return url.lower().startswith("file://")
    colon, slash = url.find(":"), url.find("/")
    return colon < 0 or 0 <= slash < colon


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
        self.deadline: float | None = None  # time.monotonic() past which no git starts
        self._pinned_programs: list[str] | None = None
        self._local: bool | None = None
        self._named: bool | None = None

    def _configured(self) -> None:
        """GitFailed unless the remote is a name git's config gives a URL: a URL or a path
        (from a model's `claims --remote`, or `.forge/config.yaml`, which the agent can
        write) would let the agent pick where forge's processes, outside its sandbox,
        push and fetch: a repository it made, or a server its network may not reach. With
        the kernel layer on, the config files that name remotes (`.git/config`,
        `~/.gitconfig`) are the person's alone."""
        if self._named is None:
            found = subprocess.run([program("git"), "-C", self.root, *PINNED, "config",
                                    "--get", f"remote.{self.remote}.url"],
                                   capture_output=True, text=True, env=git_environment(),
                                   timeout=self._seconds(), check=False)
            self._named = found.returncode == 0 and bool(found.stdout.strip())
        if not self._named:
            raise GitFailed(f"{self.remote!r} is not a remote configured in this repository: "
                            "forge pushes and fetches only through a remote a person named "
                            "(git remote add NAME URL), never a URL or path given to it")

    def _is_local(self) -> bool:
        """Whether the remote's URL, as git rewrites it for a fetch, is a local transport."""
        if self._local is None:
            shown = subprocess.run([program("git"), "-C", self.root, *PINNED, "ls-remote",
                                    "--get-url", self.remote], capture_output=True, text=True,
                                   env=git_environment(), timeout=self._seconds(),
                                   check=False).stdout.strip()
            self._local = is_local_url(shown or self.remote)
        return self._local

    def _transport(self) -> tuple[str, str, str]:
        """(upload program, receive program, allowed protocols) for this remote."""
        if self._is_local():
            return LOCAL_UPLOAD, LOCAL_RECEIVE, SAFE_PROTOCOLS
        return UPLOAD, RECEIVE, SAFE_PROTOCOLS.replace("file:", "")

    def _seconds(self) -> float:
        """How long the next git may run: `timeout`, or what is left before `deadline`."""
        if self.deadline is None:
            return self.timeout
        import time

        left = self.deadline - time.monotonic()
        if left <= 0:
            raise GitFailed("the remote did not answer in the time a hook has for it")
        return min(self.timeout, left)

    def _programs(self) -> list[str]:
        """`-c` settings that put back the user's and the system's value of every setting
        in PROGRAM_KEYS the repository's config sets: an ssh command, an askpass or a
        credential helper the agent wrote into .git/config would run in forge's hook
        process. A credential helper list is reset (`helper=`) and refilled."""
        if self._pinned_programs is not None:
            return self._pinned_programs
        shown = subprocess.run([program("git"), "-C", self.root, "config", "--show-scope",
                                "--get-regexp", PROGRAM_KEYS], capture_output=True, text=True,
                               env=git_environment(), timeout=self._seconds(),
                               check=False).stdout
        found = []  # (scope, key, value), in the order git reads them
        for line in shown.splitlines():
            scope, _, setting = line.partition("\t")
            found.append((scope, *setting.partition(" ")[::2]))
        pinned: list[str] = []
        for key in dict.fromkeys(key for scope, key, _ in found if scope in _REPOSITORY_SCOPES):
            kept = [value for scope, name, value in found
                    if name == key and scope not in _REPOSITORY_SCOPES]
            if key.startswith("credential."):
                values = ["", *kept]  # the empty value resets the helper list
            else:
                values = kept[-1:] or ["ssh" if key == "core.sshcommand" else ""]
            for value in values:
                pinned += ["-c", f"{key}={value}"]
        self._pinned_programs = pinned
        return pinned

    def git(self, *args: str, stdin: str | None = None) -> subprocess.CompletedProcess:
        if self.remote.startswith("-") or not self.remote:  # `--upload-pack=CMD` runs CMD
            raise GitFailed(f"{self.remote!r} is not a git remote (neither a remote's name "
                            "nor a URL starts with '-')")
        try:
            protocols, programs = SAFE_PROTOCOLS, []
            if args[0] in _NETWORK:
                self._configured()
                upload, receive, protocols = self._transport()
                programs = self._programs()
                args = tuple({UPLOAD: upload, RECEIVE: receive}.get(a, a) for a in args)
            return subprocess.run([program("git"), "-C", self.root, *PINNED, *programs, *args],
                                  input=stdin, capture_output=True, text=True,
                                  env=git_environment(protocols),
                                  timeout=self._seconds(), check=False)
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
        listed = self.git("ls-remote", UPLOAD, self.remote, f"{self.prefix}{pattern}")
        if listed.returncode != 0:
            raise GitFailed(listed.stderr.strip() or "ls-remote failed")
        if not listed.stdout.strip():
            return {}
        private = f"{SEEN_PREFIX}{os.urandom(16).hex()}/"
        fetched = self.git("fetch", UPLOAD, "--no-tags", "--quiet", "--no-write-fetch-head",
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
        """commit -> message for many commits, in one git process; an object that is not a
        commit has none (`git show` would print a blob's content, which could then claim
        to be any commit's message)."""
        kinds = self.checked("cat-file", "--batch-check=%(objectname) %(objecttype)",
                             stdin="".join(f"{sha}\n" for sha in commits)).split("\n")
        commits = [line.split()[0] for line in kinds if line.endswith(" commit")]
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
                reader = subprocess.Popen([program("git"), "-C", self.root, *PINNED, "cat-file",
                                           "--batch"],
                                          stdin=names, stdout=subprocess.PIPE,
                                          stderr=subprocess.DEVNULL, env=git_environment())
            except OSError as exc:
                raise GitFailed(f"git cat-file did not run ({exc})") from None
            try:
                for sha in shas:
                    header = reader.stdout.readline().split()
                    if len(header) != 3 or header[1] != b"blob" or not header[2].isdigit():
                        raise GitFailed(f"object {sha} is not a blob in this clone")
                    size = int(header[2])
                    if size > RECORD_BYTES_LIMIT:  # never read whole into a hook
                        raise GitFailed(f"object {sha} is larger than {RECORD_BYTES_LIMIT} "
                                        "bytes")
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
        `parent` when given (so the ref only ever moves forward: see goal/sync/remote.py)."""
        if tree is None:
            tree = self.checked("hash-object", "-t", "tree", "-w", "--stdin", stdin="").strip()
        parents = ["-p", parent] if parent else []
        return self.checked("commit-tree", tree, *parents, "-m", message).strip()

    def swap(self, name: str, expected: str | None, new: str | None) -> bool:
        """Point `<prefix><name>` at `new` (None: delete it) only if it is still `expected`
        (None: absent); False when another writer moved it first."""
        ref = f"{self.prefix}{name}"
        pushed = self.git("push", RECEIVE, "--atomic", "--porcelain", "--quiet", "--no-verify",
                          f"--force-with-lease={ref}:{expected or ''}", self.remote,
                          f"{new or ''}:{ref}")
        if pushed.returncode == 0:
            return True
        text = pushed.stdout + pushed.stderr
        if "stale info" in text or "rejected" in text or "fetch first" in text:
            return False
        raise GitFailed(text.strip() or "push failed")
