"""Names inside a Rust executable (Codex ships as one): its string tables, read from the ELF.

Rust keeps a `&str` as (address, length) and concatenates the bytes of string literals
without separators, so `"modeldaybreakreview_model"` cannot be split by reading the text.
serde's derived code keeps, for each struct, a table of its field names (and for each
enum, its variant names) as consecutive (address, length) pairs in `.data.rel.ro`; with
RELR relocations (Codex's static PIE) the addresses are stored as they are, relative to
load address 0. So a name's address, looked up in that section, finds the table it is a
row of, and the table's rows are the names, split exactly.
"""

from __future__ import annotations

import mmap
import os
import struct

_ROW = struct.Struct("<QQ")  # one &str: address, length
MAX_NAME = 80


class NotAnElf(ValueError):
    """The file is not a 64-bit little-endian ELF with the sections this reader needs."""


class Image:
    """An ELF executable mapped read-only, with its `.rodata` and `.data.rel.ro`."""

    def __init__(self, path: str | os.PathLike) -> None:
        with open(path, "rb") as handle:
            self.data = mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ)
        if self.data[:6] != b"\x7fELF\x02\x01":
            raise NotAnElf(f"{path} is not a 64-bit little-endian ELF")
        sections = self._sections()
        try:
            self.rodata = sections[".rodata"]
            self.relro = sections[".data.rel.ro"]
        except KeyError as missing:
            raise NotAnElf(f"{path} has no {missing.args[0]} section") from None

    def _sections(self) -> dict[str, tuple[int, int, int]]:
        """{name: (address, file offset, size)} of every section."""
        data = self.data
        offset, = struct.unpack_from("<Q", data, 0x28)
        entry_size, count, names_index = struct.unpack_from("<HHH", data, 0x3A)
        rows = [struct.unpack_from("<IIQQQQ", data, offset + i * entry_size)
                for i in range(count)]
        names_at = rows[names_index][4]
        found = {}
        for name, _, _, address, file_offset, size in rows:
            end = data.find(b"\0", names_at + name)
            found[data[names_at + name:end].decode("latin-1")] = (address, file_offset, size)
        return found

    def text(self, address: int, length: int) -> str | None:
        """The string at `address` in `.rodata`, or None when it is not there."""
        base, offset, size = self.rodata
        if not base <= address <= address + length <= base + size:
            return None
        start = address - base + offset
        return self.data[start:start + length].decode("utf-8", "replace")

    def addresses(self, name: str):
        """Every address in `.rodata` where the bytes of `name` stand."""
        base, offset, size = self.rodata
        needle, position = name.encode(), self.data.find(name.encode(), offset, offset + size)
        while position != -1:
            yield position - offset + base
            position = self.data.find(needle, position + 1, offset + size)

    def rows_naming(self, name: str):
        """The file offsets of the (address, length) rows in `.data.rel.ro` that name
        `name`."""
        _, offset, size = self.relro
        for address in self.addresses(name):
            row = _ROW.pack(address, len(name))
            position = self.data.find(row, offset, offset + size)
            while position != -1:
                if (position - offset) % 8 == 0:
                    yield position
                position = self.data.find(row, position + 1, offset + size)

    def row(self, at: int) -> tuple[int, int, str | None]:
        """(address, length, text) of the row at file offset `at`."""
        address, length = _ROW.unpack_from(self.data, at)
        return address, length, self.text(address, length) if 0 < length <= MAX_NAME else None

    def table_around(self, at: int, belongs) -> list[str]:
        """The names of the rows before and after the row at `at` while
        `belongs(address, length, text)` holds for each, in order."""
        _, offset, size = self.relro
        first = at
        while first - _ROW.size >= offset and belongs(*self.row(first - _ROW.size)):
            first -= _ROW.size
        last = at
        while last + 2 * _ROW.size <= offset + size and belongs(*self.row(last + _ROW.size)):
            last += _ROW.size
        return [self.row(position)[2] for position in range(first, last + 1, _ROW.size)]
