"""The lifecycle: every allowed transition, every refused one (answering the allowed ones),
stale computed on read, and a status edited by hand caught by validate."""

from __future__ import annotations

import pytest
from goal_support import cli_project_fixture

from forge_runtime.artifacts.lifecycle import TRANSITIONS
from forge_runtime.errors import EXIT_REFUSED
from tests.artifact_support import (
    LATER,
    NOW,
    active_prd,
    edit_front_matter,
    evidence,
    ok,
    op,
    path_of,
    prd,
)

OPERATIONS = ("activate", "supersede", "deprecate", "renew")


project = cli_project_fixture()


def make(project, status: str) -> tuple[str, object]:
    """An artifact in `status` and the moment to look at it."""
    if status == "draft":
        return prd(project), NOW
    artifact_id = active_prd(project)
    if status == "active":
        return artifact_id, NOW
    if status == "stale":
        return artifact_id, LATER
    if status == "superseded":
        ok(project, "supersede", id=artifact_id, by=prd(project, "Verbose flag v2"))
    else:
        ok(project, "deprecate", id=artifact_id)
    return artifact_id, NOW


def test_draft_to_active_records_the_transition(project):
    artifact_id = prd(project)
    evidence(project, artifact_id)
    data = ok(project, "activate", id=artifact_id)
    assert data["status"] == "active" and data["r_eff"] == 1.0 and data["forced"] == {}
    got = ok(project, "get", id=artifact_id)
    assert got["status"] == got["written_status"] == "active"
    assert [(e["from"], e["to"], e["by"]) for e in got["meta"]["history"]] == [
        ("draft", "active", "activate")]


def test_active_to_superseded_links_the_replacement(project):
    old = active_prd(project)
    new = prd(project, "Verbose flag v2")
    reply = op(project, "supersede", id=old, by=new)
    assert reply.exit_code == 0
    assert ok(project, "get", id=old)["status"] == "superseded"
    assert {"relation": "supersedes", "target": old} in ok(project, "get", id=new)["links"]


def test_active_to_deprecated_keeps_the_reason(project):
    artifact_id = active_prd(project)
    ok(project, "deprecate", id=artifact_id, reason="no longer wanted")
    history = ok(project, "get", id=artifact_id)["meta"]["history"]
    assert history[-1]["to"] == "deprecated" and history[-1]["reason"] == "no longer wanted"


def test_active_reads_stale_once_its_evidence_expired_and_renew_needs_the_evidence(project):
    artifact_id = active_prd(project)
    got = ok(project, "get", LATER, id=artifact_id)
    assert got["status"] == "stale" and got["recorded_status"] == "active"
    assert got["stale_reasons"] == ["its evidence EVIDENCE-001 expired on 2026-08-30"]
    assert ok(project, "list", LATER, status="stale")[0]["id"] == artifact_id
    refused = op(project, "renew", LATER, id=artifact_id)
    assert refused.exit_code == 1 and refused.say.step.args == {"id": "EVIDENCE-001"}
    ok(project, "renew", LATER, id="EVIDENCE-001")
    assert ok(project, "get", LATER, id=artifact_id)["status"] == "active"


def test_stale_from_its_own_valid_until_renews_to_active(project):
    artifact_id = active_prd(project)
    edit_front_matter(project, artifact_id, valid_until="2026-06-10")
    assert ok(project, "get", NOW, id=artifact_id)["status"] == "active"
    later = NOW.replace(day=20)
    assert ok(project, "get", later, id=artifact_id)["status"] == "stale"
    data = ok(project, "renew", later, id=artifact_id, days=30)
    assert data == {"id": artifact_id, "status": "active", "valid_until": "2026-07-20"}
    history = ok(project, "get", later, id=artifact_id)["meta"]["history"]
    assert (history[-1]["from"], history[-1]["to"]) == ("stale", "active")


def test_stale_to_deprecated(project):
    artifact_id = active_prd(project)
    ok(project, "deprecate", LATER, id=artifact_id)
    assert ok(project, "get", LATER, id=artifact_id)["status"] == "deprecated"


ALLOWED = {(status, op) for status, moves in TRANSITIONS.items() for op in moves.values()}
REFUSED = [(status, name) for status in TRANSITIONS for name in OPERATIONS
           if (status, name) not in ALLOWED]


@pytest.mark.parametrize("status, name", REFUSED)
def test_a_refused_transition_answers_with_the_allowed_ones(project, status, name):
    artifact_id, now = make(project, status)
    extra = {"by": prd(project, "Replacement")} if name == "supersede" else {}
    before = path_of(project, artifact_id).read_text()
    reply = op(project, name, now, id=artifact_id, **extra)
    assert reply.exit_code == EXIT_REFUSED, reply.data
    assert reply.data["code"] == "FORGE_TRANSITION_REFUSED"
    allowed = [op_ for op_ in TRANSITIONS[status].values() if op_ != "supersede"]
    assert set(reply.data["allowed"]) >= set(allowed)
    fix = reply.say.step
    assert fix.op == (allowed[0] if allowed else "get") and fix.args["id"] == artifact_id
    assert path_of(project, artifact_id).read_text() == before, "a refusal changes nothing"


def test_activation_needs_validation_and_evidence_and_force_is_recorded(project):
    unfilled = ok(project, "new", kind="prd", title="Empty")["id"]
    refused = op(project, "activate", id=unfilled)
    assert refused.exit_code == EXIT_REFUSED
    assert refused.data["code"] == "FORGE_ACTIVATION_INVALID"
    assert [step.op for step in refused.say.steps()] == ["validate", "activate"]
    filled = prd(project, "No evidence")
    refused = op(project, "activate", id=filled)
    assert refused.data["code"] == "FORGE_ACTIVATION_UNEARNED"
    assert refused.say.step.op == "new" and refused.say.step.args["kind"] == "evidence"
    data = ok(project, "activate", id=unfilled, force=True)
    assert data["forced"] == {"at": "2026-06-01T12:00:00Z", "must_failures": 4, "r_eff": 0.0}
    got = ok(project, "get", id=unfilled)
    assert got["meta"]["forced"] == data["forced"]
    assert got["meta"]["history"][-1]["forced"] is True


def test_notes_and_evidence_activate_on_validation_alone(project):
    note = ok(project, "new", kind="note", title="Idea", body="\nAn idea.\n")["id"]
    assert ok(project, "activate", id=note)["status"] == "active"


def test_a_status_edited_by_hand_is_an_error_with_the_command_that_does_it_right(project):
    artifact_id = prd(project)
    evidence(project, artifact_id)
    edit_front_matter(project, artifact_id, status="active")
    report = ok(project, "validate", id=artifact_id)
    assert report["pass"] is False
    finding = next(f for f in report["findings"] if f["rule"] == "status-by-hand")
    assert finding["severity"] == "MUST"
    assert finding["fix"] == {"op": "activate", "args": {"id": artifact_id}}
    got = ok(project, "get", id=artifact_id)
    assert got["status"] == "draft" and got["written_status"] == "active"
    # The lifecycle trusts its own record: activating works (once validate would pass
    # apart from the hand edit itself, so --force is needed) and rewrites the status line.
    ok(project, "activate", id=artifact_id, force=True)
    assert ok(project, "validate", id=artifact_id)["pass"] is True


def test_no_other_operation_changes_a_status(project):
    artifact_id = prd(project)
    other = prd(project, "Other")
    for name, args in (("link", {"source": artifact_id, "target": other}),
                       ("unlink", {"source": artifact_id, "target": other}),
                       ("claim", {"id": artifact_id, "agent": "w1"}),
                       ("release", {"id": artifact_id, "agent": "w1"}),
                       ("validate", {"id": artifact_id}), ("score", {"id": artifact_id})):
        ok(project, name, **args)
        got = ok(project, "get", id=artifact_id)
        assert got["status"] == got["written_status"] == "draft", name
