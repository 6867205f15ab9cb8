"""Which artifact files changed since the last look, for a long-lived `forge mcp`.

A store's first read of a folder stats every file (2,000 stats is most of a `get` at 2,000
artifacts); a watched folder instead says which names changed since the last look, so an
unchanged folder costs one non-blocking read and a change costs a stat per changed name.
On Linux the kernel says so (inotify, through libc: no dependency); it reports every write,
rename and deletion inside the folder, the in-place rewrites of Claude Code's Write tool
included, which change no directory mtime. Where inotify is not there (another system, a
limit reached), or when its queue overflowed or the folder itself moved, `changes` answers
None: the caller stats everything, as without a watcher. Never a stale answer.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import os
import struct

IN_MODIFY = 0x002
IN_ATTRIB = 0x004
IN_CLOSE_WRITE = 0x008
IN_MOVED_FROM = 0x040
IN_MOVED_TO = 0x080
IN_CREATE = 0x100
IN_DELETE = 0x200
IN_DELETE_SELF = 0x400
IN_MOVE_SELF = 0x800
IN_Q_OVERFLOW = 0x4000
IN_IGNORED = 0x8000
IN_NONBLOCK = os.O_NONBLOCK
IN_CLOEXEC = os.O_CLOEXEC
_MASK = (IN_MODIFY | IN_ATTRIB | IN_CLOSE_WRITE | IN_MOVED_FROM | IN_MOVED_TO | IN_CREATE
         | IN_DELETE | IN_DELETE_SELF | IN_MOVE_SELF)
_LOST = IN_Q_OVERFLOW | IN_IGNORED | IN_DELETE_SELF | IN_MOVE_SELF
_HEADER = struct.Struct("iIII")
_libc = None


def _inotify():
    global _libc
    if _libc is None:
        name = ctypes.util.find_library("c")
        _libc = ctypes.CDLL(name, use_errno=True) if name else False
    return _libc if _libc and hasattr(_libc, "inotify_init1") else None


class Watcher:
    """The names changed in one folder since the last `changes()`; None when unknown."""

    def __init__(self, folder: str) -> None:
        self.folder = folder
        self._fd: int | None = None
        libc = _inotify()
        if libc is None:
            return
        fd = libc.inotify_init1(IN_NONBLOCK | IN_CLOEXEC)
        if fd < 0:
            return
        if libc.inotify_add_watch(fd, os.fsencode(folder), _MASK) < 0:
            os.close(fd)
            return
        self._fd = fd

    @property
    def active(self) -> bool:
        return self._fd is not None

    def changes(self) -> set[str] | None:
        """File names touched since the last call (empty: nothing), or None when the watch
        cannot say (lost events, the folder moved or gone, no watch at all)."""
        if self._fd is None:
            return None
        names: set[str] = set()
        while True:
            try:
                data = os.read(self._fd, 65536)
            except BlockingIOError:
                return names
            except OSError:
                self.close()
                return None
            offset = 0
            while offset + _HEADER.size <= len(data):
                _wd, mask, _cookie, length = _HEADER.unpack_from(data, offset)
                offset += _HEADER.size
                name = data[offset:offset + length].rstrip(b"\0")
                offset += length
                if mask & _LOST:
                    self.close()
                    return None
                if name:
                    names.add(os.fsdecode(name))

    def close(self) -> None:
        if self._fd is not None:
            os.close(self._fd)
            self._fd = None
