"""Namespaces for sessions: the runner learns why it cannot isolate, instead of failing."""

from __future__ import annotations

import pytest

from forge_runtime.hostkit import netns


@pytest.fixture
def fresh_probe():
    netns.available.cache_clear()
    yield
    netns.available.cache_clear()


def test_without_unshare_the_reason_is_given(monkeypatch, fresh_probe):
    monkeypatch.setattr(netns.shutil, "which", lambda name: None)
    assert netns.available() == (False, "`unshare` or `ip` is not installed")


def test_a_refused_unshare_is_reported_with_its_own_words(monkeypatch, fresh_probe, tmp_path):
    fake = tmp_path / "unshare"
    fake.write_text("#!/bin/sh\necho 'unshare: unshare failed: Operation not permitted' >&2\n"
                    "exit 1\n")
    fake.chmod(0o755)
    monkeypatch.setattr(netns.shutil, "which", lambda name: str(fake))
    assert netns.available() == (
        False, "`unshare -n -p` is not permitted here: "
               "unshare: unshare failed: Operation not permitted")


def test_the_wrapped_command_runs_the_relay_then_the_session(monkeypatch):
    monkeypatch.setattr(netns.shutil, "which", lambda name: f"/usr/bin/{name}")
    wrapped = netns.wrap(["claude", "-p", "hi"], "/tmp/x.sock", 4242)
    assert wrapped[:6] == ["/usr/bin/unshare", "-n", "-p", "-f", "--kill-child", "--"]
    assert wrapped[7:] == ["-I", "-m", netns.MODULE, "/tmp/x.sock", "4242", "--",
                           "claude", "-p", "hi"]



def test_without_its_own_pids_only_the_network_is_unshared(monkeypatch):
    monkeypatch.setattr(netns.shutil, "which", lambda name: f"/usr/bin/{name}")
    wrapped = netns.wrap(["claude"], "/tmp/x.sock", 4242, own_pids=False)
    assert wrapped[:3] == ["/usr/bin/unshare", "-n", "--"]
    assert wrapped[-3:] == ["4242", "--", "claude"]


@pytest.mark.parametrize("argv", [["/tmp/x.sock", "4242", "--"], ["/tmp/x.sock"],
                                  ["/tmp/x.sock", "4242", "claude"]])
def test_the_relay_refuses_a_command_line_without_a_command(capsys, argv):
    assert netns.main(argv) == 2
    assert "usage: python -m forge_runtime.hostkit.netns" in capsys.readouterr().err
