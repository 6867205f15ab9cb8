"""A long-lived `forge mcp` learns of artifact changes from the kernel, never serving a stale
artifact: every kind of change another tool makes between two reads is seen by the second,
and a folder the watch loses track of is read whole again."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys

import pytest

from forge_runtime.artifacts import store, watch
from forge_runtime.artifacts.watch import Watcher
from tests.artifact_support import ok, path_of, prd


@pytest.fixture
def watched(cli_project, monkeypatch):
    """A project read by a watching process (as `forge mcp` is)."""
    monkeypatch.setattr(store, "_WATCHING", True)
    monkeypatch.setattr(store, "_WATCHERS", {})
    monkeypatch.setattr(store, "_SCANS", {})
    return cli_project


def test_the_watch_names_each_changed_file_and_nothing_when_quiet(tmp_path):
    (tmp_path / "a.md").write_text("a")
    watcher = Watcher(str(tmp_path))
    assert watcher.changes() == set()
    with open(tmp_path / "a.md", "r+") as stream:  # in place, as the Write tool rewrites
        stream.write("b")
    (tmp_path / "new.md").write_text("n")
    os.replace(tmp_path / "new.md", tmp_path / "moved.md")
    (tmp_path / "moved.md").unlink()
    assert watcher.changes() == {"a.md", "new.md", "moved.md"}
    assert watcher.changes() == set()


@pytest.mark.parametrize("lose", ["removed", "renamed"])
def test_a_watch_that_loses_its_folder_cannot_say(tmp_path, lose):
    folder = tmp_path / "artifacts"
    folder.mkdir()
    watcher = Watcher(str(folder))
    if lose == "removed":
        shutil.rmtree(folder)
    else:
        folder.rename(tmp_path / "elsewhere")
    assert watcher.changes() is None and not watcher.active


def test_an_unchanged_folder_is_not_stat_again(watched, monkeypatch):
    prd(watched)
    ok(watched, "list")
    counted = []
    real = store.Store._stamps
    monkeypatch.setattr(store.Store, "_stamps", lambda self: counted.append(1) or real(self))
    for _ in range(5):
        ok(watched, "list")
    assert counted == []


@pytest.mark.parametrize("kernel", ["inotify", "no inotify (another system)"])
def test_every_change_between_two_reads_is_seen_by_the_second(watched, monkeypatch, kernel):
    if kernel != "inotify":
        monkeypatch.setattr(watch, "_inotify", lambda: None)
    first = prd(watched)
    assert ok(watched, "get", id=first)["title"] == "Verbose flag"
    path = path_of(watched, first)
    text = path.read_text()
    with open(path, "r+", encoding="utf-8") as stream:  # same size, in place
        stream.write(text.replace("title: Verbose flag", "title: Verbose FLAG"))
    assert ok(watched, "get", id=first)["title"] == "Verbose FLAG"
    other = subprocess.run([sys.executable, "-m", "forge_runtime", "new", "note", "Theirs",
                            "--json"], cwd=watched, capture_output=True, text=True, timeout=60)
    assert other.returncode == 0, other.stderr
    assert {row["title"] for row in ok(watched, "list")} == {"Verbose FLAG", "Theirs"}
    theirs = next(p for p in path.parent.glob("NOTE-*.md"))
    theirs.unlink()
    assert [row["title"] for row in ok(watched, "list")] == ["Verbose FLAG"]
    folder = path.parent
    shutil.move(folder, watched / "aside")  # the folder itself goes, and comes back changed
    shutil.copytree(watched / "aside", folder)
    copied = folder / path.name
    copied.write_text(copied.read_text().replace("title: Verbose FLAG", "title: Restored"))
    assert [row["title"] for row in ok(watched, "list")] == ["Restored"]
