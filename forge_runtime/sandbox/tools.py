"""Whether this machine has what the host's Linux sandbox needs: bubblewrap >= 0.8.0, socat.

Older bubblewrap lets a sandboxed command undo the read-only binds the deny rules rely on.
On macOS the host uses the system's own sandbox and needs neither.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import namedtuple

MIN_BWRAP = (0, 8, 0)
INSTALL = "apt-get install -y bubblewrap socat"
VERSION_TIMEOUT_SECONDS = 10


class Tools(namedtuple("Tools", "needed bwrap_version socat")):
    """What was found: `bwrap_version` as a tuple (None: missing), `socat` as a path."""

    __slots__ = ()

    @property
    def problem(self) -> str | None:
        """What is missing, in words; None when the sandbox can run."""
        if not self.needed:
            return None
        missing = []
        if self.bwrap_version is None:
            missing.append("bubblewrap (bwrap) is not installed")
        elif self.bwrap_version < MIN_BWRAP:
            found = ".".join(map(str, self.bwrap_version))
            missing.append(f"bubblewrap {found} is older than 0.8.0 (it lets a command undo "
                           "the sandbox's read-only paths)")
        if self.socat is None:
            missing.append("socat is not installed")
        return "; ".join(missing) or None

    def describe(self) -> str:
        if not self.needed:
            return "not needed on this platform"
        bwrap = ("missing" if self.bwrap_version is None
                 else "bubblewrap " + ".".join(map(str, self.bwrap_version)))
        return f"{bwrap}; socat {'at ' + self.socat if self.socat else 'missing'}"


def _bwrap_version() -> tuple[int, ...] | None:
    binary = shutil.which("bwrap")
    if binary is None:
        return None
    try:
        done = subprocess.run([binary, "--version"], capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError):
        return None
    words = done.stdout.split()
    try:
        return tuple(int(part) for part in words[-1].split("."))
    except (IndexError, ValueError):
        return None


def find() -> Tools:
    if not sys.platform.startswith("linux"):
        return Tools(False, None, None)
    return Tools(True, _bwrap_version(), shutil.which("socat"))
