"""One ledger record: a small JSON file, created exclusively, never rewritten.

Each record carries the sequence number, the hash of the record before it (`prev`) and its
own hash over everything else, so an edit, a deletion or a reordering breaks the chain.
A record is created by writing a temporary file, fsyncing it and hard-linking it into
place: `os.link` fails if the name exists (no writer can overwrite a record) and makes the
record appear whole or not at all, so a crash never leaves a half record that verifies.
"""

from __future__ import annotations

import os
import stat

from forge_runtime import fastjson
from forge_runtime.digest import sha256_hex

GENESIS_PREV = "0" * 64


class RecordError(Exception):
    """A record that is missing, unreadable, not a plain file, or fails its own hash."""


def record_name(seq: int) -> str:
    return f"{seq:08d}.json"


def canonical(fields: dict) -> bytes:
    """The bytes a record's hash is taken over: sorted keys, no whitespace, UTF-8."""
    return fastjson.dumps(fields, sort_keys=True, separators=(",", ":"),
                          ensure_ascii=False).encode("utf-8")


def seal(fields: dict) -> dict:
    """`fields` plus its own `hash`."""
    body = {key: value for key, value in fields.items() if key != "hash"}
    return {**body, "hash": sha256_hex(canonical(body))}


def read_json_file(path: str | os.PathLike) -> dict:
    """A JSON object from a regular file that is not a symlink, or RecordError."""
    from forge_runtime.safeio import READ_FLAGS

    name = os.path.basename(path)
    try:  # never waits on a FIFO planted where a record should be (safeio.py)
        fd = os.open(path, READ_FLAGS)
    except FileNotFoundError:
        raise RecordError(f"{name} is missing") from None
    except OSError as exc:
        raise RecordError(f"{name} cannot be opened ({exc.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise RecordError(f"{name} is not a regular file")
        with os.fdopen(fd, "rb", closefd=False) as handle:
            raw = handle.read()
    finally:
        os.close(fd)
    try:
        data = fastjson.loads(raw)
    except ValueError:
        raise RecordError(f"{name} is not valid JSON") from None
    if not isinstance(data, dict):
        raise RecordError(f"{name} is not a JSON object")
    return data


def read_record(records_dir: str | os.PathLike, seq: int) -> dict:
    """Record `seq`, checked against its own hash and its name."""
    record = read_json_file(os.path.join(records_dir, record_name(seq)))
    if record.get("seq") != seq:
        raise RecordError(f"{record_name(seq)} holds sequence number {record.get('seq')!r}")
    if seal(record).get("hash") != record.get("hash"):
        raise RecordError(f"{record_name(seq)} does not match its own hash (edited)")
    return record


def fsync_dir(directory: str | os.PathLike) -> None:
    """Make a new name in `directory` durable (no-op where directories cannot be opened)."""
    try:
        fd = os.open(directory, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _write_temp(directory: str | os.PathLike, data: bytes, durable: bool) -> str:
    temp = os.path.join(directory, f".tmp-{os.getpid()}-{os.urandom(6).hex()}")
    fd = os.open(temp, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644)
    try:
        os.write(fd, data)
        if durable:
            os.fsync(fd)
    finally:
        os.close(fd)
    return temp


def create_exclusive(path: str | os.PathLike, data: bytes, durable: bool = True) -> bool:
    """Create `path` holding `data`, whole or not at all; False when it already exists.

    `durable` also survives a power cut (fsync of the file and its directory); a file
    forge can rebuild from the records (a turn marker) skips that cost.
    """
    temp = _write_temp(os.path.dirname(path), data, durable)
    try:
        os.link(temp, path)
    except FileExistsError:
        return False
    finally:
        os.unlink(temp)
    if durable:
        fsync_dir(os.path.dirname(path))
    return True


def replace_atomically(path: str | os.PathLike, data: bytes) -> None:
    """Rewrite a mutable file (never a record): readers see the old bytes or the new.

    The file's data is fsynced before the rename; the directory is not, because the name
    already existed: after a power cut the file is the old version or the new one.
    """
    temp = _write_temp(os.path.dirname(path), data, durable=True)
    os.replace(temp, path)


def write_record(records_dir: str | os.PathLike, record: dict) -> bool:
    """Create the sealed `record` under its sequence name; False if that name is taken."""
    return create_exclusive(os.path.join(records_dir, record_name(record["seq"])),
                            canonical(record))
