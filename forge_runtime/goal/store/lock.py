"""The per-goal writer lock.

Writers of one goal (Stop hooks of several sessions, `forge ledger ...`) are serialised by
an exclusive lock on `<goal dir>/lock`. On POSIX this is `fcntl.flock`, which is exactly
what `filelock.UnixFileLock` takes, so both interoperate; we call it directly because
importing filelock costs about 30 ms here, three quarters of the interpreter's own start,
and the Stop hook of a goal session pays it on every turn. Elsewhere (Windows) filelock
does the job. The kernel drops the lock when a process dies, so a SIGKILLed writer never
leaves a stale lock behind.

Every wait has a deadline (`LOCK_SECONDS`): a process that holds the lock and never lets go
(a hook wedged on something, or the agent's own `flock` where the kernel layer is off) must
not wedge every later Stop and `forge goal status` with it. Past the deadline the
caller gets FORGE_GOAL_WEDGED, which a hook answers by ending the goal's autonomy.
"""

from __future__ import annotations

import os

from forge_runtime.goal.store import layout

# How long a writer or reader waits for the lock: well past any append (milliseconds), and
# short of the Stop hook's watchdog, so that a held lock is refused with its own words.
LOCK_SECONDS = 8.0
WEDGED = "FORGE_GOAL_WEDGED"


class locked:  # noqa: N801 (used as `with locked(goal_dir):`, as the function it was)
    """Hold the goal's writer lock (exclusive) or a reader's (`shared`) for the `with` body.

    A reader opens the lock file read-only, so it works where the ledger is a read-only
    bind (forge's kernel layer, for the agent's Bash); where no writer ever created the
    file there is nothing to wait for. A class rather than `contextlib.contextmanager`:
    `contextlib` costs every charging Stop a few milliseconds to import.
    """

    def __init__(self, goal_dir: str | os.PathLike, *, shared: bool = False,
                 seconds: float | None = None) -> None:
        self.path = os.path.join(goal_dir, layout.LOCK_NAME)
        self.shared = shared
        self.seconds = LOCK_SECONDS if seconds is None else seconds
        self._fd: int | None = None
        self._fallback = None

    def __enter__(self) -> None:
        try:
            import fcntl
        except ImportError:  # not POSIX
            import filelock

            self._fallback = filelock.FileLock(self.path)
            try:
                self._fallback.acquire(timeout=self.seconds)
            except filelock.Timeout:
                raise held_too_long(self.path, self.seconds) from None
            return
        if self.shared:
            try:
                fd = os.open(self.path, os.O_RDONLY | os.O_NOFOLLOW)
            except FileNotFoundError:
                return
        else:
            fd = os.open(self.path, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
        try:
            _take(fd, fcntl, fcntl.LOCK_SH if self.shared else fcntl.LOCK_EX, self.path,
                  self.seconds)
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


def _take(fd: int, fcntl, kind: int, path: str, seconds: float) -> None:
    """flock `fd` within `seconds`, polling: the first try costs one call, as before."""
    try:
        fcntl.flock(fd, kind | fcntl.LOCK_NB)
        return
    except BlockingIOError:
        pass
    import time

    deadline, pause = time.monotonic() + seconds, 0.005
    while True:
        time.sleep(pause)
        try:
            fcntl.flock(fd, kind | fcntl.LOCK_NB)
            return
        except BlockingIOError:
            if time.monotonic() >= deadline:
                raise held_too_long(path, seconds) from None
        pause = min(pause * 2, 0.1)


def held_too_long(path: str, seconds: float):
    """The refusal for a lock another process held past the deadline."""
    import shlex

    from forge_runtime.errors import EXIT_REFUSED, ForgeError

    return ForgeError(f"the goal ledger's lock {path} stayed held by another "
                      f"process for {seconds:g} s, so forge cannot charge or read this goal",
                      f"fuser -v {shlex.quote(path)}", exit_code=EXIT_REFUSED, code=WEDGED,
                      rationale="shows the process that holds it; end it, and the next event "
                                "of the session charges every turn missed meanwhile")
