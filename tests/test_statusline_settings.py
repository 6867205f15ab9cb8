"""`forge init --statusline` / `--remove-statusline`: merged into the chosen settings file,
the person's own status line kept (and given back), everything else untouched."""

from __future__ import annotations

import json
import subprocess

import pytest

from forge_runtime import statusline_settings as settings
from forge_runtime.cli.main import main
from forge_runtime.errors import ForgeError

OWN = {"type": "command", "command": "~/bin/my-status --short", "padding": 1}


@pytest.fixture
def root(cli_project, tmp_path, monkeypatch):
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    monkeypatch.delenv("PYTHONPATH", raising=False)
    monkeypatch.chdir(cli_project)
    return cli_project


def _read(path) -> dict:
    return json.loads(path.read_text())


def _write(path, data: dict) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps(data))


def test_a_fresh_install_writes_forges_command_into_the_local_settings(root):
    path, changed, own = settings.install(root)
    assert path == root / ".claude" / "settings.local.json" and changed and own is None
    entry = _read(path)["statusLine"]
    assert entry["type"] == "command" and settings.is_forge(entry["command"])
    assert entry["command"].split()[1:3] == ["-P", "-c"]
    assert settings.install(root)[1] is False  # again: nothing changes


def test_the_persons_own_status_line_is_wrapped_and_every_other_setting_kept(root):
    path = root / ".claude" / "settings.local.json"
    _write(path, {"statusLine": OWN, "permissions": {"allow": ["Bash(ls)"]}})
    _, changed, own = settings.install(root)
    data = _read(path)
    assert changed and own == OWN["command"]
    assert data["permissions"] == {"allow": ["Bash(ls)"]}
    assert data["statusLine"]["padding"] == 1
    assert settings.wrapped(data["statusLine"]["command"]) == OWN["command"]
    assert settings.install(root)[1:] == (False, OWN["command"])  # never wrapped twice
    assert settings.remove(root) == (path, True)
    assert _read(path) == {"statusLine": OWN, "permissions": {"allow": ["Bash(ls)"]}}
    assert settings.remove(root) == (path, False)


def test_a_status_line_from_a_lower_settings_file_is_kept_and_shows_again_on_removal(root):
    user = settings.settings_path("user", root)
    _write(user, {"statusLine": OWN})
    path, _, own = settings.install(root, "local")
    assert own == OWN["command"] and settings.wrapped(_read(path)["statusLine"]["command"]) \
        == OWN["command"]
    assert settings.wraps_inherited(_read(path)["statusLine"]["command"])
    settings.remove(root, "local")
    assert "statusLine" not in _read(path) and _read(user) == {"statusLine": OWN}


def test_a_persons_own_line_equal_to_a_lower_files_is_theirs_and_given_back(root):
    """Removal that compared the wrapped command with the lower file's would, on a match,
    delete the person's own entry from their file: it keeps it."""
    _write(settings.settings_path("project", root), {"statusLine": OWN})
    path = settings.settings_path("local", root)
    _write(path, {"statusLine": OWN})
    settings.install(root, "local")
    settings.remove(root, "local")
    assert _read(path) == {"statusLine": OWN}


def test_the_installed_command_runs_the_persons_line_then_forges_part(root):
    _write(root / ".claude" / "settings.json", {"statusLine": {
        "type": "command", "command": "printf 'model: %s' \"$(cat | head -c 20)\""}})
    path, _, _ = settings.install(root, "project")
    command = _read(path)["statusLine"]["command"]
    shown = subprocess.run(command, shell=True, input=b'{"session_id": "x"}', cwd=root,
                           capture_output=True, timeout=60)
    assert (shown.returncode, shown.stdout, shown.stderr) == \
        (0, b'model: {"session_id": "x"}\n', b"")


def test_a_settings_file_forge_cannot_read_is_left_exactly_as_it_was(root):
    path = root / ".claude" / "settings.local.json"
    path.parent.mkdir()
    for broken in ('{"statusLine": ', '[1]', '{"statusLine": "echo hi"}'):
        path.write_text(broken)
        with pytest.raises(ForgeError) as caught:
            settings.install(root)
        assert caught.value.alternatives == ["forge init --statusline"]
        assert path.read_text() == broken


def test_the_cli_installs_and_removes_it_in_the_chosen_file(root, capsys):
    assert main(["init", "--statusline", "--scope", "project"]) == 0
    out = capsys.readouterr().out
    assert "installed .claude/settings.json (forge's status line)" in out
    assert settings.is_forge(_read(root / ".claude" / "settings.json")["statusLine"]["command"])
    assert not (root / ".claude" / "settings.local.json").exists()
    assert main(["init", "--remove-statusline", "--scope", "project", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert data["statusline"]["changed"] is True
    assert "statusLine" not in _read(root / ".claude" / "settings.json")


def test_a_plugin_install_names_forges_code_on_the_command(root, monkeypatch):
    from pathlib import Path

    code_root = str(Path(settings.__file__).resolve().parent.parent)
    monkeypatch.setenv("PYTHONPATH", f"{code_root}/cli/..")  # as the plugin's cli/forge sets it
    assert settings.forge_command().startswith(f"PYTHONPATH={code_root} ")


def test_a_forge_that_is_gone_leaves_the_persons_line_and_no_error(root, tmp_path):
    broken = tmp_path / "python"
    broken.write_text("#!/bin/sh\necho 'Traceback: No module named forge_runtime' >&2\nexit 1\n")
    broken.chmod(0o755)
    for own, shown in (("echo 'mine; still'", b"mine; still\n"), (None, b"")):
        command = settings.forge_command(own, python=str(broken))
        done = subprocess.run(command, shell=True, input=b"{}", cwd=root, capture_output=True,
                              timeout=60)
        assert (done.stdout, done.stderr) == (shown, b"")
        assert settings.wrapped(command) == own
