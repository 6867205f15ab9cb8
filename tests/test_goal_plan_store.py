"""Claude Code's plan readings as forge keeps them: a copy under the ledger root that its
mirror in the witness root does not vouch for is none of forge's."""

from __future__ import annotations

import json
import time

import pytest
from goal_support import goal_project_fixture

from forge_runtime.errors import ForgeError
from forge_runtime.goal import plan, plan_store

project = goal_project_fixture()


@pytest.fixture(autouse=True)
def _own_witness(tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))


def test_a_copy_planted_without_its_mirror_fails_closed(project):
    """The status line writes the mirror first, so no crash leaves the copy alone: an agent
    that writes one (the guard off, no status line ever ran, as under `claude -p`) would
    otherwise hand the hooks a figure of its choosing."""
    root, now = str(project.ledger_root), int(time.time())
    planted = plan.from_statusline({"rate_limits": {"five_hour": {
        "used_percentage": 1, "resets_at": now + 3600}}}, now)
    stored = project.ledger_root / "sessions" / "abc.plan.json"
    stored.parent.mkdir(parents=True, exist_ok=True)
    stored.write_text(json.dumps(planted))
    with pytest.raises(ForgeError) as raised:
        plan_store.latest(root, "abc")
    assert "FORGE_GOAL_LEDGER_TAMPERED" in raised.value.hint().render()
    plan_store.record(root, "abc", planted)  # the host's own figure again: both agree
    assert plan_store.latest(root, "abc") == planted
