"""Pinned Claude Code builds for the host kit and the drift check: the builds forge's host
contract was measured on, fetched once into the user's cache (the running one is
forge_runtime/claude_binary.py's `find_claude`).
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

from forge_runtime.claude_binary import ClaudeNotFound

# The claude-agent-sdk release that bundles each Claude Code build forge's host contract
# was measured on (host_contract/claude_code.MEASURED): the drift check reads each.
SDK_RELEASES = {"2.1.332": "0.2.189", "2.1.337": "0.2.190"}
DOWNLOAD_TIMEOUT = 600


def cache_dir(version: str) -> Path:
    """Where a pinned Claude Code build is kept: `~/.cache/forge-hostkit/claude-<version>/`
    (or under `$XDG_CACHE_HOME`), as Codex's is, never in the repository."""
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "forge-hostkit" / f"claude-{version}"


def pinned_claude(version: str) -> Path:
    """The Claude Code CLI of `version`, fetched once: pip downloads the claude-agent-sdk
    wheel that bundles it (SDK_RELEASES) and the CLI is taken out of it into the cache."""
    if version not in SDK_RELEASES:
        raise ClaudeNotFound(f"no claude-agent-sdk release is known to bundle Claude Code "
                             f"{version} (known: {', '.join(SDK_RELEASES)})")
    target = cache_dir(version) / "claude"
    if target.is_file() and os.access(target, os.X_OK):
        return target
    with tempfile.TemporaryDirectory(prefix="forge-claude-") as scratch:
        try:
            done = subprocess.run(
                [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps",
                 "--only-binary=:all:", "--dest", scratch,
                 f"claude-agent-sdk=={SDK_RELEASES[version]}"],
                capture_output=True, text=True, timeout=DOWNLOAD_TIMEOUT)
        except (OSError, subprocess.TimeoutExpired) as exc:
            raise ClaudeNotFound(f"pip download of Claude Code {version} failed: {exc}") \
                from None
        wheels = list(Path(scratch).glob("claude_agent_sdk-*.whl"))
        if done.returncode != 0 or not wheels:
            tail = (done.stderr.strip().splitlines() or [f"exit {done.returncode}"])[-1]
            raise ClaudeNotFound(f"pip download of Claude Code {version} failed: {tail}")
        staging = target.with_name(f"claude.partial-{os.getpid()}")
        staging.parent.mkdir(parents=True, exist_ok=True)
        with zipfile.ZipFile(wheels[0]) as wheel, wheel.open(
                "claude_agent_sdk/_bundled/claude") as packed, open(staging, "wb") as out:
            shutil.copyfileobj(packed, out, 1 << 20)
        staging.chmod(0o755)
        staging.rename(target)  # all or nothing: a cut download never looks fetched
    return target
