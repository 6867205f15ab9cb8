"""A ledger deleted, relocated (`.git/commondir`) or rolled back by the agent itself, with
forge's guard switched off, is caught at the next Stop and at the next /goal: the goal
witness outside the work tree sees it from its effects, not from the commands that ran."""

from __future__ import annotations

import pytest
from goal_support import goal_in_state
from session_support import plugin_with_hooks

pytestmark = pytest.mark.host

OBJECTIVE = "the file never.txt exists"

# Each tampering is the agent's Bash on its second turn; `backup` runs on its first.
TAMPER = {
    "deleted": "rm -rf .git/forge-goals",
    "relocated": 'mkdir -p ../elsewhere && echo "$(cd .. && pwd)/elsewhere" > .git/commondir',
    "rolled back": "rm -rf .git/forge-goals && cp -a ../backup .git/forge-goals",
}


def _bash(command: str) -> dict:
    """A Bash call running `command` from base64: the host refuses a command that names a
    path in `.git/` ("a sensitive file"), so the agent hides it, as a hostile one would."""
    import base64

    encoded = base64.b64encode(command.encode()).decode()
    return {"tool_calls": [{"name": "Bash", "input": {
        "command": f"echo {encoded} | base64 -d | sh"}}]}


def _script(tamper: str) -> dict:
    return {"rules": [
        {"name": "evaluator says not yet", "when": {"goal_evaluator": True},
         "reply": {"verdict": {"ok": False, "reason": "GOAL-NOT-MET: keep working"}}},
        {"name": "model reports", "when": {"last_is_tool_result": True},
         "reply": {"text": "Done that."}},
        {"name": "model tampers", "when": {"conversation_contains": "GOAL-NOT-MET"},
         "times": 1, "reply": _bash(tamper)},
        {"name": "model backs up", "times": 1,
         "reply": _bash("cp -a .git/forge-goals ../backup")},
        {"name": "model works", "reply": {"text": "Working on it."}},
    ]}


def _guard_off(config: dict) -> None:
    del config["hooks"]["PreToolUse"]


def _refusals(session) -> list[str]:
    """The Stop refusals' hints, without the checkpoint line that precedes a tamper hint."""
    return ["\n".join(line for line in hook.reply["stopReason"].splitlines()
                      if not line.startswith("Checkpoint: "))
            for hook in session.hooks_for("Stop") if hook.reply and "stopReason" in hook.reply]


@pytest.mark.parametrize("damage", list(TAMPER))
def test_a_lost_ledger_is_caught_at_the_next_stop_and_the_next_goal(claude_host, project,
                                                                    tmp_path, damage):
    host = claude_host(_script(TAMPER[damage]),
                       plugin_dirs=[plugin_with_hooks(tmp_path, _guard_off)])
    tools = ["--allowedTools", "Bash"]
    first = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=60, args=tools)

    assert first.hooks_for("PreToolUse") == []  # the guard is off: nothing stopped the agent
    rules = [request["rule"] for request in first.requests
             if request["rule"] != "evaluator says not yet"]
    assert rules[:4] == ["model backs up", "model reports", "model tampers", "model reports"]
    assert first.terminal_reason == "stop_hook_prevented", first.result
    stops = first.hooks_for("Stop")
    assert len(stops) == 2 and stops[0].reply is None  # caught at the very next Stop
    reason = _refusals(first)[0].splitlines()
    assert reason[0].startswith("Error: FORGE_GOAL_LEDGER_TAMPERED: "), reason
    assert reason[1] == ("Fix: rm " + str(project / ".git" / "commondir")
                         if damage == "relocated" else "Fix: forge goal verify")

    again = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=60)
    assert again.terminal_reason == "stop_hook_prevented", again.result
    reason = _refusals(again)[0].splitlines()
    assert reason[0].startswith("Error: FORGE_GOAL_LEDGER_TAMPERED: "), reason
    assert "witness" in reason[0]
    assert goal_in_state(project)["turn_count"] == 1  # no goal started again from zero


# -- the ledger pointed elsewhere from outside the agent, once a goal spent its budget -------

NO_BLOCK_CAP = {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"}


def _repository(tmp_path):
    """A person's repository and a linked work tree of it (`git worktree add`), both opted
    out of the sandbox as the guard-only posture is: (main, linked)."""
    from goal_support import opt_out_of_sandbox

    from forge_runtime.hostkit.projects import add_worktree, init_git_project

    main = init_git_project(tmp_path / "main")
    linked = add_worktree(main, tmp_path / "linked")
    for root in (main, linked):
        opt_out_of_sandbox(root)
    return main, linked


def _commondir_rewritten(main, linked, tmp_path):
    (tmp_path / "elsewhere").mkdir()
    (main / ".git" / "commondir").write_text(f"{tmp_path / 'elsewhere'}\n")
    return main, "FORGE_GOAL_LEDGER_TAMPERED", f"Fix: rm {main / '.git' / 'commondir'}"


def _dot_git_file_edited(main, linked, tmp_path):
    (tmp_path / "fake-gitdir").mkdir()
    (linked / ".git").write_text(f"gitdir: {tmp_path / 'fake-gitdir'}\n")
    return linked, "FORGE_GOAL_LEDGER_TAMPERED", (
        f"Fix: git --git-dir={main / '.git'} worktree repair {linked}")


def _project_copied(main, linked, tmp_path):
    import shutil

    shutil.copytree(main, tmp_path / "copy", symlinks=True)
    return tmp_path / "copy", "FORGE_GOAL_LEDGER_MOVED", "Fix: forge goal adopt"


OUTSIDE = {"commondir rewritten": _commondir_rewritten,
           "a linked work tree's .git file edited": _dot_git_file_edited,
           "the project copied": _project_copied}


@pytest.mark.parametrize("damage", list(OUTSIDE))
def test_a_ledger_pointed_elsewhere_after_its_budget_ends_the_next_goal(claude_host, tmp_path,
                                                                        damage):
    """The finding: a goal spends its 20 turns, then (outside the agent) forge is pointed at
    another ledger and state.md removed; the next /goal must not run 20 more turns."""
    from session_support import NEVER_MET, model_turns, stop_reasons

    main, linked = _repository(tmp_path)
    where = linked if ".git file" in damage else main
    host = claude_host(NEVER_MET)
    spent = host.run(f"/goal {OBJECTIVE}", cwd=where, timeout=90, env=NO_BLOCK_CAP)
    assert model_turns(spent) == 20 and "20 of 20 turns" in stop_reasons(spent)[0]
    (where / ".forge" / "local" / "state.md").unlink()
    where, code, fix = OUTSIDE[damage](main, linked, tmp_path)

    again = host.run(f"/goal {OBJECTIVE}", cwd=where, timeout=90, env=NO_BLOCK_CAP)
    assert again.terminal_reason == "stop_hook_prevented", again.result
    assert model_turns(again) == 1  # stopped at its first Stop, not 20 turns later
    reason = _refusals(again)[0].splitlines()
    assert reason[0].startswith(f"Error: {code}: "), reason
    assert reason[1] == fix, reason


def test_git_dir_in_the_hooks_environment_does_not_move_the_ledger(claude_host, tmp_path):
    """GIT_DIR and GIT_COMMON_DIR set for the session (and so for forge's hooks) pointing at
    an empty directory: forge keeps the ledger, so the next /goal is the spent goal's next
    tranche (40 of 40), never a fresh 20."""
    from session_support import NEVER_MET, model_turns, stop_reasons

    main, _ = _repository(tmp_path)
    host = claude_host(NEVER_MET)
    host.run(f"/goal {OBJECTIVE}", cwd=main, timeout=90, env=NO_BLOCK_CAP)
    (main / ".forge" / "local" / "state.md").unlink()
    (tmp_path / "elsewhere").mkdir()
    elsewhere = str(tmp_path / "elsewhere")
    again = host.run(f"/goal {OBJECTIVE}", cwd=main, timeout=90,
                     env={**NO_BLOCK_CAP, "GIT_DIR": elsewhere, "GIT_COMMON_DIR": elsewhere})
    assert model_turns(again) == 20
    assert "40 of 40 turns" in stop_reasons(again)[0]
    assert goal_in_state(main)["activation_count"] == 2


GUARD_SCRIPT = {"rules": [
    {"name": "model reports", "when": {"last_is_tool_result": True},
     "reply": {"text": "MOVES-TRIED"}},
    {"name": "model points forge elsewhere", "reply": {"tool_calls": [
        {"name": "Bash", "input": {"command": "rm -rf .git/forge-goals"}},
        {"name": "Bash", "input": {"command": "echo ../.. > .git/commondir"}},
        {"name": "Bash", "input": {"command": "echo 'gitdir: /tmp/x' > ../linked/.git"}},
        {"name": "Bash", "input": {"command": "cp -a . ../copy && rm -rf .git/forge-goals"}},
    ]}},
]}


def test_the_opted_out_guard_refuses_the_moves(claude_host, tmp_path):
    """The guard, the only layer of the opted-out posture, with `.git/commondir` already
    pointing elsewhere (done outside the agent): it protects the ledger forge keeps, the
    commondir file, another work tree's .git file."""
    import json

    main, linked = _repository(tmp_path)
    ledger = main / ".git" / "forge-goals" / "n1" / "records" / "00000001.json"
    ledger.parent.mkdir(parents=True)
    ledger.write_text('{"seq": 1}\n')
    (tmp_path / "elsewhere").mkdir()
    (main / ".git" / "commondir").write_text(f"{tmp_path / 'elsewhere'}\n")
    host = claude_host(GUARD_SCRIPT)
    session = host.run("tidy up", cwd=main, timeout=60, args=["--allowedTools", "Bash"])

    denied = [json.loads(c.stdout)["hookSpecificOutput"]["permissionDecisionReason"]
              for c in session.hooks_for("PreToolUse") if c.stdout.strip()]
    assert len(denied) == 4, denied
    assert all(reason.startswith("Error: forge guard: Bash ") for reason in denied), denied
    assert ledger.read_text() == '{"seq": 1}\n'
    assert (main / ".git" / "commondir").read_text() == f"{tmp_path / 'elsewhere'}\n"
    assert (linked / ".git").read_text().startswith(f"gitdir: {main / '.git' / 'worktrees'}")
    assert not (tmp_path / "copy").exists()
