"""Each validation rule, with its severity, and `--ci` turning MUST failures into an exit code."""

from __future__ import annotations

import pytest
from goal_support import cli_project_fixture

from tests.artifact_support import edit_front_matter, ok, op, path_of, prd

project = cli_project_fixture()


def findings(project, artifact_id):
    return {(f["rule"], f["severity"]) for f in ok(project, "validate", id=artifact_id)[
        "findings"]}


def test_a_filled_prd_passes_with_nothing_to_say(project):
    report = ok(project, "validate", id=prd(project))
    assert report["pass"] is True and report["findings"] == []


def test_a_fresh_template_fails_on_empty_sections_and_placeholders(project):
    artifact_id = ok(project, "new", kind="prd", title="Empty")["id"]
    assert findings(project, artifact_id) == {("empty-section", "MUST"),
                                              ("placeholder", "MUST"),
                                              ("affected-files", "SHOULD")}


def test_a_missing_required_section_and_a_missing_recommended_one(project):
    artifact_id = ok(project, "new", kind="prd", title="Short", affected_files=["a.py"],
                     body="\n## Goal\nSomething.\n\n## Acceptance criteria\n- it works\n")["id"]
    assert findings(project, artifact_id) == {("section", "MUST"),
                                              ("optional-section", "SHOULD")}


def test_todo_left_in_the_text_is_a_should(project):
    artifact_id = prd(project)
    path = path_of(project, artifact_id)
    path.write_text(path.read_text() + "\nTODO: decide the colour.\n")
    assert findings(project, artifact_id) == {("todo", "SHOULD")}


@pytest.mark.parametrize("changes, message", [
    ({"kind": "recipe"}, "kind must be one of"),
    ({"title": ""}, "title must be a non-empty string"),
    ({"created": "yesterday"}, "created must be an ISO 8601 timestamp"),
    ({"valid_until": "soon"}, "valid_until must be a date"),
    ({"affected_files": "src/cli.py"}, "affected_files must be a list of paths"),
    ({"links": {"target": "PRD-002"}}, "links must be a list"),
    ({"id": "PRD-1"}, "id must be KIND-NNN"),
])
def test_front_matter_types(project, changes, message):
    artifact_id = prd(project)
    edit_front_matter(project, artifact_id, **changes)
    shown = ok(project, "validate", all=True)
    messages = [f["message"] for report in shown["artifacts"] for f in report["findings"]
                if f["rule"] == "front-matter"]
    assert any(message in text for text in messages), messages


def test_unreadable_front_matter_is_reported_not_crashed_on(project):
    artifact_id = prd(project)
    path_of(project, artifact_id).write_text("---\nid: [unclosed\n---\nbody\n")
    report = ok(project, "validate", id=artifact_id)
    assert report["pass"] is False
    assert report["findings"][0]["rule"] == "front-matter"
    assert ok(project, "list")[0]["id"] == artifact_id


def test_links_must_resolve_and_name_a_relation(project):
    artifact_id = prd(project)
    edit_front_matter(project, artifact_id, links=[{"relation": "informs", "target": "ADR-404"},
                                                   {"relation": "likes", "target": artifact_id}])
    report = ok(project, "validate", id=artifact_id)
    link_findings = [f for f in report["findings"] if f["rule"] == "link"]
    assert len(link_findings) == 2
    assert link_findings[0]["fix"] == {"op": "unlink", "args": {"source": artifact_id,
                                                               "target": "ADR-404"}}


def test_the_file_name_and_duplicate_ids(project):
    first = prd(project)
    second = prd(project, "Other")
    path = path_of(project, second)
    path.rename(path.with_name("misnamed.md"))
    edit_front_matter(project, first, id="PRD-001")
    twin = path_of(project, first).with_name("PRD-001-twin.md")
    twin.write_text(path_of(project, first).read_text())
    rules = {f["rule"] for report in ok(project, "validate", all=True)["artifacts"]
             for f in report["findings"]}
    assert {"id-file", "duplicate-id"} <= rules


def test_evidence_should_declare_its_fields(project):
    created = ok(project, "new", kind="evidence", title="Evidence",
                 body="\n## Method\nRan it.\n\n## Result\nFine.\n")["id"]
    assert findings(project, created) == {("evidence-field", "SHOULD")}


def test_ci_exits_non_zero_on_must_only(project):
    prd(project)
    assert op(project, "validate", all=True, ci=True).exit_code == 0
    ok(project, "new", kind="adr", title="Unfilled")
    without_ci = op(project, "validate", all=True)
    assert without_ci.exit_code == 0 and without_ci.data["pass"] is False
    with_ci = op(project, "validate", all=True, ci=True)
    assert with_ci.exit_code == 1 and with_ci.data["code"] == "FORGE_VALIDATION_FAILED"
    assert with_ci.say.step.op == "validate" and with_ci.say.step.args == {"id": "ADR-001"}


def test_a_should_alone_never_fails_ci(project):
    ok(project, "new", kind="prd", title="No files", body="\n" + "\n".join(
        f"## {name}\ntext\n" for name in ("Goal", "Acceptance criteria", "Boundaries",
                                          "Unknowns and assumptions")))
    assert op(project, "validate", all=True, ci=True).exit_code == 0


def test_a_planted_file_whose_aliases_multiply_is_refused_not_expanded(project):
    artifact_id = prd(project)
    bomb = ["---", "a: &a [x, x, x, x, x, x, x, x, x, x]"]
    bomb += [f"{chr(98 + n)}: &{chr(98 + n)} [*{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}, "
             f"*{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}, *{chr(97 + n)}]"
             for n in range(8)]
    path_of(project, artifact_id).write_text("\n".join([*bomb, "---", "body", ""]))
    report = ok(project, "validate", id=artifact_id)
    assert report["findings"][0]["rule"] == "front-matter"
    assert "aliases" in report["findings"][0]["message"]
    assert ok(project, "list")[0]["id"] == artifact_id
