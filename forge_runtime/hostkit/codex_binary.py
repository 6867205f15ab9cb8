"""Get the real Codex CLI: `$FORGE_CODEX_BIN`, else a pinned npm install in a user cache.

Codex CLI is published on the npm registry as `@openai/codex` (a Node.js launcher plus a
native binary per platform). forge's host tests install one pinned version once, with the
machine's own `npm`, into `~/.cache/forge-hostkit/codex-<version>/` (or
`$XDG_CACHE_HOME/...`), never into the repository, and reuse it on every later run.
"""

from __future__ import annotations

import os
import shutil
import subprocess
from pathlib import Path

from forge_runtime.claude_binary import configured_binary

ENV = "FORGE_CODEX_BIN"
PACKAGE = "@openai/codex"
PINNED = "0.171.0"
INSTALL_TIMEOUT = 300


class CodexNotFound(RuntimeError):
    """No runnable Codex CLI; the message says what was tried."""


def cache_dir(version: str = PINNED) -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "forge-hostkit" / f"codex-{version}"


def _installed(prefix: Path) -> Path | None:
    binary = prefix / "node_modules" / ".bin" / "codex"
    return binary if binary.is_file() and os.access(binary, os.X_OK) else None


def find_codex(version: str = PINNED, *, install: bool = True) -> Path:
    """A runnable Codex CLI of `version`, installing it from npm once when `install`."""
    configured = configured_binary(ENV, CodexNotFound)
    if configured is not None:
        return configured
    prefix = cache_dir(version)
    found = _installed(prefix)
    if found is not None or not install:
        if found is None:
            raise CodexNotFound(f"Codex {version} is not installed under {prefix}")
        return found
    npm = shutil.which("npm")
    if npm is None:
        raise CodexNotFound("npm is not on PATH, so Codex CLI cannot be installed")
    staging = prefix.with_name(prefix.name + f".partial-{os.getpid()}")
    shutil.rmtree(staging, ignore_errors=True)
    try:
        done = subprocess.run([npm, "install", "--prefix", str(staging), "--no-audit",
                               "--no-fund", "--loglevel", "error", f"{PACKAGE}@{version}"],
                              capture_output=True, text=True, timeout=INSTALL_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        shutil.rmtree(staging, ignore_errors=True)
        raise CodexNotFound(f"npm install {PACKAGE}@{version} failed: {exc}") from None
    if done.returncode != 0 or _installed(staging) is None:
        shutil.rmtree(staging, ignore_errors=True)
        tail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
        raise CodexNotFound(f"npm install {PACKAGE}@{version} failed: {tail}")
    try:
        staging.rename(prefix)  # all or nothing: a cut install never looks installed
    except OSError:  # another run installed it first
        shutil.rmtree(staging, ignore_errors=True)
    found = _installed(prefix)
    if found is None:
        raise CodexNotFound(f"Codex {version} did not install under {prefix}")
    return found


def newest_version() -> str:
    """The newest Codex CLI release on the npm registry (`npm view`)."""
    npm = shutil.which("npm")
    if npm is None:
        raise CodexNotFound("npm is not on PATH, so the newest Codex CLI cannot be looked up")
    try:
        done = subprocess.run([npm, "view", PACKAGE, "version"], capture_output=True,
                              text=True, timeout=INSTALL_TIMEOUT)
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise CodexNotFound(f"npm view {PACKAGE} version failed: {exc}") from None
    version = done.stdout.strip()
    if done.returncode != 0 or not version or any(c.isspace() for c in version):
        raise CodexNotFound(f"npm view {PACKAGE} version answered {version or 'nothing'} "
                            f"(exit {done.returncode})")
    return version


def native(launcher: Path) -> Path:
    """The native executable behind an npm install's `codex` launcher (the Node.js script
    picks it by platform); a launcher that is itself native is returned as it is."""
    with open(launcher, "rb") as handle:
        if handle.read(4) == b"\x7fELF":
            return launcher
    modules = launcher.resolve().parents[3]  # node_modules/@openai/codex/bin/codex.js
    found = sorted(modules.glob("@openai/codex-*/vendor/*/bin/codex"))
    if not found:
        raise CodexNotFound(f"no native Codex executable under {modules}/@openai/")
    return found[0]


if __name__ == "__main__":  # `python -m forge_runtime.hostkit.codex_binary`: CI's set-up step
    print(find_codex())
