"""A gate's candidate boundary: the files its globs match, and one content hash of them.

Files are taken as they are on disk, tracked and untracked alike. In a git work tree the
list comes from `git ls-files --cached --others --exclude-standard` (what git itself would
show: ignored build output such as `__pycache__/` is left out, so running the tests does
not make their own receipt stale); outside git, from a walk of the tree. `.git/` and
`.forge/local/` (where receipts, logs and caches live) are never part of a boundary.

Hashing every file on every `forge gate status` would make the cost grow with the tree, so
each file's digest is cached under its path with the (size, mtime in ns, inode, ctime in
ns) it had (one `size:mtime:inode:ctime:digest` string each, which JSON decodes three times
faster than a list): an unchanged stat reuses the digest, a changed one is verified by
hashing the file again (`touch` changes nothing). The ctime is there because an agent can
set the rest back (same size, `touch -d` to the old mtime) and so make forge's own run
reuse a pass on a file it broke; only the kernel sets a ctime. A file changed within the
last two seconds is not cached, since
a second write in the same clock tick could leave its stat unchanged (git's "racily clean"
problem); it is hashed again next time.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import subprocess
import time
from collections.abc import Iterable
from pathlib import Path

from forge_runtime.gates.files import encode, write_bytes

STAT_CACHE = "stat-cache.json"
EXCLUDED = (".git/", ".forge/local/")
RACY_SECONDS = 2.0


def compile_glob(pattern: str) -> re.Pattern:
    """A boundary glob as a regular expression over `/`-separated relative paths."""
    return re.compile(_glob_regex(pattern), re.DOTALL)


def _glob_regex(pattern: str) -> str:
    pattern = pattern.strip().lstrip("/")
    while pattern.startswith("./"):
        pattern = pattern[2:]
    if pattern.endswith("/"):
        pattern += "**"
    parts = []
    segments = pattern.split("/")
    for index, segment in enumerate(segments):
        last = index == len(segments) - 1
        if segment == "**":
            parts.append(".*" if last else "(?:[^/]+/)*")
            continue
        parts.append(_segment(segment) + ("" if last else "/"))
    # a pattern naming a directory covers everything under it
    return "".join(parts) + "(?:/.*)?"


def _segment(segment: str) -> str:
    out, index = [], 0
    while index < len(segment):
        char = segment[index]
        if char == "*":
            out.append("[^/]*")
        elif char == "?":
            out.append("[^/]")
        elif char == "[" and segment.find("]", index + 2) != -1:
            end = segment.find("]", index + 2)
            body = segment[index + 1:end]
            negated = body[:1] == "!"
            body = body[1:] if negated else body
            out.append("[" + ("^" if negated else "") + body.replace("\\", "\\\\") + "]")
            index = end
        else:
            out.append(re.escape(char))
        index += 1
    return "".join(out)


def literal_root(pattern: str) -> str:
    """The leading directories of a glob that hold no wildcard: where a walk must start."""
    fixed = []
    for segment in pattern.strip().lstrip("/").split("/")[:-1]:
        if segment in ("", ".") or any(char in segment for char in "*?["):
            break
        fixed.append(segment)
    return "/".join(fixed)


class Matcher:
    """Which of a tree's files fall in a boundary (a list of globs): one regular expression,
    so a 10,000-file tree costs 10,000 matches per gate, not that times its globs."""

    def __init__(self, globs: Iterable[str]) -> None:
        self.globs = tuple(globs)
        self._regex = re.compile("|".join(f"(?:{_glob_regex(glob)})" for glob in self.globs),
                                 re.DOTALL)

    def matches(self, path: str) -> bool:
        return self._regex.fullmatch(path) is not None

    def select(self, paths: Iterable[str]) -> list[str]:
        match = self._regex.fullmatch
        return [path for path in paths if match(path) is not None]

    def roots(self) -> set[str]:
        return {literal_root(glob) for glob in self.globs}


def list_files(project, roots: set[str] | None = None) -> list[str]:
    """Every file of the work tree a boundary may hold, as sorted relative `/` paths.

    `roots` narrows a walk outside git to the directories the globs can reach.
    """
    listed = _git_files(project) if project.is_git else None
    if listed is None:
        listed = _walk(project.root, roots)
    return sorted({path for path in listed if not path.startswith(EXCLUDED)})


def _git_files(project) -> list[str] | None:
    """Tracked and untracked-but-not-ignored files, or None when git cannot tell. It runs in
    forge's hook processes, so with forge's own git settings (gitrefs.PINNED: no fsmonitor
    or hook the repository's config names) and environment."""
    from forge_runtime.agent_roots import program
    from forge_runtime.gitrefs import PINNED, git_environment

    try:
        done = subprocess.run(
            [program("git"), *PINNED, "-c", "core.quotepath=off", "ls-files", "-z", "--cached",
             "--others", "--exclude-standard"], cwd=project.root, capture_output=True,
            timeout=60, env={**git_environment(), "GIT_OPTIONAL_LOCKS": "0"})
    except (OSError, subprocess.TimeoutExpired):
        return None
    if done.returncode != 0:
        return None
    return [name for name in os.fsdecode(done.stdout).split("\0") if name]


def _walk(root: Path, roots: set[str] | None) -> list[str]:
    starts = sorted(roots) if roots and "" not in roots else [""]
    found = []
    for start in starts:
        top = os.path.join(root, start) if start else str(root)
        for directory, subdirs, files in os.walk(top):
            relative = os.path.relpath(directory, root).replace(os.sep, "/")
            relative = "" if relative == "." else relative + "/"
            subdirs[:] = [name for name in subdirs
                          if not (relative + name + "/").startswith(EXCLUDED)]
            found.extend(relative + name for name in files)
    return found


class Hasher:
    """File digests through the stat cache of one project; `save()` writes what it learnt.

    `witness`, for forge's own cache (gates/witnessed.py): `trusts(body)` says whether the
    cache file's bytes are what forge wrote (else the cache starts empty), `note(body)` is
    told of each write before it is made."""

    def __init__(self, cache_path: Path, witness=None) -> None:
        self.cache_path = cache_path
        self.witness = witness
        cached = _cached(cache_path, witness)
        self._cache: dict = cached if isinstance(cached, dict) else {}
        self._dirty = False
        self._now_ns = time.time_ns()
        self._seen: dict[str, str | None] = {}  # this run's answers: one stat per file
        self.hashed = 0  # files read in full, for the benchmark and tests

    def digest(self, root: Path, path: str) -> str | None:
        """The content digest of `path` (a symlink: of its target text); None if absent."""
        if path not in self._seen:
            self._seen[path] = self._digest(root, path)
        return self._seen[path]

    def _digest(self, root: Path, path: str) -> str | None:
        full = f"{root}/{path}"
        try:
            info = os.lstat(full)
        except OSError:
            return None
        key = f"{info.st_size}:{info.st_mtime_ns}:{info.st_ino}:{info.st_ctime_ns}:"
        entry = self._cache.get(path)
        if entry.__class__ is str and entry.startswith(key):
            return entry[len(key):]
        digest = _content_digest(full, info)
        if digest is None:
            return None
        self.hashed += 1
        racy = self._now_ns - info.st_mtime_ns < RACY_SECONDS * 1e9
        if racy:
            if self._cache.pop(path, None) is not None:
                self._dirty = True
        else:
            self._cache[path] = key + digest
            self._dirty = True
        return digest

    def forget(self) -> None:
        """Drop this run's answers, so the next digest looks at the disk again."""
        self._seen.clear()

    def save(self) -> None:
        """Best effort: a cache that cannot be written only costs the next run some hashing."""
        if not self._dirty:
            return
        body = encode(self._cache)
        with contextlib.suppress(OSError):
            if self.witness is not None:
                self.witness.note(body)
            write_bytes(self.cache_path, body)


def _cached(cache_path: Path, witness) -> object | None:
    """The cache file's JSON; None when it is missing, unreadable or not what `witness`
    says forge wrote."""
    from forge_runtime import fastjson

    try:
        with open(cache_path, "rb") as handle:
            body = handle.read()
    except OSError:
        return None
    if witness is not None and not witness.trusts(body):
        return None
    try:
        return fastjson.loads(body)
    except ValueError:
        return None


def _content_digest(full: str, info: os.stat_result) -> str | None:
    import stat

    if stat.S_ISLNK(info.st_mode):
        return "link:" + hashlib.sha256(os.fsencode(os.readlink(full))).hexdigest()
    if not stat.S_ISREG(info.st_mode):
        return None  # a submodule's directory, a socket: not content a gate reads
    digest = hashlib.sha256()
    try:
        with open(full, "rb") as handle:
            for block in iter(lambda: handle.read(1 << 20), b""):
                digest.update(block)
    except OSError:
        return None
    return digest.hexdigest()


def boundary_hash(root: Path, files: Iterable[str], hasher: Hasher) -> tuple[str, int]:
    """One hash over the (path, content) of every file present, and how many there were.

    A new, deleted or renamed file changes it as surely as an edited one does.
    """
    combined = hashlib.sha256()
    count = 0
    for path in files:
        digest = hasher.digest(root, path)
        if digest is None:
            continue
        combined.update(f"{path}\0{digest}\n".encode("utf-8", "surrogateescape"))
        count += 1
    return combined.hexdigest(), count
