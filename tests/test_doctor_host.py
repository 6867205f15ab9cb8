"""`forge doctor` on what the host does around forge: a headless first start that runs without
forge's hooks, and the host's sandbox failing Bash calls in linked work trees.

The settings and install records are the shapes Claude Code 2.1.337 writes (measured: a
project's `extraKnownMarketplaces` git source plus `enabledPlugins` ran three `claude -p`
starts with no plugin hook, and `claude plugin install` then wrote `installed_plugins.json`
records with `scope` user and project); bench/worktree_sandbox.py measures the sandbox.
"""

from __future__ import annotations

import json
import subprocess
from pathlib import Path

import pytest

from forge_runtime import doctor
from forge_runtime.cli.main import main
from forge_runtime.project import find_project

GITHUB = {"source": {"source": "github", "repo": "example/forge"}}
DIRECTORY = {"source": {"source": "directory", "path": "/home/person/src/forge"}}


@pytest.fixture
def home(tmp_path, monkeypatch) -> Path:
    home = tmp_path / "home"
    (home / ".claude" / "plugins").mkdir(parents=True)
    monkeypatch.setenv("HOME", str(home))
    return home


def _write(path: Path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def _checks(root: Path) -> dict[str, doctor.Check]:
    return {check.name: check for check in doctor.run_checks(find_project(root))}


def _team_settings(root: Path, marketplace: dict = GITHUB, enabled: object = True) -> None:
    _write(root / ".claude" / "settings.json", {
        "extraKnownMarketplaces": {"team": marketplace},
        "enabledPlugins": {"forge@team": enabled}})


def test_forge_enabled_but_not_fetched_is_named_with_the_install(cli_project, home, capsys):
    _team_settings(cli_project)
    check = _checks(cli_project)["plugin fetch"]
    assert not check.ok and check.fix == "claude plugin install forge@team"
    assert "headless start (`claude -p`, the Agent SDK)" in check.detail
    assert "runs without forge's hooks" in check.detail
    main(["doctor"])  # it comes before the project's own check, so its fix is first
    checks = len(doctor.run_checks(find_project(cli_project)))
    assert capsys.readouterr().out.splitlines()[-3:] == [
        f"Error: 2 of {checks} checks failed: plugin fetch, project",
        "Fix: claude plugin install forge@team", "Or: forge init"]


def test_forge_enabled_in_the_users_settings_counts_too(cli_project, home):
    _write(home / ".claude" / "settings.json", {
        "enabledPlugins": {"forge@team": True}, "extraKnownMarketplaces": {"team": GITHUB}})
    assert not _checks(cli_project)["plugin fetch"].ok


@pytest.mark.parametrize("record, ok", [
    ({"scope": "user", "installPath": "/x", "version": "1"}, True),
    ({"scope": "project", "projectPath": "{root}", "installPath": "/x"}, True),
    ({"scope": "project", "projectPath": "/home/person/elsewhere", "installPath": "/x"}, False),
    ({"scope": "local", "projectPath": "/home/person/elsewhere", "installPath": "/x"}, False),
    ({"scope": "project", "installPath": "/x"}, False),  # no projectPath: no project's
    ("user", False),
])
def test_an_install_record_for_this_project_passes(cli_project, home, record, ok):
    _team_settings(cli_project)
    if isinstance(record, dict) and record.get("projectPath") == "{root}":
        record = {**record, "projectPath": str(cli_project)}
    _write(home / ".claude" / "plugins" / "installed_plugins.json",
           {"version": 2, "plugins": {"forge@team": [record]}})
    assert _checks(cli_project)["plugin fetch"].ok is ok


def test_a_directory_marketplace_loads_in_place_and_needs_no_fetch(cli_project, home):
    """Measured: a `directory` marketplace's plugin ran its hooks from the first `-p` start
    with no install record at all."""
    _team_settings(cli_project, DIRECTORY)
    assert _checks(cli_project)["plugin fetch"].ok
    _team_settings(cli_project, GITHUB)
    _write(home / ".claude" / "plugins" / "known_marketplaces.json", {"team": DIRECTORY})
    assert _checks(cli_project)["plugin fetch"].ok  # the host's own record wins


@pytest.mark.parametrize("enabled", [False, "true", None])
def test_forge_not_enabled_from_a_marketplace_adds_no_check(cli_project, home, enabled):
    _team_settings(cli_project, enabled=enabled)
    assert "plugin fetch" not in _checks(cli_project)


def _sandbox(root: Path, on: bool = True) -> None:
    _write(root / ".claude" / "settings.json", {"sandbox": {"enabled": on}})


def _linked(root: Path, name: str) -> Path:
    subprocess.run(["git", "-C", str(root), "-c", "user.name=t", "-c", "user.email=t@t",
                    "commit", "-q", "--allow-empty", "-m", "start"], check=True)
    tree = root.parent / name
    subprocess.run(["git", "-C", str(root), "worktree", "add", "-q", str(tree)], check=True)
    return tree


def test_linked_work_trees_with_the_sandbox_on_warn_with_the_measured_rate(cli_project, home):
    _sandbox(cli_project)
    tree = _linked(cli_project, "second")
    for root in (cli_project, tree):  # the main tree and the linked one alike
        _sandbox(root)
        check = _checks(root)["work trees"]
        assert check.ok and check.fix is None
        assert "has 2 work trees" in check.detail
        assert "bwrap: Can't find source path .../.git/config.lock" in check.detail
        assert doctor.TREES_MEASURED in check.detail
        assert "running it again is safe" in check.detail


def test_one_work_tree_or_no_sandbox_adds_no_warning(cli_project, home):
    _sandbox(cli_project)
    assert "work trees" not in _checks(cli_project)
    tree = _linked(cli_project, "second")
    _sandbox(tree, on=False)
    assert "work trees" not in _checks(tree)
