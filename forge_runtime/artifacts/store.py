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
        """Every artifact file, front matter only (bodies are read on demand), by ID."""
        if self._all is None:
            self._all = self._scan()
        return self._all

    def by_id(self) -> Graph:
        """ID -> artifact; when two files claim one ID (a merge), the first by file name."""
        if self._graph is None:
            found = Graph()
            for artifact in self.all():
                found.setdefault(artifact.id, artifact)
            self._graph = found
        return self._graph

    def _changed(self, artifact: Artifact) -> None:
        """Keep what was read, with `artifact` as just written, instead of reading all again
        (the next process, or the next scan, checks every file anyway)."""
        if self._all is not None:
            name = artifact.file_name
            kept = [other for other in self._all if other.file_name != name]
            self._all = sorted([*kept, artifact], key=lambda item: item.file_name)
        self._graph = None

    def get(self, artifact_id: str) -> Artifact:
        """The artifact with its body; OpError naming how to find the right ID."""
        artifact = self.by_id().get(artifact_id.strip().upper())
        if artifact is None:
            raise OpError(f"no artifact {artifact_id!r} in {self.dir}", call("list"),
                          code="FORGE_ARTIFACT_NOT_FOUND",
                          rationale="lists the artifacts of this work tree with their IDs")
        return self.with_body(artifact)

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

    def _scan(self) -> list[Artifact]:
        try:
            entries = sorted((entry for entry in os.scandir(self.dir)
                              if entry.name.endswith(".md") and not entry.name.startswith(".")
                              and entry.is_file()), key=lambda entry: entry.name)
        except FileNotFoundError:
            return []
        index = self._read_index()
        fresh: dict[str, list] = {}
        artifacts = []
        parsed = 0
        for entry in entries:
            info = entry.stat()
            key = [info.st_mtime_ns, info.st_size]
            cached = index.get(entry.name)
            path = entry.path
            if cached and cached[:2] == key and isinstance(cached[2], dict):
                # A copy: operations change an artifact's meta before saving it.
                artifacts.append(Artifact(path, dict(cached[2])))
                fresh[entry.name] = cached
                continue
            parsed += 1
            artifact = self._parse(path)
            artifacts.append(artifact)
            if artifact.unreadable is None:
                fresh[entry.name] = [*key, artifact.meta]
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
        from forge_runtime.goal.lock import locked

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
