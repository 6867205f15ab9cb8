"""Claims through a git remote: a real bare repository, two clones racing for one claim."""

from __future__ import annotations

import datetime as dt
import threading

import pytest

from forge_runtime.artifacts.remote import REF_PREFIX, RemoteClaims
from forge_runtime.steps import Call, OpError
from tests.artifact_support import NOW, bare_repository, ok, op, prd
from tests.artifact_support import git as _git

ROUNDS = 20


@pytest.fixture
def clones(tmp_path):
    remote = bare_repository(tmp_path / "shared.git")
    made = []
    for name in ("machine-a", "machine-b"):
        _git("clone", "-q", str(remote), name, cwd=tmp_path)
        made.append(tmp_path / name)
    return remote, made


def _race(clones, artifact_id, agents, now):
    """Both machines claim at the same moment; (winners, refusals)."""
    barrier = threading.Barrier(len(clones))
    outcomes = [None] * len(clones)

    def attempt(index):
        claims = RemoteClaims(clones[index], "origin")
        barrier.wait()
        try:
            outcomes[index] = claims.claim(artifact_id, agents[index], 30, now)
        except OpError as exc:
            outcomes[index] = exc

    threads = [threading.Thread(target=attempt, args=(index,)) for index in range(len(clones))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=120)
    winners = [o for o in outcomes if isinstance(o, tuple)]
    refused = [o for o in outcomes if isinstance(o, OpError)]
    return winners, refused


def test_two_machines_racing_never_both_hold_a_claim(clones):
    remote, machines = clones
    for round_ in range(ROUNDS):
        artifact_id = f"PRD-{round_ + 1:03d}"
        winners, refused = _race(machines, artifact_id, ["worker-a", "worker-b"], NOW)
        assert len(winners) == 1 and len(refused) == 1, (round_, winners, refused)
        record, outcome = winners[0]
        assert outcome == "claimed"
        assert refused[0].code == "FORGE_CLAIM_HELD"
        assert refused[0].message.startswith(f"{artifact_id} is held by {record['agent']}")
        refs = _git("for-each-ref", "--format=%(refname)", REF_PREFIX, cwd=remote).split()
        assert f"{REF_PREFIX}{artifact_id}" in refs
        # What the remote holds is the winner's claim, whichever machine reads it.
        for machine in machines:
            assert RemoteClaims(machine, "origin").current(artifact_id)[1] == record


def test_an_expired_claim_is_taken_over_by_exactly_one_machine(clones):
    _, machines = clones
    long_ago = NOW - dt.timedelta(hours=2)
    for round_ in range(5):
        artifact_id = f"ADR-{round_ + 1:03d}"
        RemoteClaims(machines[0], "origin").claim(artifact_id, "sleeper", 30, long_ago)
        winners, refused = _race(machines, artifact_id, ["worker-a", "worker-b"], NOW)
        assert len(winners) == 1 and len(refused) == 1
        assert winners[0][1] == "taken over"


def test_renewal_release_and_listing_through_the_remote(clones):
    _, (first, second) = clones
    claims_a, claims_b = RemoteClaims(first, "origin"), RemoteClaims(second, "origin")
    claims_a.claim("PRD-001", "worker-a", 30, NOW)
    renewed, outcome = claims_a.claim("PRD-001", "worker-a", 60, NOW + dt.timedelta(minutes=5))
    assert outcome == "renewed" and renewed["until"] == "2026-06-01T13:05:00Z"
    with pytest.raises(OpError) as held:
        claims_b.release("PRD-001", "worker-b", False, NOW)
    assert held.value.code == "FORGE_CLAIM_HELD"
    claims_b.claim("RFC-001", "worker-b", 30, NOW)
    assert [record["id"] for record in claims_a.all()] == ["PRD-001", "RFC-001"]
    assert claims_b.release("PRD-001", None, True, NOW)["agent"] == "worker-a"
    assert [record["id"] for record in claims_a.all()] == ["RFC-001"]


def test_the_operations_take_remote_and_the_project_setting(clones):
    _, (first, second) = clones
    artifact_id = prd(first)
    claimed = ok(first, "claim", id=artifact_id, agent="worker-a", remote="origin")
    assert claimed["remote"] == "origin"
    (second / ".forge").mkdir()
    (second / ".forge" / "config.yaml").write_text("claims:\n  remote: origin\n")
    prd(second)
    held = op(second, "claim", id=artifact_id, agent="worker-b")
    assert held.exit_code == 2 and held.say.step == Call("claims", {"remote": "origin"})
    assert ok(second, "claims")["remote"] == "origin"
    assert [c["agent"] for c in ok(second, "claims")["claims"]] == ["worker-a"]


def test_an_unreachable_remote_is_an_error_not_a_local_claim(tmp_path):
    project = tmp_path / "alone"
    _git("init", "-q", str(project), cwd=tmp_path)
    artifact_id = prd(project)
    refused = op(project, "claim", id=artifact_id, agent="worker-a", remote="nowhere")
    assert refused.exit_code == 1 and refused.data["code"] == "FORGE_REMOTE_UNREACHABLE"
    assert ok(project, "claims")["claims"] == []
