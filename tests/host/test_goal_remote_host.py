"""The goal's budget follows it to a fresh clone, in the real Claude Code.

A person's /goal runs its 20 turns in one clone, whose hooks publish the ledger on the
shared remote in the background (at activation, every 5 charges, at exhaustion and at the
session's end). A fresh clone of that remote then gets the same /goal: forge takes in the
remote's count, so the person's /goal adds the second tranche instead of starting again,
and the session stops at 40 of 40, exactly where it would in the first clone.
"""

from __future__ import annotations

import subprocess
import time
from pathlib import Path

import pytest
from goal_support import goal_in_state
from session_support import NEVER_MET, model_turns

pytestmark = pytest.mark.host

OBJECTIVE = "the file never.txt exists"
NO_BLOCK_CAP = {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"}
RULES = "goal: {require_sandbox: false, remote: origin}\n"


def _git(*args, cwd):
    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def _remote_turns(origin: Path, nonce: str) -> int | None:
    """The turn count of the goal's snapshot on the remote, or None while there is none."""
    import json

    ref = f"refs/forge/goals/{nonce}"
    if not _git("for-each-ref", ref, cwd=origin).strip():
        return None
    return json.loads(_git("log", "-1", "--format=%B", ref, cwd=origin))["turn_count"]


def _stop_reasons(session) -> list[str]:
    return [hook.reply["stopReason"] for hook in session.hooks_for("Stop")
            if hook.reply and "stopReason" in hook.reply]


def test_a_fresh_clone_of_the_remote_stops_the_goal_at_the_same_ceiling(claude_host, project,
                                                                         tmp_path):
    origin = tmp_path / "shared.git"
    _git("init", "-q", "--bare", str(origin), cwd=tmp_path)
    _git("remote", "add", "origin", str(origin), cwd=project)
    _git("push", "-q", "origin", "HEAD:main", cwd=project)
    (project / ".forge" / "guard.yaml").write_text(RULES)
    host = claude_host(NEVER_MET)

    first = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=60, env=NO_BLOCK_CAP)
    assert model_turns(first) == 20
    assert "20 of 20 turns" in _stop_reasons(first)[0]
    nonce = goal_in_state(project)["nonce"]
    deadline = time.monotonic() + 30  # the publisher runs on after the session, detached
    while _remote_turns(origin, nonce) != 20 and time.monotonic() < deadline:
        time.sleep(0.2)
    assert _remote_turns(origin, nonce) == 20

    fresh = tmp_path / "fresh-clone"
    _git("clone", "-q", str(origin), str(fresh), cwd=tmp_path)
    (fresh / ".forge").mkdir()
    (fresh / ".forge" / "guard.yaml").write_text(RULES)
    second = host.run(f"/goal {OBJECTIVE}", cwd=fresh, timeout=60, env=NO_BLOCK_CAP)
    assert model_turns(second) == 20
    reasons = _stop_reasons(second)
    assert len(reasons) == 1 and "40 of 40 turns" in reasons[0], reasons
    goal = goal_in_state(fresh)
    assert (goal["nonce"], goal["turn_count"], goal["activation_count"]) == (nonce, 40, 2)
    assert all(hook.exit_code == 0 for hook in first.hooks + second.hooks)
