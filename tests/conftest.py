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


@pytest.fixture(autouse=True)
def _own_state_home(tmp_path_factory, monkeypatch):
    """forge's goal witness lives in the user's state directory: give each test its own,
    never the machine's (subprocesses inherit it)."""
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path_factory.mktemp("state")))
