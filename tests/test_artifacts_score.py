"""R_eff on hand-checked graphs: the weakest link, each penalty, and the cases where an
empty or broken graph must score 0 rather than 1."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

import pytest

from forge_runtime.artifacts.model import Artifact
from forge_runtime.artifacts.score import score

TODAY = dt.date(2026, 6, 1)
FRESH, EXPIRED = "2026-12-31", "2026-01-01"


def artifact(artifact_id: str, status: str = "draft", links=(), **meta) -> Artifact:
    kind = artifact_id.split("-")[0].lower()
    history = [] if status == "draft" else [{"from": "draft", "to": status}]
    return Artifact(Path(f"{artifact_id}-x.md"), {
        "id": artifact_id, "kind": kind, "title": artifact_id, "status": status,
        "links": [{"relation": relation, "target": target} for relation, target in links],
        "history": history, **meta})


def evidence(artifact_id: str, target: str, status: str = "draft", relation="informs",
             **meta) -> Artifact:
    meta = {"verdict": "supports", "congruence": "CL3", "type": "test", "valid_until": FRESH,
            **meta}
    return artifact(artifact_id, status, [(relation, target)],
                    **{key: value for key, value in meta.items() if value is not None})


def r_eff(*artifacts: Artifact, of: str = "PRD-001") -> float:
    graph = {item.id: item for item in artifacts}
    return score(graph[of], graph, TODAY).r_eff


def test_no_evidence_scores_zero_never_one():
    assert r_eff(artifact("PRD-001")) == 0.0


def test_one_strong_fresh_evidence_scores_one():
    assert r_eff(artifact("PRD-001"), evidence("EVIDENCE-001", "PRD-001")) == 1.0


@pytest.mark.parametrize("fields, expected", [
    ({"congruence": "CL2", "type": "review"}, 0.8 * 0.7),
    ({"verdict": "weakens"}, 0.5),
    ({"verdict": "refutes"}, 0.0),
    ({"congruence": "CL1", "type": "benchmark"}, 0.5 * 0.9),
    ({"valid_until": EXPIRED}, 0.5),
    ({"congruence": "CL0", "type": "observation", "valid_until": EXPIRED}, 0.2 * 0.5 * 0.5),
])
def test_each_penalty_multiplies(fields, expected):
    assert r_eff(artifact("PRD-001"), evidence("EVIDENCE-001", "PRD-001", **fields)) == (
        pytest.approx(expected))


@pytest.mark.parametrize("missing, expected", [
    ("verdict", 0.0),          # counts as refutes
    ("congruence", 0.2),       # counts as CL0
    ("type", 0.5),             # counts as observation
    ("valid_until", 0.5),      # counts as expired
])
def test_an_undeclared_field_counts_as_its_weakest_value(missing, expected):
    assert r_eff(artifact("PRD-001"), evidence("EVIDENCE-001", "PRD-001", **{missing: None})
                 ) == pytest.approx(expected)


def test_an_unknown_value_counts_as_the_weakest_too():
    assert r_eff(artifact("PRD-001"), evidence("EVIDENCE-001", "PRD-001", verdict="proves"
                                               )) == 0.0


def test_the_weakest_evidence_decides():
    assert r_eff(artifact("PRD-001"), evidence("EVIDENCE-001", "PRD-001"),
                 evidence("EVIDENCE-002", "PRD-001", congruence="CL1")) == 0.5


def test_evidence_attached_by_based_on_from_the_artifact_counts():
    prd = artifact("PRD-001", links=[("based_on", "EVIDENCE-001")])
    loose = artifact("EVIDENCE-001", verdict="supports", congruence="CL2", type="test",
                     valid_until=FRESH)
    assert r_eff(prd, loose) == pytest.approx(0.8)


@pytest.mark.parametrize("status", ["superseded", "deprecated"])
def test_superseded_or_deprecated_evidence_does_not_count(status):
    assert r_eff(artifact("PRD-001"), evidence("EVIDENCE-001", "PRD-001", status=status)) == 0
    assert r_eff(artifact("PRD-001"), evidence("EVIDENCE-001", "PRD-001", status=status),
                 evidence("EVIDENCE-002", "PRD-001", congruence="CL2")) == pytest.approx(0.8)


def test_a_chain_takes_the_weakest_active_dependency():
    top = artifact("PRD-001", links=[("depends_on", "PRD-002")])
    middle = artifact("PRD-002", "active", links=[("depends_on", "PRD-003")])
    bottom = artifact("PRD-003", "active")
    graph = [top, middle, bottom, evidence("EVIDENCE-001", "PRD-001"),
             evidence("EVIDENCE-002", "PRD-002", congruence="CL2"),
             evidence("EVIDENCE-003", "PRD-003", type="review")]
    assert r_eff(*graph) == pytest.approx(0.7)            # PRD-003's evidence, two links down
    assert r_eff(*graph, of="PRD-002") == pytest.approx(0.7)


def test_a_dependency_that_is_not_active_is_left_out():
    top = artifact("PRD-001", links=[("depends_on", "PRD-002")])
    assert r_eff(top, artifact("PRD-002"), evidence("EVIDENCE-001", "PRD-001")) == 1.0


def test_a_cycle_is_reported_with_its_members_and_scores_zero():
    first = artifact("PRD-001", "active", links=[("depends_on", "PRD-002")])
    second = artifact("PRD-002", "active", links=[("depends_on", "PRD-003")])
    third = artifact("PRD-003", "active", links=[("depends_on", "PRD-002")])
    graph = {item.id: item for item in (first, second, third,
                                        evidence("EVIDENCE-001", "PRD-001"),
                                        evidence("EVIDENCE-002", "PRD-002"),
                                        evidence("EVIDENCE-003", "PRD-003"))}
    result = score(first, graph, TODAY)
    assert result.r_eff == 0.0
    assert result.cycle == ["PRD-002", "PRD-003"]
    assert "cycle" in result.weakest


def test_a_cycle_among_drafts_still_scores_zero():
    first = artifact("PRD-001", links=[("depends_on", "PRD-002")])
    second = artifact("PRD-002", links=[("depends_on", "PRD-001")])
    assert r_eff(first, second, evidence("EVIDENCE-001", "PRD-001")) == 0.0
