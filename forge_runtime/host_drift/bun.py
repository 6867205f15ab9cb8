"""The JavaScript inside a Bun-compiled executable (Claude Code ships as one).

Bun embeds each bundled module's source as text, ended by a NUL byte; Claude Code's
modules each open with the vendor's banner, which names the build (`// Version: X`). So the
source is every banner-opened text up to its NUL, read through `mmap` (the file is about
400 MB; the sources are about 70 MB of it).
"""

from __future__ import annotations

import mmap
import os
import re

BANNER = b"// (c) Anthropic PBC."
VERSION_LINE = re.compile(rb"\n// Version: ([0-9][0-9A-Za-z.+-]*)\n")
# A module's banner sits a few bytes after the `// @bun ...` pragma that opens it.
_PRAGMA_BEFORE = 64


class NotABunBuild(ValueError):
    """The file holds no Claude Code module sources."""


def sources(path: str | os.PathLike) -> tuple[str, bytes]:
    """(the build's version, every module's source joined by NUL bytes)."""
    with open(path, "rb") as handle, \
            mmap.mmap(handle.fileno(), 0, access=mmap.ACCESS_READ) as image:
        parts, versions = [], set()
        position = image.find(BANNER)
        while position != -1:
            start = image.rfind(b"// @bun", max(position - _PRAGMA_BEFORE, 0), position)
            start = position if start == -1 else start
            end = image.find(b"\0", position)
            end = len(image) if end == -1 else end
            found = VERSION_LINE.search(image[start:min(end, start + 400)])
            if found is not None:
                versions.add(found.group(1).decode())
                parts.append(image[start:end])
            position = image.find(BANNER, end)
    if not parts:
        raise NotABunBuild(f"{path}: no module opens with Claude Code's banner "
                           f"({BANNER.decode()} ... // Version: X)")
    if len(versions) != 1:
        raise NotABunBuild(f"{path}: its modules name {len(versions)} versions "
                           f"({', '.join(sorted(versions))}), not one")
    return versions.pop(), b"\0".join(parts)
