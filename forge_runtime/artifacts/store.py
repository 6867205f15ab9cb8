"""Artifact files on disk: reading them all quickly, allocating IDs, writing atomically.

Layout, per work tree (a worktree writes its own artifacts):
    .forge/artifacts/<ID>-<slug>.md     the artifacts: the source of truth
    .forge/local/artifacts/index.json   parsed front matter keyed by file name, size and
                                        mtime: derived, git-ignored, rebuilt when stale
    .forge/local/artifacts/lock         serialises ID allocation between processes

The index only saves parsing: an entry is used when the file's size and mtime are those it
was parsed at, otherwise the file is read again, and a missing or corrupt index is rebuilt.
Deleting it never loses anything.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from forge_runtime.artifacts import frontmatter
from forge_runtime.artifacts.model import Artifact, Graph, prefix_of
from forge_runtime.project import Project
from forge_runtime.steps import OpError, call

ARTIFACTS_DIR = "artifacts"
INDEX_VERSION = 1
SLUG_LENGTH = 48
FILE_ID = re.compile(r"^([A-Z]+)-(\d+)")
# Index path -> (the index file's mtime and size, its entries as this process knows them).
# Entries are checked against each artifact file's size and mtime on every scan, so a
# stale one is never used; the file's stamp only says whether to read it again.
_KNOWN: dict[str, tuple[tuple[int, int] | None, dict]] = {}
# Artifacts folder -> (each file's (mtime, size), the artifacts read then, their graph).
_SCANS: dict[str, tuple[dict, list, Graph | None]] = {}
# Artifacts folder -> the watch that says which of its files changed (`watch_folders`).
_WATCHERS: dict = {}
_WATCHING = False


def watch_folders() -> None:
    """In this (long-lived) process, learn of changes to artifact folders from the kernel
    instead of a stat of every file per read (forge_runtime/artifacts/watch.py)."""
    global _WATCHING
    _WATCHING = True


def slug(title: str, fallback: str) -> str:
    """A file-name-safe slug of a title: lower-case ASCII words joined by `-`."""
    import unicodedata

    ascii_title = unicodedata.normalize("NFKD", title).encode("ascii", "ignore").decode()
    words = re.sub(r"[^a-z0-9]+", "-", ascii_title.lower()).strip("-")
    return (words[:SLUG_LENGTH].rstrip("-") or fallback)


def atomic_write(path: Path, text: str, *, durable: bool = True) -> None:
    """Write through a temporary file and a rename: a reader sees the old file or the new.
    `durable` also syncs it to disk first (not needed for a cache)."""
    temporary = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    with open(temporary, "w", encoding="utf-8") as stream:
        stream.write(text)
        if durable:
            stream.flush()
            os.fsync(stream.fileno())
    os.replace(temporary, path)


class Store:
    """The artifacts of one work tree."""

    def __init__(self, project: Project) -> None:
        self.project = project
        self.dir = project.forge_dir / ARTIFACTS_DIR
        self.state_dir = project.local_dir / ARTIFACTS_DIR
        self.index_path = self.state_dir / "index.json"
        self._all: list[Artifact] | None = None
        self._graph: Graph | None = None

    # -- reading --------------------------------------------------------------------------

    def all(self) -> list[Artifact]:
        """Every artifact file, front matter only (bodies are read on demand), by file name.

        Every call of a new Store checks every file's size and mtime; when none changed
        since this process last read them (a long-running `forge mcp`), what it read then
        is reused. Those artifacts are shared: only `get` hands out one to change.
        """
        if self._all is None:
            seen = _SCANS.get(str(self.dir))
            stamps = self._stamps_since(seen[0] if seen else None)
            if seen is not None and seen[0] == stamps:
                self._all, self._graph = seen[1], seen[2]
            else:
                self._all = self._scan(stamps)
                _SCANS[str(self.dir)] = (stamps, self._all, None)
        return self._all

    def by_id(self) -> Graph:
        """ID -> artifact; when two files claim one ID (a merge), the first by file name."""
        artifacts = self.all()  # may bring the graph of an unchanged earlier read
        if self._graph is None:
            found = Graph()
            for artifact in artifacts:
                found.setdefault(artifact.id, artifact)
            self._graph = found
            seen = _SCANS.get(str(self.dir))
            if seen is not None and seen[1] is self._all:
                _SCANS[str(self.dir)] = (seen[0], seen[1], found)
        return self._graph

    def _changed(self, artifact: Artifact) -> None:
        """Keep what was read, with `artifact` as just written, instead of reading all again.

        For this process's later reads too: the remembered stamps get the written file's,
        so if another process changed a file meanwhile, the next check of the stamps sees
        it and reads everything again. A Store that had not read yet keeps not trusting
        the remembered read until it checks the stamps.
        """
        seen = _SCANS.get(str(self.dir))
        loaded = self._all is not None
        base = self._all if loaded else (seen[1] if seen else None)
        graph = self._graph if loaded else (seen[2] if seen else None)
        self._graph = None
        if base is None:
            return
        name = artifact.file_name
        kept = [other for other in base if other.file_name != name]
        artifacts = sorted([*kept, artifact], key=lambda item: item.file_name)
        updated = None
        if graph is not None and len(kept) == len(base) and not artifact.links and (
                artifact.id not in graph):
            # A new artifact that links nowhere changes no other artifact's reverse links.
            updated = Graph(graph)
            updated[artifact.id] = artifact
            updated._incoming = graph._incoming
        if loaded:
            self._all, self._graph = artifacts, updated
        try:
            info = os.stat(artifact.where)
        except OSError:
            _SCANS.pop(str(self.dir), None)
            return
        stamps = {**(seen[0] if seen else {}), name: (info.st_mtime_ns, info.st_size)}
        _SCANS[str(self.dir)] = (stamps, artifacts, updated)

    def get(self, artifact_id: str) -> Artifact:
        """The artifact with its body, as a copy the caller may change and `save`;
        OpError naming how to find the right ID."""
        artifact = self.by_id().get(artifact_id.strip().upper())
        if artifact is None:
            raise OpError(f"no artifact {artifact_id!r} in {self.dir}", call("list"),
                          code="FORGE_ARTIFACT_NOT_FOUND",
                          rationale="lists the artifacts of this work tree with their IDs")
        read = self.with_body(artifact)
        return Artifact(read.where, dict(read.meta), read.body, read.unreadable)

    def with_body(self, artifact: Artifact) -> Artifact:
        if artifact.body is None and artifact.unreadable is None:
            fresh = self._parse(artifact.path)
            artifact.meta, artifact.body, artifact.unreadable = (fresh.meta, fresh.body,
                                                                 fresh.unreadable)
        return artifact

    def _parse(self, path: str | Path) -> Artifact:
        try:
            with open(path, encoding="utf-8") as stream:
                text = stream.read()
        except (OSError, UnicodeDecodeError) as exc:
            return Artifact(path, unreadable=f"cannot be read ({exc})")
        try:
            meta, body = frontmatter.split(text)
        except frontmatter.FrontMatterError as exc:
            return Artifact(path, unreadable=str(exc), body=text)
        return Artifact(path, meta, body)

    def _stamps_since(self, known: dict | None) -> dict[str, tuple[int, int]]:
        """The stamps of every artifact file: `known` with the files a watch says changed
        stat again, or (no watch, or one that cannot say) every file stat."""
        if not _WATCHING:
            return self._stamps()
        # lazy: the watch only when one is running
        from forge_runtime.artifacts.watch import Watcher

        key = str(self.dir)
        watcher = _WATCHERS.get(key)
        names = watcher.changes() if watcher is not None else None
        if names is not None and known is not None:
            stamps = dict(known)
            for name in names:
                if name.endswith(".md") and not name.startswith("."):
                    try:
                        info = os.stat(self.dir / name)
                    except OSError:
                        stamps.pop(name, None)
                        continue
                    stamps[name] = (info.st_mtime_ns, info.st_size)
            return stamps
        if names is None:  # no watch yet, or one that lost track: start one, then stat all
            watcher = Watcher(key)
            if watcher.active:
                _WATCHERS[key] = watcher
            else:
                _WATCHERS.pop(key, None)
        return self._stamps()

    def _stamps(self) -> dict[str, tuple[int, int]]:
        """File name -> (mtime, size) of every artifact file."""
        try:
            entries = os.scandir(self.dir)
        except FileNotFoundError:
            return {}
        with entries:
            stamps = {}
            for entry in entries:
                if entry.name.endswith(".md") and not entry.name.startswith(".") and (
                        entry.is_file()):
                    info = entry.stat()
                    stamps[entry.name] = (info.st_mtime_ns, info.st_size)
        return stamps

    def _scan(self, stamps: dict[str, tuple[int, int]]) -> list[Artifact]:
        index = self._read_index()
        fresh: dict[str, list] = {}
        artifacts = []
        parsed = 0
        folder = str(self.dir)
        for name in sorted(stamps):
            key = list(stamps[name])
            cached = index.get(name)
            path = os.path.join(folder, name)
            if cached and cached[:2] == key and isinstance(cached[2], dict):
                # A copy: the index entry must not change with the artifact.
                artifacts.append(Artifact(path, dict(cached[2])))
                fresh[name] = cached
                continue
            parsed += 1
            artifact = self._parse(path)
            artifacts.append(artifact)
            if artifact.unreadable is None:
                fresh[name] = [*key, artifact.meta]
        # Rewriting the whole index for a file or two costs more than parsing them again
        # in the next process: the file is rewritten once a hundredth of its entries (at
        # least one) are new; this process remembers them all either way.
        if parsed >= max(1, len(fresh) // 100) or len(fresh) < len(index):
            self._write_index(fresh)
        elif parsed and str(self.index_path) in _KNOWN:
            _KNOWN[str(self.index_path)] = (_KNOWN[str(self.index_path)][0], fresh)
        return artifacts

    def _index_stamp(self) -> tuple[int, int] | None:
        try:
            info = os.stat(self.index_path)
        except OSError:
            return None
        return info.st_mtime_ns, info.st_size

    def _read_index(self) -> dict:
        """The index entries: as this process last saw them while the file is unchanged
        (a long-running `forge mcp` parses it once), else read from the file."""
        stamp = self._index_stamp()
        known = _KNOWN.get(str(self.index_path))
        if known is not None and stamp is not None and known[0] == stamp:
            return known[1]
        try:
            data = json.loads(self.index_path.read_text(encoding="utf-8"))
        except (OSError, ValueError):
            return {}
        if not isinstance(data, dict) or data.get("version") != INDEX_VERSION:
            return {}
        entries = data.get("entries")
        if not isinstance(entries, dict):
            return {}
        _KNOWN[str(self.index_path)] = (stamp, entries)
        return entries

    def _write_index(self, entries: dict) -> None:
        """Best effort: an index that cannot be written only costs the next read time."""
        try:
            self.state_dir.mkdir(parents=True, exist_ok=True)
            atomic_write(self.index_path,
                         json.dumps({"version": INDEX_VERSION, "entries": entries}),
                         durable=False)
        except OSError:
            return
        _KNOWN[str(self.index_path)] = (self._index_stamp(), entries)

    # -- writing --------------------------------------------------------------------------

    def create(self, kind: str, title: str, meta: dict, body: str) -> Artifact:
        """A new artifact with the next free ID of its kind, safe against racing processes.

        The next number is found and the file created under one exclusive lock, and the
        file is created with O_EXCL, so two processes never write one ID.
        """
        # lazy: the lock only for a new artifact
        from forge_runtime.goal.store.lock import locked

        self.dir.mkdir(parents=True, exist_ok=True)
        self.state_dir.mkdir(parents=True, exist_ok=True)
        with locked(self.state_dir):
            artifact_id = f"{prefix_of(kind)}-{self._next_number(kind):03d}"
            path = self.dir / f"{artifact_id}-{slug(title, kind)}.md"
            full = {"id": artifact_id, "kind": kind, "title": title, **meta}
            descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
            with os.fdopen(descriptor, "w", encoding="utf-8") as stream:
                stream.write(frontmatter.join(full, body))
        created = Artifact(path, full, body)
        self._changed(created)
        return created

    def _next_number(self, kind: str) -> int:
        prefix = prefix_of(kind)
        numbers = [int(match.group(2)) for name in os.listdir(self.dir)
                   if (match := FILE_ID.match(name)) and match.group(1) == prefix]
        return max(numbers, default=0) + 1

    def save(self, artifact: Artifact) -> None:
        """Write an artifact's front matter and body back to its file."""
        self.with_body(artifact)
        atomic_write(artifact.path, frontmatter.join(artifact.meta, artifact.body or ""))
        self._changed(artifact)
