"""Main-session modes: stored beside the ledger, read per session, odd ids kept in the dir."""

from __future__ import annotations

import os

import pytest

from forge_runtime.errors import ForgeError
from forge_runtime.guard import modes


def test_enter_read_leave(tmp_path):
    guard_dir = str(tmp_path / "forge-guard")
    assert modes.read_mode(guard_dir, "s1") is None
    modes.enter(guard_dir, "s1", "clarifier")
    assert modes.read_mode(guard_dir, "s1") == "clarifier"
    assert modes.read_mode(guard_dir, "s2") is None
    assert modes.all_modes(guard_dir) == [("s1", "clarifier")]
    assert modes.leave(guard_dir, "s1") is True
    assert modes.leave(guard_dir, "s1") is False
    assert modes.read_mode(guard_dir, "s1") is None


@pytest.mark.parametrize("session_id", ["../../escape", "/abs", "a b", "", "é" * 200])
def test_odd_session_ids_stay_inside_the_modes_dir(tmp_path, session_id):
    guard_dir = str(tmp_path / "forge-guard")
    path = modes.mode_path(guard_dir, session_id)
    assert os.path.dirname(path) == os.path.join(guard_dir, modes.MODES_DIR)
    modes.enter(guard_dir, session_id, "reviewer")
    assert modes.read_mode(guard_dir, session_id) == "reviewer"


@pytest.mark.parametrize("content", ["{broken", "[]", '{"role": ""}', '{"role": 3}',
                                     '{"role": 3, "session_id": "s1"}'])
def test_a_damaged_mode_file_reads_as_unreadable(tmp_path, content):
    guard_dir = str(tmp_path / "forge-guard")
    path = modes.mode_path(guard_dir, "s1")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as handle:
        handle.write(content)
    assert modes.read_mode(guard_dir, "s1") == modes.UNREADABLE
    assert modes.all_modes(guard_dir) == [("s1", modes.UNREADABLE)]  # listed as enforced


def test_the_session_defaults_to_the_hosts_variable(monkeypatch):
    monkeypatch.setenv("CLAUDE_CODE_SESSION_ID", "from-env")
    assert modes.require_session(None) == "from-env"
    assert modes.require_session("given") == "given"
    monkeypatch.delenv("CLAUDE_CODE_SESSION_ID")
    with pytest.raises(ForgeError):
        modes.require_session(None)


def test_a_damaged_mode_file_is_not_replaced_by_entering_a_mode(tmp_path):
    guard_dir = str(tmp_path / "forge-guard")
    path = modes.mode_path(guard_dir, "s1")
    os.makedirs(os.path.dirname(path))
    with open(path, "w") as handle:
        handle.write("{broken")
    with pytest.raises(ForgeError) as refused:
        modes.enter(guard_dir, "s1", "clarifier")
    assert refused.value.fix == "forge mode exit --session s1"
    assert modes.read_mode(guard_dir, "s1") == modes.UNREADABLE
