"""Fixtures of the host tests: the interactive TUI, and sessions started early.

A host test whose session spends most of its time waiting on the host's own clock (a
scheduled wake-up at least a minute away) would add that idle minute or two to the run.
Its module declares `start_early(workdir) -> result` instead: the session starts in a
thread as soon as collection ends, its wait overlaps the tests before it, and the test
takes what it returned through the `started_early` fixture and checks it as before.

Under pytest-xdist every worker collects every module but runs only some, and which one
runs a module is decided later. So the first worker to claim a module (a `mkdir` in the
run's shared folder, `FORGE_EARLY_DIR`, made by tests/conftest.py) starts its session and
leaves the result there pickled; whichever worker runs the test reads it.
"""

from __future__ import annotations

import os
import pickle
import time
from concurrent.futures import Future, ThreadPoolExecutor
from pathlib import Path

import pytest
from goal_support import opt_out_of_sandbox
from tui_support import Tui

from forge_runtime.hostkit.projects import init_git_project

EARLY_WAIT_S = 900  # the longest an early session may take before its test gives up
RESULT = "result.pickle"

_started: list[Future] = []


def _early_dir(module_name: str) -> Path:
    return Path(os.environ["FORGE_EARLY_DIR"]) / module_name


def _run_early(module, folder: Path) -> None:
    """Run one module's early session and leave what it returned (or raised) in `folder`."""
    try:
        outcome = ("returned", module.start_early(folder / "work"))
    except BaseException as error:  # noqa: BLE001 - the test re-raises it
        outcome = ("raised", error)
    partial = folder / (RESULT + ".partial")
    partial.write_bytes(pickle.dumps(outcome))
    partial.replace(folder / RESULT)


def pytest_collection_finish(session: pytest.Session) -> None:
    if session.config.option.collectonly or (
            session.testsfailed and not session.config.option.continue_on_collection_errors):
        return  # no test will run
    modules = {item.module for item in session.items
               if hasattr(getattr(item, "module", None), "start_early")}
    claimed = []
    for module in sorted(modules, key=lambda m: m.__name__):
        folder = _early_dir(module.__name__)
        try:
            folder.mkdir()
        except FileExistsError:
            continue  # another worker started it
        (folder / "work").mkdir()
        claimed.append((module, folder))
    if not claimed:
        return
    pool = ThreadPoolExecutor(max_workers=len(claimed), thread_name_prefix="early-host")
    _started.extend(pool.submit(_run_early, module, folder) for module, folder in claimed)
    pool.shutdown(wait=False)


def pytest_sessionfinish(session: pytest.Session) -> None:
    """Wait for every early session this process started: the run's folder outlives it
    (tests/conftest.py removes it when the whole run ends)."""
    for future in _started:
        future.exception()


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
    """What this module's `start_early` returned (its exception, raised here, fails the test),
    from whichever process ran it."""
    result = _early_dir(request.module.__name__) / RESULT
    deadline = time.monotonic() + EARLY_WAIT_S
    while not result.exists():
        if time.monotonic() > deadline:
            pytest.fail(f"the early session of {request.module.__name__} never finished")
        time.sleep(0.5)
    kind, value = pickle.loads(result.read_bytes())
    if kind == "raised":
        raise value
    return value


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
