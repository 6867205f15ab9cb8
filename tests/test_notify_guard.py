"""The person's forge settings (`~/.config/forge/`, where a goal's end is sent) are out of
every agent tool's reach, however an attacker spells the path: an agent that could write
there would choose where forge sends, or which command it runs outside the sandbox.

Each attack goes through `decide` as the host sends it: the file tools with absolute, `~`,
relative, `..` and linked paths; Bash with redirections, variables, `cd`, programs that
write, links, removal and moves; and a `$XDG_CONFIG_HOME` elsewhere.
"""

from __future__ import annotations

import os

import pytest
from guard_support import event, make_project

from forge_runtime.guard import decide
from forge_runtime.protected import paths
from forge_runtime.sandbox import layer


@pytest.fixture
def world(tmp_path, monkeypatch):
    """A project, a home whose ~/.config/forge holds the person's channels, and a link
    from the project to that folder."""
    project = make_project(tmp_path / "proj")
    home = tmp_path / "home"
    folder = home / ".config" / "forge"
    folder.mkdir(parents=True)
    (folder / "notify.yaml").write_text("channels: [{type: desktop}]\n")
    (project / "link-config").symlink_to(folder)
    monkeypatch.setenv("HOME", str(home))
    monkeypatch.delenv("XDG_CONFIG_HOME")
    return project, home


def ask(world, tool: str, tool_input: dict, cwd: str | None = None):
    project, home = world
    asked = event(tool, tool_input, project)
    if cwd is not None:
        asked["cwd"] = cwd
    return decide.decide(asked, env={"HOME": str(home), "PATH": os.environ["PATH"],
                                     **{name: os.environ[name] for name in ("XDG_CONFIG_HOME",)
                                        if name in os.environ}})


def refused(hint) -> bool:
    return hint is not None and paths.CONFIG_LABEL in hint.render()


FILE_PATHS = [
    "{home}/.config/forge/notify.yaml",
    "~/.config/forge/notify.yaml",
    "~/.config/forge/other.yaml",
    "{project}/../home/.config/forge/notify.yaml",
    "{home}/.config/x/../forge/notify.yaml",
    "{home}/.config/./forge//notify.yaml",
    "link-config/notify.yaml",
    "{project}/link-config/notify.yaml",
]


@pytest.mark.parametrize("spelled", FILE_PATHS)
@pytest.mark.parametrize("tool", ["Write", "Edit"])
def test_the_file_tools_may_not_write_there(world, spelled, tool):
    project, home = world
    path = spelled.format(home=home, project=project)
    hint = ask(world, tool, {"file_path": path, "content": "channels: []",
                             "old_string": "desktop", "new_string": "command"})
    assert refused(hint), path
    assert hint.text == "forge notify test"
    assert "switch forge off" not in hint.render()


BASH = [
    "echo 'channels: [{type: command, argv: [/bin/sh, -c, x]}]' > ~/.config/forge/notify.yaml",
    "printf x >> $HOME/.config/forge/notify.yaml",
    "printf x > ${HOME}/.config/forge/notify.yaml",
    "D=~/.config/forge; echo x > $D/notify.yaml",
    "cd ~/.config && echo x > forge/notify.yaml",
    "cd ~/.config/forge && touch notify.yaml",
    "echo x > link-config/notify.yaml",
    "tee link-config/notify.yaml < /dev/null",
    "rm -rf ~/.config/forge",
    "rm -rf ~/.config",
    "mv ~/.config/forge /tmp/gone",
    "cp /etc/hostname ~/.config/forge/notify.yaml",
    "ln -sf /tmp/evil.yaml ~/.config/forge/notify.yaml",
    "python3 -c \"open('$HOME/.config/forge/notify.yaml', 'w').write('x')\"",
    "python3 -c \"import os; open(os.path.join(os.environ['HOME'], '.config', 'forge', "
    "'notify.yaml'), 'w')\"",
    "find ~/.config/forge -delete",
    "chmod -R 000 ~/.config/forge",
    "sed -i s/desktop/command/ ~/.config/forge/notify.yaml",
]


@pytest.mark.parametrize("command", BASH)
def test_bash_may_not_write_there(world, command):
    hint = ask(world, "Bash", {"command": command})
    assert hint is not None and hint.render().startswith("Error: forge guard: Bash"), command


def test_a_relative_path_from_the_home_is_refused(world):
    _, home = world
    assert refused(ask(world, "Write", {"file_path": ".config/forge/notify.yaml",
                                        "content": "x"}, cwd=str(home)))


def test_a_config_home_elsewhere_is_covered_too(world, tmp_path, monkeypatch):
    elsewhere = tmp_path / "xdg"
    (elsewhere / "forge").mkdir(parents=True)
    monkeypatch.setenv("XDG_CONFIG_HOME", str(elsewhere))
    assert refused(ask(world, "Write", {"file_path": str(elsewhere / "forge" / "notify.yaml"),
                                        "content": "x"}))
    assert ask(world, "Bash", {"command": f"echo x > {elsewhere}/forge/notify.yaml"})


def test_reading_there_is_not_writing(world):
    assert ask(world, "Bash", {"command": "cat ~/.config/forge/notify.yaml"}) is None
    assert ask(world, "Read", {"file_path": "~/.config/forge/notify.yaml"}) is None


def test_the_folder_is_a_kernel_deny_rule(world):
    from forge_runtime.project import find_project

    project, _ = world
    found = find_project(project)
    rules = layer.deny_rules(found, found.root / ".claude" / "settings.json", "project")
    assert "Edit(~/.config/forge/**)" in rules
    assert any("Edit(~/.config/forge/**)" in forms for forms in layer.rule_forms(found))
