"""Find the real Claude Code CLI: `$FORGE_CLAUDE_BIN`, else the one claude-agent-sdk bundles.

The claude-agent-sdk wheel (a forge dependency) ships the CLI at
`claude_agent_sdk/_bundled/claude`, so every machine that installed forge has the real host
with no extra download. forge itself runs it (the sandbox's posture, `forge doctor`, the
council), and so does the host kit, which builds on this.
"""

from __future__ import annotations

import importlib.util
import os
from pathlib import Path

ENV = "FORGE_CLAUDE_BIN"


class ClaudeNotFound(RuntimeError):
    """No runnable Claude Code binary; the message says where forge looked."""


def configured_binary(env: str, not_found: type[Exception]) -> Path | None:
    """The executable the environment variable `env` names, None when it is unset;
    `not_found` raised when it names anything but an executable file."""
    configured = os.environ.get(env)
    if not configured:
        return None
    path = Path(configured)
    if path.is_file() and os.access(path, os.X_OK):
        return path
    raise not_found(f"${env} is {configured}, which is not an executable file")


def find_claude() -> Path:
    """The path of a runnable Claude Code CLI, or ClaudeNotFound naming what was tried."""
    configured = configured_binary(ENV, ClaudeNotFound)
    if configured is not None:
        return configured
    spec = importlib.util.find_spec("claude_agent_sdk")
    if spec is None or not spec.submodule_search_locations:
        raise ClaudeNotFound(f"claude-agent-sdk is not installed and ${ENV} is not set")
    bundled = Path(next(iter(spec.submodule_search_locations))) / "_bundled" / "claude"
    if bundled.is_file() and os.access(bundled, os.X_OK):
        return bundled
    raise ClaudeNotFound(f"claude-agent-sdk has no bundled CLI at {bundled}; set ${ENV}")
