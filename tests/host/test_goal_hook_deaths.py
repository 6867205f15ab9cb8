"""A Stop hook that dies never gives a free turn, against the real Claude Code.

forge's hooks run through a FORGE_PYTHON wrapper that, on Stops drawn at random (seeded),
SIGKILLs the hook at a random instant of its run or makes it hang past its timeout (the
host kills it then). The host goes on either way: Stop hooks have no `onFailure`. The next
Stop that runs charges every turn the transcript shows, so the session still ends at its
ceiling, give or take the one turn whose Stop is the last to run.
"""

from __future__ import annotations

import random

import pytest
from goal_support import NEVER_MET, goal_in_state, model_turns, plugin_with_hooks

from forge_runtime.goal.ledger import Ledger
from forge_runtime.project import find_project

pytestmark = pytest.mark.host

OBJECTIVE = "the file never.txt exists"
STOP_TIMEOUT = 2  # seconds: the test plugin's Stop hook timeout, so a hang costs little

# Each Stop of the session reads its line of the plan: `run`, `kill <seconds>` (SIGKILL after
# that long) or `hang` (sleep past the timeout before forge even starts).
_WRAPPER = """#!/bin/sh
real="{real}"
case "$*" in *Stop) ;; *) exec "$real" "$@" ;; esac
count=$(( $(cat "{counter}" 2>/dev/null || echo 0) + 1 ))
echo "$count" > "{counter}"
action=$(sed -n "${{count}}p" "{plan}")
case "$action" in
  hang) sleep {hang}; exec "$real" "$@" ;;
  kill*) exec 3<&0; "$real" "$@" 0<&3 & hook=$!; sleep "${{action#kill }}"; kill -9 "$hook";
         exit 137 ;;
  *) exec "$real" "$@" ;;
esac
"""


def _short_stop_timeout(config: dict) -> None:
    for group in config["hooks"]["Stop"]:
        for hook in group["hooks"]:
            hook["timeout"] = STOP_TIMEOUT


def _plan(seed: int) -> list[str]:
    """Kill 9 of the first 20 Stops (2 by a hang past the timeout), at random instants."""
    rng = random.Random(seed)
    doomed = rng.sample(range(1, 21), 9)
    hangs = set(doomed[:2])
    return ["hang" if stop in hangs else f"kill {rng.uniform(0.0, 0.3):.3f}"
            if stop in doomed else "run" for stop in range(1, 41)]


@pytest.mark.parametrize("seed", [20261201, 4], ids=["ceiling-stop-killed", "first-stop-killed"])
def test_stop_hooks_killed_on_random_turns_still_end_the_session_at_its_ceiling(
        claude_host, project, tmp_path, seed):
    host = claude_host(NEVER_MET, plugin_dirs=[plugin_with_hooks(tmp_path, _short_stop_timeout)])
    plan = _plan(seed)
    (tmp_path / "plan").write_text("\n".join(plan) + "\n")
    wrapper = tmp_path / "killing-python"
    wrapper.write_text(_WRAPPER.format(real=host.workdir / "forge-python",
                                       counter=tmp_path / "counter", plan=tmp_path / "plan",
                                       hang=STOP_TIMEOUT + 3))
    wrapper.chmod(0o755)
    session = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=90,
                       env={"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100",
                            "FORGE_PYTHON": str(wrapper)})

    assert session.terminal_reason == "stop_hook_prevented", session.result
    stops = int((tmp_path / "counter").read_text())
    worked = model_turns(session)
    assert worked == stops  # one Stop per turn, whether or not forge's hook survived it
    assert worked in (20, 21), plan[:worked]
    # the session ended at the first Stop whose hook ran to the end: one planned to run, or
    # one whose kill came after forge had already answered (a Stop takes ~50 ms); a hang
    # never reaches forge
    ended = [hook for hook in session.hooks_for("Stop")
             if hook.reply and hook.reply.get("continue") is False]
    assert len(ended) == 1 and plan[worked - 1] != "hang", plan[:worked]
    goal = goal_in_state(project)
    ledger = Ledger(find_project(project).ledger_root, goal["nonce"])
    assert ledger.verified()["turn_count"] == 20 and goal["status"] == "exhausted"
    records = ledger.history()
    turns = [entry["uuid"] for entry in session.transcript() if entry.get("type") ==
             "assistant" and (entry.get("message") or {}).get("stop_reason") == "end_turn"]
    assert len(turns) == worked
    assert [record["turn"] for record in records if record["kind"] == "charge"] == turns[:20]
    # the turn past the ceiling is owed, unless its own entry had not landed in the transcript
    # when its Stop (the last to run) read it: the "give or take that one turn"
    assert records[-1]["kind"] == "exhaust"
    assert records[-1].get("owed", []) in (turns[20:], [])
    late = [record["turn"] for record in records if record.get("late")]
    hung = [turn for turn, action in zip(turns, plan[:worked], strict=True) if action == "hang"]
    assert set(hung) <= set(late)  # a hook that never ran charged nothing itself
    reason = [hook.reply["stopReason"] for hook in session.hooks_for("Stop")
              if hook.reply and "stopReason" in hook.reply]
    assert len(reason) == 1 and reason[0].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: ")
    assert f"{len(late)} of this tranche's turns were charged late" in reason[0]
