"""A goal's budget holds for reads too: a model that only calls Read, Grep and Glob makes a
model request per call all the same, so the host starts forge's PreToolUse hook for every
tool (hooks/hooks.json) and a read past a token or dollar ceiling is denied like any other
call, in the goal's first turn and in a later one. The guard answers a read from the
receipt-key check alone (guard/decide.py), whatever the session's role."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from goal_support import Session, goal_project_fixture, running_goal

from forge_runtime.goal.store import state_file
from forge_runtime.goal.store.layout import RECEIPT_KEY
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.guard import READ_ONLY

OBJECTIVE = "the invoice totals add up"
MODEL = "claude-opus-4-5"  # $5 / $25 per million
HOOKS = Path(__file__).resolve().parents[1] / "hooks" / "hooks.json"
READS = {"Read": {"file_path": "a.py"}, "Grep": {"pattern": "def total", "path": "."},
         "Glob": {"pattern": "**/*.py"}}
# (the tranche, the spend that stays below it, the spend that crosses it, the reason's words)
CEILINGS = {"tokens": ("{tokens: 1000}", {"input": 700}, {"output": 300},
                       "used 1k of 1k tokens (the token ceiling)"),
            "usd": ("{usd: 1}", {"input": 100_000}, {"output": 20_000},
                    "spent $1.00 of $1.00 (the dollar ceiling)")}

project = goal_project_fixture()


def _guard(project, tranche: str) -> None:
    (project.root / ".forge").mkdir(exist_ok=True)
    (project.root / ".forge" / "guard.yaml").write_text(
        f"goal: {{require_sandbox: false, tranche: {tranche}}}\n")


def _spend(session: Session, message_id: str, **tokens) -> None:
    """One response of the model that asks for a read, as the host's transcript holds it."""
    session._append({"type": "assistant", "message": {
        "id": message_id, "model": MODEL, "role": "assistant", "stop_reason": "tool_use",
        "usage": {"input_tokens": tokens.get("input", 0),
                  "output_tokens": tokens.get("output", 0)},
        "content": [{"type": "tool_use", "id": message_id, "name": "Read", "input": {}}]}})


def _read(session: Session, tool: str) -> dict | None:
    from forge_runtime.hooks import pre_tool_use

    return pre_tool_use.handle(session.event("PreToolUse", tool_name=tool,
                                             tool_input=READS[tool]))


def _denied(reply: dict | None) -> str:
    assert reply is not None, "the read was let through"
    decision = reply["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    return decision["permissionDecisionReason"]


def test_the_host_starts_the_pretooluse_hook_for_every_tool_reads_included():
    """The registration itself: a group per matcher the host applies to the tool's name, and
    no `if` that would start it for one path only (the old registration left reads out)."""
    groups = json.loads(HOOKS.read_text())["hooks"]["PreToolUse"]
    assert [group.get("matcher") for group in groups] == ["*"]
    assert not [hook for group in groups for hook in group["hooks"] if "if" in hook]
    assert set(READS) == set(READ_ONLY)


def _read_past_the_ceiling(project, tool: str, ceiling: str, *,
                           confirmed: bool) -> tuple[Session, str]:
    """(the session, the reason forge denies its `tool` read that crosses the `ceiling` of
    CEILINGS), once the read below it was let through; `confirmed`: a Stop confirmed the
    goal before."""
    tranche, below, crossing, _ = CEILINGS[ceiling]
    _guard(project, tranche)
    session = running_goal(project, OBJECTIVE)
    if confirmed:
        assert session.turn() is None  # the goal is confirmed and bound; nothing spent yet
    _spend(session, "msg_1", **below)
    assert _read(session, tool) is None
    _spend(session, "msg_2", **crossing)
    return session, _denied(_read(session, tool))


@pytest.mark.parametrize("ceiling", CEILINGS)
@pytest.mark.parametrize("tool", READ_ONLY)
def test_a_read_past_the_ceiling_is_denied_mid_turn(project, tool, ceiling):
    _, reason = _read_past_the_ceiling(project, tool, ceiling, confirmed=True)
    words = CEILINGS[ceiling][3]
    assert reason.startswith("FORGE_GOAL_BUDGET_EXHAUSTED: ") and words in reason
    assert "forge denies this tool call so the turn ends" in reason


@pytest.mark.parametrize("ceiling", CEILINGS)
@pytest.mark.parametrize("tool", READ_ONLY)
def test_a_read_past_the_ceiling_is_denied_in_the_goals_first_turn(project, tool, ceiling):
    session, reason = _read_past_the_ceiling(project, tool, ceiling, confirmed=False)
    words = CEILINGS[ceiling][3]
    assert reason.startswith(f"FORGE_GOAL_BUDGET_EXHAUSTED: the first turn of /goal "
                             f"{OBJECTIVE} {words}")
    session._append({"type": "assistant", "message": {"role": "assistant",
                                                      "stop_reason": "end_turn", "content": []}})
    assert session.stop()["continue"] is False
    goal = Ledger(project.ledger_root, state_file.read(project.state_path).goal["nonce"]).current()
    assert goal.goal["status"] == "exhausted"


def test_a_read_in_a_session_without_a_goal_is_let_through_and_the_key_is_not(project):
    key = Path(project.ledger_root) / "gates" / RECEIPT_KEY
    key.parent.mkdir(parents=True)
    key.write_bytes(b"KEY")
    session = Session(project)
    for tool in READ_ONLY:
        assert _read(session, tool) is None
    for tool, tool_input in (("Read", {"file_path": str(key)}),
                             ("Grep", {"pattern": "K", "path": str(key.parent)}),
                             ("Glob", {"pattern": "*", "path": str(key.parent)})):
        from forge_runtime.hooks import pre_tool_use

        reason = _denied(pre_tool_use.handle(session.event(
            "PreToolUse", tool_name=tool, tool_input=tool_input)))
        assert "gate receipts' key" in reason


def test_a_role_never_refuses_a_read_even_with_a_broken_rule_file(project):
    """Reading is never a role's to refuse: a clarifier's reads run, a write does not."""
    from forge_runtime.hooks import pre_tool_use

    (project.root / ".forge" / "guard.yaml").write_text("roles: [unclosed\n")
    session = Session(project)
    for tool in READ_ONLY:
        assert pre_tool_use.handle(session.event("PreToolUse", tool_name=tool,
                                                 tool_input=READS[tool],
                                                 agent_type="forge:clarifier")) is None
    assert _denied(pre_tool_use.handle(session.event(
        "PreToolUse", tool_name="Write", tool_input={"file_path": "b.py", "content": ""},
        agent_type="forge:clarifier")))
