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
def locked(goal_dir: Path, *, shared: bool = False):
    """Hold the goal's writer lock (exclusive) or a reader's (`shared`) for the `with` body.

    A reader opens the lock file read-only, so it works where the ledger is a read-only
    bind (forge's kernel layer, for the agent's Bash); where no writer ever created the
    file there is nothing to wait for.
    """
    path = goal_dir / LOCK_NAME
    try:
        import fcntl
    except ImportError:  # not POSIX
        import filelock

        with filelock.FileLock(str(path)):
            yield
        return
    if shared:
        try:
            fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW)
        except FileNotFoundError:
            yield
            return
    else:
        fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_SH if shared else fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)  # closing the descriptor releases the lock
