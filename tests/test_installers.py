"""Which installer builds forge-env: a uv the project cannot have planted, else pip.

The lookup is what an attacker with write access to the project aims at: the SessionStart
hook runs in the project, so a relative PATH entry, a PATH entry inside the project or a
symlink from elsewhere into it must never make forge run a `uv` of the project's choosing.
"""

from __future__ import annotations

import os
import sys
import time
from pathlib import Path

import pytest

from forge_runtime import installers


def executable(path: Path, text: str = "#!/bin/sh\nexit 0\n") -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)
    path.chmod(0o755)
    return path


@pytest.fixture
def layout(tmp_path, monkeypatch):
    """A project (the working directory) full of planted `uv`s and one trusted outside."""
    project = tmp_path / "project"
    planted = executable(project / "uv")
    executable(project / "bin" / "uv")
    trusted = executable(tmp_path / "tools" / "uv")
    monkeypatch.chdir(project)
    return project, planted, trusted


def test_relative_and_empty_path_entries_are_never_searched(layout):
    project, _, trusted = layout
    path = os.pathsep.join(["", ".", "bin", "./bin", str(trusted.parent)])
    assert installers.find_uv(path, [project]) == trusted
    # `../tools` leaves the project, yet what it names depends on where the hook starts.
    assert installers.find_uv(os.pathsep.join(["../tools", "tools"]), [project]) is None


def test_entries_inside_the_project_are_refused(layout):
    project, _, trusted = layout
    path = os.pathsep.join([str(project), str(project / "bin"),
                            str(project / "bin" / ".." / ".."), str(trusted.parent)])
    # `project/bin/../..` is the project's parent, which holds no uv: skipped as missing.
    assert installers.find_uv(path, [project]) == trusted
    assert installers.find_uv(os.pathsep.join([str(project), str(project / "bin")]),
                              [project]) is None


def test_a_symlink_from_outside_into_the_project_is_refused(layout, tmp_path):
    project, planted, trusted = layout
    decoy = tmp_path / "decoy"
    decoy.mkdir()
    (decoy / "uv").symlink_to(planted)
    linked_dir = tmp_path / "linked"
    linked_dir.symlink_to(project / "bin", target_is_directory=True)
    path = os.pathsep.join([str(decoy), str(linked_dir), str(trusted.parent)])
    assert installers.find_uv(path, [project]) == trusted


def test_the_host_project_dir_is_a_wall_too(layout, tmp_path, monkeypatch):
    project, _, trusted = layout
    elsewhere = tmp_path / "elsewhere"
    elsewhere.mkdir()
    monkeypatch.chdir(elsewhere)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    path = os.pathsep.join([str(project / "bin"), str(trusted.parent)])
    assert installers.find_uv(path, installers.project_dirs()) == trusted


def test_a_uv_that_is_not_an_executable_file_is_skipped(tmp_path):
    (tmp_path / "a" / "uv").mkdir(parents=True)                   # a directory named uv
    (tmp_path / "b").mkdir()
    (tmp_path / "b" / "uv").write_text("not executable")
    (tmp_path / "c").mkdir()
    (tmp_path / "c" / "uv").symlink_to(tmp_path / "c" / "uv")      # a loop
    path = os.pathsep.join(str(tmp_path / name) for name in "abc")
    assert installers.find_uv(path, []) is None


def test_with_uv_the_plan_tries_uv_online_then_offline_then_pip(layout):
    project, _, trusted = layout
    chain = installers.plan(path=str(trusted.parent), untrusted=[project])
    assert [step.label for step in chain] == ["uv", "uv --offline", "pip"]
    online, offline, pip = chain
    command = online.command(Path("/env/bin/python"), ["a>=1"])
    assert command == [str(trusted), "pip", "install", "--quiet", "--compile-bytecode",
                       "--python", "/env/bin/python", "a>=1"]
    assert offline.command(Path("/p"), [])[-1] == "--offline"
    assert not online.with_pip and not offline.with_pip
    assert pip.command(Path("/p"), ["a"])[:5] == [sys.executable, "-I", "-m", "pip",
                                                 "--python"]
    assert not pip.with_pip                        # this interpreter's pip is recent enough


def test_without_a_recent_outer_pip_the_environment_brings_its_own(monkeypatch):
    monkeypatch.setattr(installers, "outer_pip_usable", lambda: False)
    [pip] = installers.plan(path="", untrusted=[])
    assert pip.with_pip
    assert pip.command(Path("/env/bin/python"), ["a"])[:4] == ["/env/bin/python", "-I", "-m",
                                                              "pip"]


def test_installers_run_in_the_data_dir_without_python_variables(tmp_path, monkeypatch):
    monkeypatch.setenv("PYTHONPATH", str(tmp_path / "planted"))
    monkeypatch.setenv("PYTHONSTARTUP", str(tmp_path / "planted.py"))
    report = tmp_path / "seen.txt"
    probe = installers.Installer("probe", [
        sys.executable, "-c",
        "import os, sys; open(sys.argv[1], 'w').write(os.getcwd() + '|' + "
        "','.join(k for k in os.environ if k.startswith('PYTHON')))", str(report)])
    data = tmp_path / "data"
    data.mkdir()
    probe.run(Path("unused"), [], cwd=data, deadline=time.monotonic() + 60)
    assert report.read_text() == f"{data}|"


def test_a_failing_installer_names_itself_and_its_last_line(tmp_path):
    failing = installers.Installer("uv", [sys.executable, "-c",
                                          "import sys; print('x'); sys.exit('no index')"])
    with pytest.raises(installers.BuildFailed, match="^uv failed: no index$"):
        failing.run(Path("p"), [], cwd=tmp_path, deadline=time.monotonic() + 60)
    slow = installers.Installer("uv", [sys.executable, "-c", "import time; time.sleep(30)"],
                                cap_seconds=1)
    with pytest.raises(installers.BuildFailed, match="^uv did not finish within 1 s$"):
        slow.run(Path("p"), [], cwd=tmp_path, deadline=time.monotonic() + 60)


def test_without_a_working_directory_no_uv_is_trusted(layout, monkeypatch):
    project, _, trusted = layout

    def gone():
        raise FileNotFoundError("the working directory was removed")

    monkeypatch.setattr(installers.Path, "cwd", staticmethod(gone))
    assert [step.label for step in installers.plan(path=str(trusted.parent))] == ["pip"]
