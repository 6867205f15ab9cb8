"""Open files the agent can reach the way a hook must: never blocking, never through a link.

forge's hooks run outside the agent's sandbox, as the person, and the host kills one that
outlives its timeout. So a file a hook reads from the work tree (or from a ledger the agent's
Bash can reach when the kernel layer is off) is a file the agent may have swapped:
- for a FIFO or a device, whose plain `open()` blocks until a writer comes, which is never
  (every Stop would wedge, and the session work on uncharged);
- for a link to a directory outside the sandbox, through which a hook writing its own file
  would write there as the person.

Every such open goes through here. A read opens with O_NONBLOCK and O_NOFOLLOW and keeps the
file only when `fstat` says it is a regular file; a write creates a temporary file beside the
target and renames it over the name (a link or FIFO at the name is replaced, never followed).
Given the project root (`below`), every directory under it is opened one component at a
time with O_NOFOLLOW | O_DIRECTORY, so no link anywhere below the root is followed. A refusal
is `UnsafePath`, an OSError: every caller already fails closed on an OSError in its own way.

Imports only `os`, `errno` and `stat` (no `__future__` either): the guard reads guard.yaml
through here on every tool call, and a Stop of a bound session its state.md.
"""

import errno
import os
import stat

_CLOEXEC = getattr(os, "O_CLOEXEC", 0)
_NOFOLLOW = getattr(os, "O_NOFOLLOW", 0)
_NONBLOCK = getattr(os, "O_NONBLOCK", 0)
_DIRECTORY = getattr(os, "O_DIRECTORY", 0)
READ_FLAGS = os.O_RDONLY | _NONBLOCK | _NOFOLLOW | _CLOEXEC
DIR_FLAGS = os.O_RDONLY | _DIRECTORY | _NOFOLLOW | _CLOEXEC
_CREATE_FLAGS = os.O_WRONLY | os.O_CREAT | os.O_EXCL | _NOFOLLOW | _CLOEXEC
# What a link met on the way is reported as (ELOOP from O_NOFOLLOW, ENOTDIR from
# O_DIRECTORY on a link to a file, EMLINK on FreeBSD).
_LINK_ERRNOS = (errno.ELOOP, errno.EMLINK)


class UnsafePath(OSError):
    """A path forge will not open: a link where it walks, or not a regular file.

    `errno` is ELOOP for a link and EINVAL for a file that is not regular, so
    `unwritable.describe` and every `except OSError` treat it as the failure it is.
    """


def _unsafe(path, why: str, code: int = errno.EINVAL) -> UnsafePath:
    return UnsafePath(code, f"{why}; forge does not open it", os.fspath(path))


def _relative_parts(path: str, below: str) -> list[str] | None:
    """The components of `path` under `below`, or None when it is not under it."""
    relative = os.path.relpath(path, below)
    if relative == ".":
        return []
    if relative == os.pardir or relative.startswith(os.pardir + os.sep) or \
            os.path.isabs(relative):
        return None
    return [part for part in relative.split(os.sep) if part not in ("", os.curdir)]


def open_dir(path, below=None, *, create: bool = False) -> int:
    """A descriptor of the directory `path`, the caller closes it.

    Under `below` (the project root), each component is opened from its parent's
    descriptor with O_NOFOLLOW: a link anywhere below the root is refused (ELOOP), so is
    anything that is not a directory. `create` makes missing components (mode 0o755).
    Elsewhere the directory is opened as the system resolves it.
    """
    path = os.fspath(path)
    parts = None if below is None else _relative_parts(os.path.abspath(path),
                                                          os.path.abspath(os.fspath(below)))
    if parts is None:
        if create:
            os.makedirs(path, exist_ok=True)
        return os.open(path, os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    if create:  # the root is the person's (or forge's own ledger root): made as asked
        os.makedirs(os.fspath(below), exist_ok=True)
    fd = os.open(os.fspath(below), os.O_RDONLY | _DIRECTORY | _CLOEXEC)
    walked = os.fspath(below)
    try:
        for part in parts:
            walked = os.path.join(walked, part)
            try:
                child = _open_child_dir(part, fd, create)
            except OSError as exc:
                if exc.errno in _LINK_ERRNOS or exc.errno == errno.ENOTDIR:
                    raise _unsafe(walked, "is a link or not a directory",
                                  errno.ELOOP) from None
                raise OSError(exc.errno, exc.strerror, walked) from None
            os.close(fd)
            fd = child
    except BaseException:
        os.close(fd)
        raise
    return fd


def _open_child_dir(name: str, parent: int, create: bool) -> int:
    try:
        return os.open(name, DIR_FLAGS, dir_fd=parent)
    except FileNotFoundError:
        if not create:
            raise
    try:  # noqa: SIM105 (`contextlib` is one more import for a hook)
        os.mkdir(name, 0o755, dir_fd=parent)
    except FileExistsError:  # made meanwhile: opened below, checked as any other
        pass
    return os.open(name, DIR_FLAGS, dir_fd=parent)


def open_regular(path, below=None, *, follow_links: bool = False) -> int:
    """A read-only descriptor of the regular file `path`, never blocking, never through a
    link (see `open_dir` for `below`); UnsafePath for a FIFO, a device, a socket, a
    directory. `follow_links` is for a file of the host's (a transcript, its settings),
    outside the work tree: its links are the host's or the person's, not the agent's, and
    only what it is matters. The caller closes it."""
    path = os.fspath(path)
    if below is not None:
        return _open_in_dir(path, READ_FLAGS, below)
    try:
        fd = os.open(path, READ_FLAGS & ~_NOFOLLOW if follow_links else READ_FLAGS)
    except OSError as exc:
        raise _link_or(exc, path) from None
    return _only_regular(fd, path)


def _open_in_dir(path: str, flags: int, below, *, mode: int = 0o644,
                 create_dirs: bool = False) -> int:
    """`path` opened with `flags` from the descriptor of its directory, reached as `open_dir`
    does: never through a link at the name, never blocking (a FIFO's open returns at once),
    and kept only when it is a regular file."""
    parent = open_dir(os.path.dirname(path) or ".", below, create=create_dirs)
    try:
        fd = os.open(os.path.basename(path), flags | _NOFOLLOW | _NONBLOCK | _CLOEXEC, mode,
                     dir_fd=parent)
    except OSError as exc:
        raise _link_or(exc, path) from None
    finally:
        os.close(parent)
    return _only_regular(fd, path)


def _only_regular(fd: int, path: str) -> int:
    """`fd` when `fstat` says it is a regular file; otherwise it is closed and refused."""
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise _unsafe(path, "is not a regular file")
    except BaseException:
        os.close(fd)
        raise
    return fd


def reader(path, mode: str = "r", below=None, *, follow_links: bool = False, **options):
    """`open(path, mode, **options)` for reading, on `open_regular`'s descriptor."""
    return os.fdopen(open_regular(path, below, follow_links=follow_links), mode, **options)


def _link_or(exc: OSError, path: str) -> OSError:
    if exc.errno in _LINK_ERRNOS:
        return _unsafe(path, "is a symbolic link", errno.ELOOP)
    if exc.filename is None:
        exc.filename = path
    return exc


def read_bytes(path, below=None) -> bytes:
    """The whole content of the regular file `path` (see `open_regular`)."""
    fd = open_regular(path, below)
    try:
        chunks = []
        while True:
            chunk = os.read(fd, 1 << 20)
            if not chunk:
                return b"".join(chunks)
            chunks.append(chunk)
    finally:
        os.close(fd)


def read_text(path, below=None) -> str:
    """`read_bytes` decoded as UTF-8, line endings kept (UnicodeDecodeError when it is not)."""
    return read_bytes(path, below).decode("utf-8")


def replace(path, data: bytes, below=None, *, mode: int = 0o644, durable: bool = True,
            create_dirs: bool = False) -> None:
    """Write `data` to `path` whole: a temporary file beside it, fsynced (`durable`), renamed
    over the name. Whatever was at the name (a link, a FIFO) is replaced, never written
    through; the directory is reached as `open_dir` does (no link below `below`)."""
    path = os.fspath(path)
    parent = open_dir(os.path.dirname(path) or ".", below, create=create_dirs)
    name = os.path.basename(path)
    temp = f".{name}.{os.getpid()}-{os.urandom(4).hex()}.tmp"
    try:
        fd = os.open(temp, _CREATE_FLAGS, mode, dir_fd=parent)
        try:
            _write_all(fd, data)
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        try:
            os.replace(temp, name, src_dir_fd=parent, dst_dir_fd=parent)
        except BaseException:
            os.unlink(temp, dir_fd=parent)
            raise
    except OSError as exc:
        if exc.filename is None or exc.filename == temp:
            exc.filename = path
        raise
    finally:
        os.close(parent)


def create(path, data: bytes, below=None, *, mode: int = 0o644) -> bool:
    """Create `path` holding `data` only if no name is there (False when one is); the
    directory is reached as `open_dir` does, and the name is never followed."""
    path = os.fspath(path)
    parent = open_dir(os.path.dirname(path) or ".", below)
    try:
        try:
            fd = os.open(os.path.basename(path), _CREATE_FLAGS, mode, dir_fd=parent)
        except FileExistsError:
            return False
        try:
            _write_all(fd, data)
        finally:
            os.close(fd)
        return True
    finally:
        os.close(parent)


def open_for_writing(path, below=None, *, mode: int = 0o644, append: bool = False,
                     create_dirs: bool = False) -> int:
    """A write descriptor of the regular file `path`, created when missing, emptied unless
    `append`; never a FIFO or a device (opened with O_NONBLOCK, refused once `fstat` shows
    it), never through a link. The caller closes it."""
    flags = os.O_WRONLY | os.O_CREAT | (os.O_APPEND if append else 0)
    fd = _open_in_dir(os.fspath(path), flags, below, mode=mode, create_dirs=create_dirs)
    try:
        if not append:
            os.ftruncate(fd, 0)
        os.set_blocking(fd, True)
    except BaseException:
        os.close(fd)
        raise
    return fd


def append(path, data: bytes, below=None, *, mode: int = 0o644,
           create_dirs: bool = False) -> None:
    """Append `data` to the regular file `path` (created when missing), never through a link
    and never to a FIFO or device."""
    fd = open_for_writing(path, below, mode=mode, append=True, create_dirs=create_dirs)
    try:
        _write_all(fd, data)
    finally:
        os.close(fd)


def _write_all(fd: int, data: bytes) -> None:
    """All of `data` to `fd` (a write may take less than it is given)."""
    view = memoryview(data)
    while view:
        view = view[os.write(fd, view):]


def remove(path, below=None) -> bool:
    """Unlink the name `path` (never what a link there points to, never through a linked
    directory); False when nothing was there."""
    path = os.fspath(path)
    try:
        parent = open_dir(os.path.dirname(path) or ".", below)
    except FileNotFoundError:
        return False
    try:
        os.unlink(os.path.basename(path), dir_fd=parent)
        return True
    except FileNotFoundError:
        return False
    finally:
        os.close(parent)
