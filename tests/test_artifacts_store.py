"""Artifact files: IDs never collide under concurrent `forge new`, the index is only a cache,
and every write lands in the work tree the caller runs in."""

from __future__ import annotations

import json
import os
import subprocess
import sys

from goal_support import cli_project_fixture

from forge_runtime.hostkit.projects import add_worktree, init_git_project
from tests.artifact_support import ok, path_of, prd

PROCESSES = 8
EACH = 4


project = cli_project_fixture()


def test_eight_processes_creating_at_once_get_distinct_ids(project):
    code = ("import sys\nfrom forge_runtime.operations import run\n"
            f"for n in range({EACH}):\n"
            "    reply = run('new', {'kind': 'prd', 'title': f'{sys.argv[1]} {n}'})\n"
            "    assert reply.exit_code == 0, reply.data\n"
            "    print(reply.data['id'])\n")
    env = {**os.environ, "PYTHONPATH": os.getcwd()}
    procs = [subprocess.Popen([sys.executable, "-c", code, f"writer {number}"], cwd=project,
                              env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for number in range(PROCESSES)]
    ids = []
    for proc in procs:
        out, err = proc.communicate(timeout=120)
        assert proc.returncode == 0, err
        ids += out.split()
    assert len(ids) == len(set(ids)) == PROCESSES * EACH
    assert sorted(ids) == [f"PRD-{n:03d}" for n in range(1, PROCESSES * EACH + 1)]
    files = sorted(p.name for p in (project / ".forge/artifacts").glob("*.md"))
    assert len(files) == PROCESSES * EACH


def test_the_index_is_a_cache_a_hand_edit_or_a_broken_index_never_misleads(project):
    artifact_id = prd(project)
    assert ok(project, "list")[0]["title"] == "Verbose flag"
    index = project / ".forge/local/artifacts/index.json"
    assert artifact_id in json.dumps(json.loads(index.read_text()))
    path = path_of(project, artifact_id)
    path.write_text(path.read_text().replace("title: Verbose flag", "title: Renamed by hand"))
    assert ok(project, "list")[0]["title"] == "Renamed by hand"
    index.write_text("{not json")
    assert ok(project, "list")[0]["title"] == "Renamed by hand"
    index.unlink()
    assert ok(project, "list")[0]["title"] == "Renamed by hand"
    listed = subprocess.run([sys.executable, "-m", "forge_runtime", "list", "--json"],
                            cwd=project, capture_output=True, text=True, timeout=60)
    assert json.loads(listed.stdout)[0]["title"] == "Renamed by hand"
    assert index.exists(), "the next process rebuilds the index"


def test_a_long_running_process_sees_every_change_another_process_makes(project):
    first = prd(project)
    assert ok(project, "get", id=first)["title"] == "Verbose flag"     # remembered now
    other = subprocess.run([sys.executable, "-m", "forge_runtime", "new", "note", "Theirs",
                            "--json"], cwd=project, capture_output=True, text=True, timeout=60)
    theirs = json.loads(other.stdout)["id"]
    path = path_of(project, first)
    path.write_text(path.read_text().replace("title: Verbose flag", "title: Edited"))
    ok(project, "new", kind="note", title="Mine")
    titles = {row["id"]: row["title"] for row in ok(project, "list")}
    assert titles[first] == "Edited" and titles[theirs] == "Theirs" and len(titles) == 3


def test_a_date_typed_unquoted_by_hand_reads_as_a_date(project):
    artifact_id = prd(project)
    path = path_of(project, artifact_id)
    path.write_text(path.read_text().replace("valid_until: null", "valid_until: 2027-01-31"))
    got = ok(project, "get", id=artifact_id)
    assert got["valid_until"] == "2027-01-31"
    assert ok(project, "validate", id=artifact_id)["pass"] is True


def test_a_worktree_writes_its_own_artifacts_whatever_the_host_project_dir_says(
        tmp_path, monkeypatch):
    project = init_git_project(tmp_path / "main")
    tree = add_worktree(project, tmp_path / "feature")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project))
    created = ok(tree, "new", kind="prd", title="In the worktree")
    assert (tree / created["path"]).is_file()
    assert not (project / ".forge/artifacts").exists()
    ok(tree / ".forge", "new", kind="note", title="From a subdirectory")
    assert len(list((tree / ".forge/artifacts").glob("*.md"))) == 2
