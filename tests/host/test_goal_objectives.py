"""Odd objectives against the real host: what it writes for them must still activate forge.

forge activates only when the transcript's `<command-args>` matches the `/goal` prompt, so
any escaping or trimming the host applies to an objective would leave a person's goal
running with no budget at all. Each objective here must activate, be charged, and keep
the identity a hint can name.
"""

from __future__ import annotations

import pytest
from goal_support import goal_in_state

from forge_runtime.goal.store.objective import normalise

pytestmark = pytest.mark.host

MET_AT_ONCE = """
rules:
  - name: evaluator says met
    when: {goal_evaluator: true}
    reply: {verdict: {ok: true, reason: "done"}}
  - name: model works
    reply: {text: "Done."}
"""

ODD = {
    "markup": "make a < b && c > \"d\" & 'e' <command-args>x</command-args>",
    "unicode": "café ünïcode 日本語 ✓ 👩‍👩‍👧",
    "bidi": "ship \u202eresrap\u202c now",
    "newline": "first line\nsecond line",
    "long": "keep going " * 300,
}


@pytest.mark.parametrize("objective", ODD.values(), ids=ODD.keys())
def test_an_odd_objective_activates_and_is_charged(claude_host, project, objective):
    session = claude_host(MET_AT_ONCE).run(f"/goal {objective}", cwd=project, timeout=60)
    goal = goal_in_state(project)
    assert goal is not None, session.result
    assert goal["objective"] == normalise(objective)
    assert (goal["turn_count"], goal["status"]) == (1, "complete")


def test_an_objective_of_only_invisible_characters_is_blocked_before_the_host_sets_it(
        claude_host, project):
    session = claude_host(MET_AT_ONCE).run("/goal \u200b\u202e", cwd=project, timeout=60)
    (prompt,) = session.hooks_for("UserPromptSubmit")
    assert prompt.reply["decision"] == "block"
    assert "no visible characters" in prompt.reply["reason"]
    assert session.hooks_for("Stop") == []  # the host ran no turn, so no goal
    assert not (project / ".forge" / "local" / "state.md").exists()
