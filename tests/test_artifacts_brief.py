"""`forge new prd --from-brief`: the frozen brief's sections become the PRD's."""

from __future__ import annotations

from tests.artifact_support import ok, op

BRIEF = ("# Brief\n\n## Goal\nA --trace flag shows every step.\n\n## Acceptance criteria\n"
         "- forge --trace prints each step\n\n## Boundaries\n- output without the flag is "
         "unchanged\n\n## Unknowns and assumptions\n- none\n")


def test_the_brief_becomes_a_prd_that_validates(cli_project):
    notes = cli_project / ".forge" / "notes"
    notes.mkdir(parents=True)
    (notes / "brief.md").write_text(BRIEF)
    created = ok(cli_project, "new", kind="prd", from_brief=True, affected_files=["src/cli.py"])
    assert created["title"] == "A --trace flag shows every step."
    got = ok(cli_project, "get", id=created["id"])
    for section in ("## Goal\n\nA --trace flag", "## Acceptance criteria\n\n- forge --trace",
                    "## Boundaries\n\n- output without", "## Unknowns and assumptions\n\n- none"):
        assert section in got["body"]
    assert ok(cli_project, "validate", id=created["id"])["pass"] is True


def test_without_a_brief_the_fix_writes_the_prd_by_hand(cli_project):
    refused = op(cli_project, "new", kind="prd", from_brief=True)
    assert refused.exit_code == 1 and refused.data["code"] == "FORGE_BRIEF_MISSING"
    assert refused.say.step.op == "new" and "from_brief" not in refused.say.step.args
    assert ok(cli_project, "list") == []
    assert op(cli_project, "new", kind="adr", from_brief=True).exit_code == 1
