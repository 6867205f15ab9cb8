"""A goal file that cannot be written: say which condition it is and what fixes it.

A charge that cannot be written is a condition of the machine, not of the ledger: the
refusal names it (disk full, permission denied, read-only file system) and gives the command
that shows the person what to change, where a bare `internal error OSError: [Errno 28]`
would send them to `forge goal verify`, which finds the ledger fine. Nothing is lost
meanwhile: the turns stay in the host's transcript, and once the condition is fixed the
goal's next event charges every one of them: this session's, or a later session's
(events.catch_up_sessions).
"""

from __future__ import annotations

import errno
import os
import shlex

from forge_runtime.errors import EXIT_REFUSED, ForgeError

UNWRITABLE = "FORGE_GOAL_LEDGER_UNWRITABLE"
_LATER = ("the goal's next event charges every turn missed meanwhile, from this session's "
          "transcript: this session's next prompt or end, or a /goal of it in any session")

# errno -> (what happened, the command that shows it, what the person does)
_CONDITIONS = {
    errno.ENOSPC: ("the disk is full (no space left on the file system)", "df -h {dir}",
                   "free space there"),
    errno.EDQUOT: ("the disk quota is used up", "quota -s", "free space or raise the quota"),
    errno.EACCES: ("permission denied", "ls -ld {dir}",
                   "make it writable by the user running Claude Code"),
    errno.EPERM: ("the operation is not permitted", "ls -ld {dir}",
                  "make it writable by the user running Claude Code"),
    errno.EROFS: ("the file system is read-only", "findmnt -T {dir}",
                  "remount it read-write"),
}


def describe(exc: OSError, directory: str | os.PathLike) -> tuple[str, str, str]:
    """(what happened, the command that shows it, what to do) for a write that failed in
    `directory`."""
    what, fix, todo = _CONDITIONS.get(exc.errno) or (
        f"the write failed ({exc.strerror or exc})", "ls -ld {dir}", "check the file system")
    return what, fix.format(dir=shlex.quote(os.fspath(directory))), todo


def unwritable(exc: OSError, where: str | os.PathLike) -> ForgeError:
    """The refusal for `exc`, raised while writing under `where` (the ledger or state dir)."""
    path = exc.filename or where
    directory = os.path.dirname(os.fspath(path)) if exc.filename else os.fspath(where)
    what, fix, todo = describe(exc, directory)
    return ForgeError(f"forge cannot write {path}: {what}, so this goal's turns cannot be "
                      "charged", fix, exit_code=EXIT_REFUSED, code=UNWRITABLE,
                      rationale=f"{todo}; {_LATER}")
