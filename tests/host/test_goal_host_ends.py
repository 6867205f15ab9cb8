"""A goal the host ends is recorded as ended, with how, in the real Claude Code; a person's
own prompts after it are theirs, never charged to it."""

from __future__ import annotations

import pytest
from goal_support import goal_in_state
from session_support import forge_cli, model_turns

from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.project import find_project

pytestmark = pytest.mark.host

OBJECTIVE = "the file never.txt exists"

IMPOSSIBLE = """
rules:
  - name: evaluator finds it impossible
    when: {goal_evaluator: true}
    reply: {verdict: {ok: false, impossible: true, reason: "cannot be done here"}}
  - name: model works
    reply: {text: "Working on it."}
"""


def test_a_goal_the_evaluator_judges_impossible_ends_and_the_persons_next_prompts_are_theirs(
        claude_host, project):
    host = claude_host(IMPOSSIBLE)
    first = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=90)
    assert model_turns(first) == 1  # the host cleared its goal at the verdict
    nonce = goal_in_state(project)["nonce"]
    for text in ("explain the parser to me", "and the lexer"):
        again = host.run(text, cwd=project, resume=first.session_id, timeout=90)
        assert all(hook.reply is None for hook in again.hooks_for("Stop")), again.result
    goal = Ledger(find_project(project).ledger_root, nonce).verified()
    assert (goal["status"], goal["ended"], goal["turn_count"]) == ("cancelled", "impossible", 1)
    status = forge_cli(project, host.home, "goal", "status")
    assert "status      cancelled (ended: impossible)" in status.stdout.splitlines()
    assert status.stdout.rstrip().splitlines()[-2:] == [
        "Done.", "  goal cancelled (ended: impossible); /goal with the same objective reopens it"]
