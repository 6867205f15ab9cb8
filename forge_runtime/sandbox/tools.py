"""Whether this machine can run the host's Linux sandbox: bubblewrap >= 0.8.0, socat, and a
kernel that lets bubblewrap make its namespaces.

Older bubblewrap lets a sandboxed command undo the read-only binds the deny rules rely on.
Many containers give no unprivileged user namespaces: bubblewrap is installed but cannot
start, so the one honest test is to start it once (`bwrap --ro-bind / / true`, a few ms).
On macOS the host uses the system's own sandbox (Seatbelt) and needs none of this.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
from collections import namedtuple

from forge_runtime.agent_roots import program, tool

MIN_BWRAP = (0, 8, 0)
INSTALL = "apt-get install -y bubblewrap socat"
VERSION_TIMEOUT_SECONDS = 10


class Tools(namedtuple("Tools", "needed bwrap_version socat start_error", defaults=(None,))):
    """What was found: `bwrap_version` as a tuple (None: missing), `socat` as a path,
    `start_error` what bubblewrap said when it could not start (None: it ran)."""

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
        elif self.start_error is not None:
            missing.append("bubblewrap cannot start (no user namespaces, as in many "
                           f"containers: {self.start_error})")
        if self.socat is None:
            missing.append("socat is not installed")
        return "; ".join(missing) or None

    @property
    def installable(self) -> bool:
        """True when installing packages would fix what is missing (not a kernel limit)."""
        return self.start_error is None

    def describe(self) -> str:
        if not self.needed:
            return "not needed on this platform"
        bwrap = ("missing" if self.bwrap_version is None
                 else "bubblewrap " + ".".join(map(str, self.bwrap_version)))
        return f"{bwrap}; socat {'at ' + self.socat if self.socat else 'missing'}"


def _bwrap_version() -> tuple[int, ...] | None:
    binary = tool("bwrap")
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


def _start_error() -> str | None:
    """What `bwrap --ro-bind / / true` says when it fails (its last stderr line), or None."""
    try:
        done = subprocess.run([program("bwrap"), "--ro-bind", "/", "/", "true"],
                              capture_output=True, text=True,
                              timeout=VERSION_TIMEOUT_SECONDS, check=False)
    except (OSError, subprocess.SubprocessError) as exc:
        return exc.__class__.__name__
    if done.returncode == 0:
        return None
    lines = done.stderr.strip().splitlines()
    return lines[-1].strip() if lines else f"exit status {done.returncode}"


def find() -> Tools:
    if not sys.platform.startswith("linux"):
        return Tools(False, None, None)
    version = _bwrap_version()
    started = _start_error() if version is not None and version >= MIN_BWRAP else None
    return Tools(True, version, shutil.which("socat"), started)
