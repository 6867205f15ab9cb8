"""What a fresh clone may take from the remote: counts, never autonomy (docs/remote-ledger.md).

The remote's `refs/forge/goals/*` is writable by anyone with push access, an agent in
another, unguarded clone included, and a chain that obeys forge's transition rules can be
written without any person: a tranche whose time ceiling is already spent may be followed
by one more activation, and so on. Such a chain verifies; what it must not do is give the
session of a person's `/goal` in THIS clone more than the one tranche that `/goal` grants.
"""

from __future__ import annotations

import pytest
from goal_support import Session

from forge_runtime.goal import activation, publisher, remote
from forge_runtime.goal.ledger import Ledger
from tests.test_goal_remote import (  # noqa: F401 (origin: the fixture)
    OBJECTIVE,
    _charge,
    _goal,
    _witness,
    clone,
    origin,
)


def _forge_tranches(project, nonce: str, extra: int) -> dict:
    """What an agent in an unguarded clone can write without a person, once a tranche is
    spent: `extra` activations, each after a tranche whose time ceiling it set spent."""
    ledger = Ledger(project.ledger_root, nonce, witness=_witness(project))
    with ledger.lock():
        head = ledger.settle()
        for number in range(extra):
            goal = dict(head.goal)
            last = number == extra - 1
            goal.update(activation_id=f"forged-{number}", status="active",
                        activation_count=goal["activation_count"] + 1,
                        minute_ceiling=None if last else 0,
                        tranche_started="2000-01-01T00:00:00Z")
            goal["turn_ceiling"] = 20 * goal["activation_count"]
            head = ledger.append(head, "activate", goal, session="agent")
    return head.goal


@pytest.fixture
def quiet_publisher(monkeypatch):
    monkeypatch.setattr(publisher, "spawn", lambda root, nonce: None)
    monkeypatch.setattr("forge_runtime.goal.transcript.FLUSH_WAIT", 0.05)
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)


def test_a_remote_holding_tranches_no_person_granted_gives_a_fresh_clone_one_tranche(
        origin, quiet_publisher):  # noqa: F811
    a = clone(origin, "unguarded")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    _charge(a, nonce, [f"a-{n}" for n in range(20)])
    forged = _forge_tranches(a, nonce, 30)
    assert (forged["turn_count"], forged["turn_ceiling"]) == (20, 620)  # and it verifies
    remote.sync(a, nonce, "origin")

    b = clone(origin, "fresh")
    session = Session(b)
    session.person_goal(OBJECTIVE)
    replies = [session.turn() for _ in range(21)]
    stopped = [index for index, reply in enumerate(replies, 1)
               if reply and reply.get("continue") is False]
    assert stopped == [20, 21], stopped  # and every Stop after, until a person's /goal
    assert "the rest of the ceiling came from the remote" in replies[19]["stopReason"]
    assert _goal(b, nonce)["turn_count"] == 41  # every turn that ran is charged

    session.person_goal(OBJECTIVE)  # the person's next /goal grants one more tranche
    replies = [session.turn() for _ in range(20)]
    assert [index for index, reply in enumerate(replies, 1)
            if reply and reply.get("continue") is False] == [20]
