"""The per-goal writer lock.

Writers of one goal (Stop hooks of several sessions, `forge ledger ...`) are serialised by
an exclusive lock on `<goal dir>/lock`. On POSIX this is `fcntl.flock`, which is exactly
what `filelock.UnixFileLock` takes, so both interoperate; we call it directly because
importing filelock costs about 30 ms here, three quarters of the interpreter's own start,
and the Stop hook of a goal session pays it on every turn. Elsewhere (Windows) filelock
does the job. The kernel drops the lock when a process dies, so a SIGKILLed writer never
leaves a stale lock behind.
"""

from __future__ import annotations

import os

LOCK_NAME = "lock"


class locked:  # noqa: N801 (used as `with locked(goal_dir):`, as the function it was)
    """Hold the goal's writer lock (exclusive) or a reader's (`shared`) for the `with` body.

    A reader opens the lock file read-only, so it works where the ledger is a read-only
    bind (forge's kernel layer, for the agent's Bash); where no writer ever created the
    file there is nothing to wait for. A class rather than `contextlib.contextmanager`:
    `contextlib` costs every charging Stop a few milliseconds to import.
    """

    def __init__(self, goal_dir: str | os.PathLike, *, shared: bool = False) -> None:
        self.path = os.path.join(goal_dir, LOCK_NAME)
        self.shared = shared
        self._fd: int | None = None
        self._fallback = None

    def __enter__(self) -> None:
        try:
            import fcntl
        except ImportError:  # not POSIX
            import filelock

            self._fallback = filelock.FileLock(self.path)
            self._fallback.acquire()
            return
        if self.shared:
            try:
                fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
            except FileNotFoundError:
                return
        else:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX)
        except BaseException:
            os.close(fd)
            raise
        self._fd = fd

    def __exit__(self, kind, exc, traceback) -> bool:
        if self._fallback is not None:
            self._fallback.release()
            self._fallback = None
        if self._fd is not None:
            fd, self._fd = self._fd, None
            os.close(fd)  # closing the descriptor releases the lock
        return False
