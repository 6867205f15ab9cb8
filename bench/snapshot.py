"""Put files back as they were before a measured run, in time proportional to what changed.

A Stop that charges a turn writes a record, a turn marker, the head pointer, state.md and
the session binding. To measure turn 2,001 thirty times, every run must start from the
same 2,000-turn ledger; copying thousands of files back each time would dominate the
bench, so a snapshot remembers each file's identity (inode, size, mtime) and restores
only the files a run created, replaced or changed.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path


def _identity(path: Path) -> tuple[int, int, int]:
    info = path.lstat()
    return info.st_ino, info.st_size, info.st_mtime_ns


class Snapshot:
    """A saved copy of some files and directory trees under `store`."""

    def __init__(self, paths: list[Path], store: Path) -> None:
        self.paths = [path.resolve() for path in paths]
        self.store = store
        self.files: dict[Path, tuple[int, int, int]] = {}
        self.dirs: set[Path] = set()
        store.mkdir(parents=True)
        for index, path in enumerate(self.paths):
            saved = store / str(index)
            if path.is_dir():
                shutil.copytree(path, saved, symlinks=True)
            elif path.exists():
                shutil.copy2(path, saved, follow_symlinks=False)
            for current in self._walk(path):
                if current.is_dir() and not current.is_symlink():
                    self.dirs.add(current)
                else:
                    self.files[current] = _identity(current)

    @staticmethod
    def _walk(path: Path):
        if not path.exists() and not path.is_symlink():
            return
        yield path
        if path.is_dir() and not path.is_symlink():
            for parent, dirnames, filenames in os.walk(path):
                for name in dirnames + filenames:
                    yield Path(parent, name)

    def _saved(self, current: Path) -> Path:
        for index, path in enumerate(self.paths):
            if current == path or path in current.parents:
                return self.store / str(index) / current.relative_to(path)
        raise ValueError(f"{current} is not under the snapshot")

    def restore(self) -> None:
        """Remove what appeared, put back what changed or vanished."""
        for path in self.paths:
            for current in list(self._walk(path)):
                if current in self.files or current in self.dirs:
                    continue
                if current.is_dir() and not current.is_symlink():
                    shutil.rmtree(current, ignore_errors=True)
                elif current.exists() or current.is_symlink():
                    current.unlink()
        for directory in sorted(self.dirs):
            directory.mkdir(exist_ok=True)
        for current, identity in self.files.items():
            try:
                unchanged = _identity(current) == identity
            except FileNotFoundError:
                unchanged = False
            if not unchanged:
                current.unlink(missing_ok=True)
                shutil.copy2(self._saved(current), current, follow_symlinks=False)
                self.files[current] = _identity(current)
