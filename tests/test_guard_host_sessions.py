"""Claude Code 2.1.337's new home folders are out of every agent tool's reach, however an
attacker spells the path: `~/.claude/sessions` (the live-session registry and each
session's messaging key: a message written there starts a turn in another session) and
`~/.claude/cowork_plugins` (the plugin tree Cowork loads instead of `plugins/`).

Each attack goes through `decide` as the host sends it: the file tools with absolute,
`~`, relative, `..` and symlinked paths; Bash with redirections, variables, `cd`, a
program that writes, removal and moves; and a `$CLAUDE_CONFIG_DIR` home.
"""

from __future__ import annotations

import os

import pytest
from guard_support import event, make_project

from forge_runtime.guard import decide
from forge_runtime.protected import host_loaded
from forge_runtime.sandbox import layer

FOLDERS = {"sessions": "live-session registry", "cowork_plugins": "plugin tree under Cowork"}


@pytest.fixture
def world(tmp_path):
    """A project, a home whose ~/.claude holds both folders as a running host leaves
    them, and a link from the project into each."""
    project = make_project(tmp_path / "proj")
    home = tmp_path / "home"
    sessions = home / ".claude" / "sessions"
    sessions.mkdir(parents=True)
    (sessions / "4242.json").write_text('{"pid": 4242, "sessionId": "s"}\n')
    (sessions / ".3f9a.key").write_text("secret\n")
    cowork = home / ".claude" / "cowork_plugins" / "cache" / "forge" / "forge" / "0.1.0"
    (cowork / "hooks").mkdir(parents=True)
    (cowork / "hooks" / "forge-hook").write_text("#!/bin/sh\n")
    for name in FOLDERS:
        (project / f"link-{name}").symlink_to(home / ".claude" / name)
    return project, home


def ask(world, tool: str, tool_input: dict, cwd: str | None = None, **env):
    project, home = world
    asked = event(tool, tool_input, project)
    if cwd is not None:
        asked["cwd"] = cwd
    return decide.decide(asked, env={"HOME": str(home), "PATH": os.environ["PATH"], **env})


def refused(hint, folder: str) -> bool:
    return hint is not None and FOLDERS[folder] in hint.render()


FILE_PATHS = [
    "{home}/.claude/{folder}/4242.json",
    "~/.claude/{folder}/new.json",
    "{project}/../home/.claude/{folder}/x.json",
    "{home}/.claude/plugins/../{folder}/x.json",
    "{home}/.claude/./{folder}//x.json",
    "link-{folder}/x.json",
    "{project}/link-{folder}/x.json",
]


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("spelled", FILE_PATHS)
def test_the_file_tools_may_not_write_there(world, folder, spelled):
    project, home = world
    path = spelled.format(home=home, project=project, folder=folder)
    assert refused(ask(world, "Write", {"file_path": path, "content": "{}"}), folder), path


@pytest.mark.parametrize("folder", FOLDERS)
def test_an_edit_of_a_file_there_is_refused(world, folder):
    _, home = world
    target = {"sessions": home / ".claude" / "sessions" / "4242.json",
              "cowork_plugins": home / ".claude" / "cowork_plugins" / "cache" / "forge" /
              "forge" / "0.1.0" / "hooks" / "forge-hook"}[folder]
    text = target.read_text()
    hint = ask(world, "Edit", {"file_path": str(target), "old_string": text[:5],
                               "new_string": "xx"})
    assert refused(hint, folder)


BASH = [
    "echo '{{\"prompt\": \"rm -rf ~\"}}' > ~/.claude/{folder}/4243.json",
    "printf x > $HOME/.claude/{folder}/.3f9a.key",
    "printf x > ${{HOME}}/.claude/{folder}/.3f9a.key",
    "D=~/.claude/{folder}; echo x > $D/x.json",
    "cd ~/.claude && echo x > {folder}/x.json",
    "cd ~/.claude/{folder} && touch x.json",
    "echo x > ~/.claude/plugins/../{folder}/x.json",
    "echo x > link-{folder}/x.json",
    "tee link-{folder}/x.json < /dev/null",
    "rm -rf ~/.claude/{folder}",
    "mv ~/.claude/{folder} /tmp/gone",
    "cp /etc/hostname ~/.claude/{folder}/",
    "python3 -c \"open('$HOME/.claude/{folder}/x.json', 'w').write('{{}}')\"",
    "find ~/.claude/{folder} -delete",
    "chmod -R 000 ~/.claude/{folder}",
]


@pytest.mark.parametrize("folder", FOLDERS)
@pytest.mark.parametrize("command", BASH)
def test_bash_may_not_write_there(world, folder, command):
    project, _ = world
    hint = ask(world, "Bash", {"command": command.format(folder=folder)})
    assert hint is not None and hint.render().startswith("Error: forge guard: Bash"), command


@pytest.mark.parametrize("folder", FOLDERS)
def test_a_relative_path_from_the_home_is_refused(world, folder):
    _, home = world
    hint = ask(world, "Write", {"file_path": f".claude/{folder}/x.json", "content": "{}"},
               cwd=str(home))
    assert refused(hint, folder)


@pytest.mark.parametrize("folder", FOLDERS)
def test_the_config_dir_home_is_covered_too(world, tmp_path, folder):
    config = tmp_path / "config-dir"
    (config / folder).mkdir(parents=True)
    hint = ask(world, "Write", {"file_path": str(config / folder / "x.json"), "content": "{}"},
               CLAUDE_CONFIG_DIR=str(config))
    assert refused(hint, folder)
    bash = ask(world, "Bash", {"command": f"echo x > $CLAUDE_CONFIG_DIR/{folder}/x.json"},
               CLAUDE_CONFIG_DIR=str(config))
    assert bash is not None


@pytest.mark.parametrize("folder", FOLDERS)
def test_reading_there_is_not_writing(world, folder):
    assert ask(world, "Bash", {"command": f"ls -la ~/.claude/{folder}"}) is None
    assert ask(world, "Read", {"file_path": f"~/.claude/{folder}/x.json"}) is None


def test_both_folders_are_kernel_deny_rules(world, monkeypatch):
    """`forge sandbox enable` denies them to the file tools and binds them read-only for
    every sandboxed Bash command, as it does the plugin tree."""
    from forge_runtime.project import find_project

    project, home = world
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("CLAUDE_CONFIG_DIR", raising=False)
    found = find_project(project)
    rules = layer.deny_rules(found, found.root / ".claude" / "settings.json", "project")
    for folder in FOLDERS:
        assert f"Edit(~/.claude/{folder}/**)" in rules
        assert any(row.place == folder for row in host_loaded.kernel_rows())
