"""Shared pytest setup: the host kit's fixtures (`claude_host`, `project`, `claude_bin`), and a
fresh git project that in-process `forge` commands treat as theirs."""

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import pytest

pytest_plugins = ["forge_runtime.hostkit.pytest_plugin"]


def pytest_configure(config: pytest.Config) -> None:
    """One folder for the whole run, shared by every pytest-xdist worker (they inherit the
    variable): the early host sessions of tests/host/conftest.py meet there."""
    if hasattr(config, "workerinput") or "FORGE_EARLY_DIR" in os.environ:
        return  # a worker: its controller made the folder
    folder = tempfile.mkdtemp(prefix="forge-early-")
    os.environ["FORGE_EARLY_DIR"] = folder

    def remove() -> None:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop("FORGE_EARLY_DIR", None)

    config.add_cleanup(remove)


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


@pytest.fixture(autouse=True)
def _own_config_home(tmp_path_factory, monkeypatch):
    """forge reads the person's notification channels from the user's configuration
    directory: each test has its own, never the machine's (subprocesses inherit it), and
    starts with nothing noted for a notification by an earlier test in this process."""
    from forge_runtime.goal.rules import end_notes

    monkeypatch.setenv("XDG_CONFIG_HOME", str(tmp_path_factory.mktemp("config")))
    end_notes.take()
