"""Claims on one disk (expiry, renewal, force release, one agent-name check on every surface)
and dispatch that never gives two agents overlapping files."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest
from goal_support import cli_project_fixture
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_runtime.artifacts import dispatch
from forge_runtime.artifacts.model import Artifact
from forge_runtime.hostkit.projects import add_worktree, init_git_project
from forge_runtime.mcp_server import answer
from forge_runtime.operations import CLI, invoke
from tests.artifact_support import NOW, ok, op, prd

MINUTE = dt.timedelta(minutes=1)


project = cli_project_fixture()


def test_a_claim_lasts_its_ttl_and_is_refused_to_others_meanwhile(project):
    artifact_id = prd(project)
    first = ok(project, "claim", id=artifact_id, agent="worker-1")
    assert first["outcome"] == "claimed" and first["until"] == "2026-06-01T12:30:00Z"
    held = op(project, "claim", NOW + 29 * MINUTE, id=artifact_id, agent="worker-2")
    assert held.exit_code == 2
    assert held.say.error == f"{artifact_id} is held by worker-1 until 2026-06-01T12:30:00Z"
    assert [step.op for step in held.say.steps()] == ["claims", "release"]
    assert held.say.alternatives[0].args == {"id": artifact_id, "force": True}


def test_the_same_agent_claiming_again_renews(project):
    artifact_id = prd(project)
    ok(project, "claim", id=artifact_id, agent="worker-1", ttl_minutes=10)
    renewed = ok(project, "claim", NOW + 5 * MINUTE, id=artifact_id, agent="worker-1",
                 ttl_minutes=60)
    assert renewed["outcome"] == "renewed"
    assert renewed["claimed_at"] == "2026-06-01T12:00:00Z"
    assert renewed["until"] == "2026-06-01T13:05:00Z"


def test_an_expired_claim_is_free(project):
    artifact_id = prd(project)
    ok(project, "claim", id=artifact_id, agent="worker-1", ttl_minutes=1)
    taken = ok(project, "claim", NOW + 2 * MINUTE, id=artifact_id, agent="worker-2")
    assert taken["outcome"] == "taken over" and taken["agent"] == "worker-2"
    listed = ok(project, "claims", NOW + 40 * MINUTE)["claims"]
    assert [(c["agent"], c["live"]) for c in listed] == [("worker-2", False)]


def test_release_is_the_holders_unless_forced(project):
    artifact_id = prd(project)
    ok(project, "claim", id=artifact_id, agent="worker-1")
    assert op(project, "release", id=artifact_id, agent="worker-2").exit_code == 2
    assert op(project, "release", id=artifact_id).exit_code == 2
    forced = ok(project, "release", id=artifact_id, force=True)
    assert forced["released"]["agent"] == "worker-1"
    assert ok(project, "claims")["claims"] == []
    assert ok(project, "release", id=artifact_id)["released"] is None


@pytest.mark.parametrize("minutes", [0, 1441, -5])
def test_ttl_is_bounded(project, minutes):
    artifact_id = prd(project)
    refused = op(project, "claim", id=artifact_id, agent="w", ttl_minutes=minutes)
    assert refused.exit_code == 1 and refused.data["code"] == "FORGE_TTL_INVALID"
    assert refused.say.step.args["ttl_minutes"] == 30


@pytest.mark.parametrize("name", ["bad name", "-flag", "a/b", "x" * 65, "émile", ""])
def test_one_agent_name_check_answers_alike_on_the_cli_and_mcp(project, name):
    artifact_id = prd(project)
    cli = invoke("claim", {"id": artifact_id, "agent": name}, CLI, cwd=project)
    mcp = answer("claim", {"id": artifact_id, "agent": name}, cwd=project)
    assert cli.exit_code == 1 and mcp["is_error"]
    assert cli.data["code"] == mcp["structured"]["code"] == "FORGE_AGENT_NAME_INVALID"
    assert cli.data["error"] == mcp["structured"]["error"]
    assert ok(project, "claims")["claims"] == []


def test_claims_are_shared_by_the_worktrees_of_a_repository(tmp_path):
    project = init_git_project(tmp_path / "main")
    tree = add_worktree(project, tmp_path / "feature")
    artifact_id = prd(tree)
    ok(tree, "claim", id=artifact_id, agent="worker-1")
    assert [c["id"] for c in ok(project, "claims")["claims"]] == [artifact_id]


# -- dispatch ---------------------------------------------------------------------------

def _draft(artifact_id: str, files=(), depends=()) -> Artifact:
    return Artifact(Path(f"{artifact_id}-x.md"), {
        "id": artifact_id, "kind": "prd", "title": artifact_id, "status": "draft",
        "affected_files": list(files), "history": [],
        "links": [{"relation": "depends_on", "target": target} for target in depends]})


def _plan(drafts, count=2, held=None, graph=None):
    graph = graph or {item.id: item for item in drafts}
    return dispatch.plan(drafts, graph, lambda item: item.status, held or {}, count)


def test_dispatch_keeps_overlapping_work_on_one_agent_and_queues_what_spans_two():
    drafts = [_draft("PRD-001", ["src/cli.py"]), _draft("PRD-002", ["src/net/"]),
              _draft("PRD-003", ["src/cli.py", "docs/cli.md"]),
              _draft("PRD-004", ["src/cli.py", "src/net/http.py"]),
              _draft("PRD-005"), _draft("PRD-006", ["tests/"], depends=["PRD-005"]),
              _draft("PRD-007", ["docs/"])]
    plan = _plan(drafts, held={"PRD-007": {"agent": "other", "until": "2026-06-01T13:00:00Z"}})
    assigned = {work["agent"]: [item["id"] for item in work["artifacts"]]
                for work in plan["agents"]}
    assert assigned == {"worker-1": ["PRD-001", "PRD-003"], "worker-2": ["PRD-002"]}
    reasons = {item["id"]: item["reason"] for item in plan["serial"]}
    assert reasons["PRD-004"] == "its files overlap work given to worker-1 and worker-2"
    assert "no affected_files" in reasons["PRD-005"]
    assert reasons["PRD-006"] == "blocked: waits for PRD-005 (draft)"
    assert plan["skipped"] == [{"id": "PRD-007",
                                "reason": "held by other until 2026-06-01T13:00:00Z"}]


@pytest.mark.parametrize("left, right, expected", [
    ("src/a.py", "./src/a.py", True), ("src/", "src/a.py", True), ("src/*.py", "src/a.py", True),
    ("src/a.py", "src/ab.py", False), ("docs", "docs2/x", False)])
def test_overlap(left, right, expected):
    assert dispatch.overlaps(left, right) is expected


PATHS = st.lists(st.sampled_from(["a.py", "b.py", "src/", "src/c.py", "docs/d.md", "docs/",
                                  "e.py", "src/*.py"]), max_size=3)


@settings(max_examples=150, deadline=None)
@given(st.lists(PATHS, min_size=1, max_size=12), st.integers(min_value=1, max_value=5))
def test_no_two_agents_ever_get_overlapping_files(file_sets, count):
    drafts = [_draft(f"PRD-{n:03d}", files) for n, files in enumerate(file_sets, start=1)]
    plan = _plan(drafts, count)
    works = plan["agents"]
    for index, mine in enumerate(works):
        for theirs in works[index + 1:]:
            assert not any(dispatch.overlaps(a, b) for a in mine["files"]
                           for b in theirs["files"]), (mine, theirs)
    placed = [item["id"] for work in works for item in work["artifacts"]]
    placed += [item["id"] for item in plan["serial"]]
    assert sorted(placed) == [item.id for item in drafts], "every draft goes somewhere once"


def test_dispatch_through_the_operation_names_the_first_claims(project):
    first, second = prd(project, "One", ["src/a.py"]), prd(project, "Two", ["src/b.py"])
    reply = op(project, "dispatch", agents=2)
    assert reply.say.step.args == {"id": first, "agent": "worker-1"}
    assert reply.say.alternatives[0].args == {"id": second, "agent": "worker-2"}
    assert op(project, "dispatch", agents=0).exit_code == 1
