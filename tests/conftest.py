"""Shared pytest setup: the host kit's fixtures (`claude_host`, `project`, `claude_bin`)."""

pytest_plugins = ["forge_runtime.hostkit.pytest_plugin"]
