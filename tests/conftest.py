"""Shared pytest setup: the host kit's fixtures (`claude_host`, `project`, `claude_bin`), and a
fresh git project that in-process `forge` commands treat as theirs."""

import subprocess
from pathlib import Path

import pytest

pytest_plugins = ["forge_runtime.hostkit.pytest_plugin"]


@pytest.fixture
def cli_project(tmp_path, monkeypatch) -> Path:
    """An empty git repository, set as the host's project dir, with colour off."""
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(root))
    monkeypatch.setenv("NO_COLOR", "1")
    return root
