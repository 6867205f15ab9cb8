"""The workflows around /goal: installed by `forge init`, each naming only commands that
parse, none of them a `goal` command or skill."""

from __future__ import annotations

from pathlib import Path

import pytest
from test_gates import forge

from forge_runtime.hint_audit import command_problem, markdown_commands

WORKFLOWS = ("feature", "bug-fix", "quick-fix", "review", "finish", "clarify", "goal")
REPO = Path(__file__).resolve().parents[1]


def test_forge_init_installs_every_workflow(cli_project):
    assert forge("init")[0] == 0
    installed = {path.stem for path in (cli_project / ".forge/workflows").glob("*.md")}
    assert set(WORKFLOWS) <= installed
    assert not (cli_project / ".forge/skills/goal").exists()
    assert (cli_project / ".forge/skills/council/SKILL.md").is_file()


@pytest.mark.parametrize("name", WORKFLOWS)
def test_every_command_a_workflow_names_parses(name):
    found = markdown_commands((REPO / "workflows" / f"{name}.md").read_text())
    assert [(line, command, command_problem(command)) for line, command in found
            if command_problem(command)] == []
    if name not in ("clarify", "goal"):
        assert any(command.startswith("forge gate") for _, command in found), name
