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
from contextlib import contextmanager
from pathlib import Path

LOCK_NAME = "lock"


@contextmanager
def locked(goal_dir: Path):
    """Hold the goal's exclusive writer lock for the body of the `with`."""
    path = goal_dir / LOCK_NAME
    try:
        import fcntl
    except ImportError:  # not POSIX
        import filelock

        with filelock.FileLock(str(path)):
            yield
        return
    fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
