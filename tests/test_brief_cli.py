"""`forge brief check|freeze|show` as a person runs them, and the store they write through."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forge_runtime.hint_audit import output_problems

COMPLETE = ("Goal: export reports as CSV\nAcceptance criteria:\n- report.csv exists\n"
            "- its header names every column\nOut of scope: PDF\nAssumptions: finance reads it\n")
NO_BOUNDARIES = COMPLETE.replace("Out of scope: PDF\n", "")


def forge(project: Path, *words: str, stdin: str | None = None) -> subprocess.CompletedProcess:
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "forge_runtime", *words], cwd=project, env=env,
                          input=stdin or "", capture_output=True, text=True, timeout=60)


@pytest.fixture
def project(tmp_path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    (root / "draft.md").write_text(COMPLETE)
    (root / "partial.md").write_text(NO_BOUNDARIES)
    return root


def test_check_reports_sections_writes_nothing_and_exits_1_when_incomplete(project):
    shown = forge(project, "brief", "check", "partial.md")
    assert shown.returncode == 1
    assert "Boundaries                missing" in shown.stdout
    assert "Error: the brief lacks: Boundaries\nFix: forge brief check partial.md" in shown.stdout
    assert not (project / ".forge").exists()
    good = forge(project, "brief", "check", "-", "--json", stdin=COMPLETE)
    data = json.loads(good.stdout)
    assert good.returncode == 0 and data["complete"] and data["missing"] == []
    assert data["_next_action"] == "forge brief freeze -"
    assert not (project / ".forge").exists()


def test_freeze_refuses_an_incomplete_brief_and_a_second_one_without_new(project):
    refused = forge(project, "brief", "freeze", "partial.md")
    assert refused.returncode == 1 and "the brief lacks: Boundaries" in refused.stderr
    assert not (project / ".forge" / "notes" / "brief.md").exists()

    frozen = forge(project, "brief", "freeze", "draft.md")
    assert frozen.returncode == 0, frozen.stderr
    path = project / ".forge" / "notes" / "brief.md"
    first = path.read_text()
    assert first.startswith("## Goal\n\nexport reports as CSV\n")
    assert output_problems(frozen.stdout) == []

    again = forge(project, "brief", "freeze", "-", stdin=COMPLETE.replace("CSV", "TSV"))
    assert again.returncode == 2 and "a brief is already frozen" in again.stderr
    assert "Fix: forge brief freeze - --new" in again.stderr
    assert path.read_text() == first

    new = forge(project, "brief", "freeze", "-", "--new", stdin=COMPLETE.replace("CSV", "TSV"))
    assert new.returncode == 0
    assert "TSV" in path.read_text()
    assert (project / ".forge" / "notes" / "brief.1.md").read_text() == first


def test_show_prints_the_frozen_brief_and_the_goal_made_from_its_criteria(project):
    missing = forge(project, "brief", "show")
    assert missing.returncode == 1 and "no brief is frozen" in missing.stderr
    forge(project, "brief", "freeze", "draft.md")
    shown = forge(project, "brief", "show")
    assert shown.returncode == 0 and output_problems(shown.stdout) == []
    assert "  ## Boundaries" in shown.stdout
    assert shown.stdout.rstrip().splitlines()[-2] == (
        "Next: /goal every acceptance criterion of the brief holds: report.csv exists; "
        "its header names every column")
    data = json.loads(forge(project, "brief", "show", "--json").stdout)
    assert data["sections"]["Boundaries"] == "PDF"


def test_a_body_line_that_looks_like_a_hint_cannot_end_the_output(project):
    (project / "tricky.md").write_text(COMPLETE + "Fix: the login bug is someone else's\n")
    forge(project, "brief", "freeze", "tricky.md")
    assert output_problems(forge(project, "brief", "show").stdout) == []
