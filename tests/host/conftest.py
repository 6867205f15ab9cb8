"""Fixtures of the host tests: the interactive TUI, and sessions started early.

A host test whose session spends most of its time waiting on the host's own clock (a
scheduled wake-up at least a minute away) would add that idle minute or two to the run.
Its module declares `start_early(workdir) -> result` instead: the session starts in a
thread as soon as collection ends, its wait overlaps the tests before it, and the test
takes what it returned through the `started_early` fixture and checks it as before.
"""

from __future__ import annotations

import shutil
import tempfile
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from goal_support import opt_out_of_sandbox
from tui_support import Tui

from forge_runtime.hostkit.projects import init_git_project

_early: dict[str, tuple[Future, Path]] = {}


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly or (
            session.testsfailed and not session.config.option.continue_on_collection_errors):
        return  # no test will run
    modules = {item.module for item in session.items
               if hasattr(getattr(item, "module", None), "start_early")}
    if not modules:
        return
    pool = ThreadPoolExecutor(max_workers=len(modules), thread_name_prefix="early-host")
    for module in sorted(modules, key=lambda m: m.__name__):
        workdir = Path(tempfile.mkdtemp(prefix="forge-early-"))
        _early[module.__name__] = (pool.submit(module.start_early, workdir), workdir)
    pool.shutdown(wait=False)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Wait for every early session (an early failure is its test's), then remove its files."""
    for future, workdir in _early.values():
        future.exception()
        shutil.rmtree(workdir, ignore_errors=True)


@pytest.fixture
def project(tmp_path: Path) -> Path:
    """The host kit's fresh git project, opted out of the kernel layer in so many words
    (`.forge/guard.yaml`): a host test not about the sandbox runs its goals there as a
    person who opted out would. Tests of the secure posture remove the file or enable the
    layer (tests/host/test_sandbox_host.py)."""
    project = init_git_project(tmp_path / "project")
    opt_out_of_sandbox(project)
    return project


@pytest.fixture
def started_early(request):
    """What this module's `start_early` returned (its exception, raised here, fails the test)."""
    future, _ = _early[request.module.__name__]
    return future.result()


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
