"""Find the real Claude Code CLI: `$FORGE_CLAUDE_BIN`, else the one claude-agent-sdk bundles.

The claude-agent-sdk wheel (a forge dependency) ships the CLI at
`claude_agent_sdk/_bundled/claude`, so every machine that installed forge has the real host
with no extra download.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

ENV = "FORGE_CLAUDE_BIN"


class ClaudeNotFound(RuntimeError):
    """No runnable Claude Code binary; the message says where forge looked."""


def find_claude() -> Path:
    """The path of a runnable Claude Code CLI, or ClaudeNotFound naming what was tried."""
    configured = os.environ.get(ENV)
    if configured:
        path = Path(configured)
        if path.is_file() and os.access(path, os.X_OK):
            return path
        raise ClaudeNotFound(f"${ENV} is {configured}, which is not an executable file")
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or not spec.submodule_search_locations:
        raise ClaudeNotFound(f"claude-agent-sdk is not installed and ${ENV} is not set")
    bundled = Path(next(iter(spec.submodule_search_locations))) / "_bundled" / "claude"
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return bundled
    raise ClaudeNotFound(f"claude-agent-sdk has no bundled CLI at {bundled}; set ${ENV}")


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
    import shutil
    import subprocess
    import sys
    import tempfile
    import zipfile

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
