"""Fixtures of the host tests that drive the interactive TUI."""

import pytest
from tui_support import Tui


@pytest.fixture
def tui_factory(tmp_path):
    opened = []

    def make(host, cwd, args=()):
        tui = Tui(host, cwd, tmp_path / f"tui-{len(opened) + 1}", args)
        opened.append(tui)
        return tui

    yield make
    for tui in opened:
        tui.close()
