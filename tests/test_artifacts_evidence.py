"""`record_evidence`: the public way for other parts of forge to turn a result into evidence."""

from __future__ import annotations

import pytest

from forge_runtime.artifacts.authoring import record_evidence
from forge_runtime.project import find_project
from forge_runtime.steps import OpError
from tests.artifact_support import ok, prd


def test_recorded_evidence_is_linked_and_earns_activation(cli_project):
    artifact_id = prd(cli_project)
    created = record_evidence(find_project(cli_project), artifact_id, "Gate: tests pass",
                              verdict="supports", congruence="CL3", type="test",
                              body="\n## Method\npytest -q\n\n## Result\n12 passed\n")
    assert created["id"] == "EVIDENCE-001" and created["kind"] == "evidence"
    assert ok(cli_project, "score", id=artifact_id)["r_eff"] > 0
    assert ok(cli_project, "activate", id=artifact_id)["status"] == "active"


def test_a_missing_target_or_an_unknown_verdict_is_refused_before_anything_is_written(
        cli_project):
    with pytest.raises(OpError) as missing:
        record_evidence(find_project(cli_project), "PRD-404", "x", verdict="supports",
                        congruence="CL3", type="test", body="b")
    assert missing.value.code == "FORGE_ARTIFACT_NOT_FOUND"
    artifact_id = prd(cli_project)
    with pytest.raises(OpError):
        record_evidence(find_project(cli_project), artifact_id, "x", verdict="proves",
                        congruence="CL3", type="test", body="b")
    assert [row["id"] for row in ok(cli_project, "list")] == [artifact_id]
