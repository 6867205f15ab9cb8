"""The Codex adapter and its rollout reader, through the hook dispatcher as Codex runs it.

The rollout entries mirror what Codex CLI 0.171.0 writes
(forge_runtime/goal/hosts/codex_transcript.py;
tests/host/test_codex_goal.py checks the same flows against the real binary).
"""

from __future__ import annotations

import io
import json
import sqlite3
import uuid
from pathlib import Path

import pytest
from goal_support import goal_in_state

from forge_runtime.goal.hosts import codex_transcript
from forge_runtime.goal.store import sessions
from forge_runtime.goal.store.ledger import Ledger, goal_nonces
from forge_runtime.hooks.dispatch import run
from forge_runtime.hosts import codex
from forge_runtime.project import find_project

SCHEMA = """CREATE TABLE thread_goals (thread_id TEXT PRIMARY KEY NOT NULL, goal_id TEXT NOT NULL,
    objective TEXT NOT NULL, status TEXT NOT NULL, token_budget INTEGER,
    tokens_used INTEGER NOT NULL DEFAULT 0, time_used_seconds INTEGER NOT NULL DEFAULT 0,
    created_at_ms INTEGER NOT NULL, updated_at_ms INTEGER NOT NULL)"""


class Rollout:
    """One Codex session: a rollout under a CODEX_HOME, its goal store, and its hooks."""

    def __init__(self, project: Path, home: Path) -> None:
        self.project, self.home = project, home
        self.id = str(uuid.uuid4())
        self.path = home / "sessions" / "2026" / "12" / "01" / f"rollout-x-{self.id}.jsonl"
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self.store = home / "goals_1.sqlite"
        with sqlite3.connect(self.store) as db:
            db.execute(SCHEMA.replace("CREATE TABLE", "CREATE TABLE IF NOT EXISTS"))
        self.turn_id = None
        self.sandbox = "workspace-write"  # what Codex runs the session's turns in

    def write(self, kind: str, payload: dict) -> None:
        with self.path.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps({"timestamp": "t", "type": kind, "payload": payload}) + "\n")

    def host_says(self, text: str) -> str:
        message_id = f"msg_{uuid.uuid4().hex}"
        self.write("response_item", {
            "type": "message", "id": message_id, "role": "user",
            "content": [{"type": "input_text", "text": codex_transcript.HOST_CONTEXT
                         + f"\n{text}\n</codex_internal_context>"}],
            "internal_chat_message_metadata_passthrough": {
                "content_item_kinds": ["user.goal"],
                "content_item_metadata": [{"provenance": {"type": "harness"}}]}})
        return message_id

    def goal_updated(self, objective: str, status: str) -> None:
        self.write("event_msg", {"type": "thread_goal_updated", "threadId": self.id,
                                 "goal": {"objective": objective, "status": status}})
        with sqlite3.connect(self.store) as db:
            db.execute("INSERT OR REPLACE INTO thread_goals VALUES (?, 'g', ?, ?, NULL, 0, 0, "
                       "0, 0)", (self.id, objective, status))

    def person_goal(self, objective: str) -> None:
        self.host_says(f'User set the goal: "{objective}"\nUser set goal status: "active".')
        self.goal_updated(objective, "active")

    def turn(self, trigger: str = "goal") -> dict | None:
        self.turn_id = str(uuid.uuid4())
        self.write("event_msg", {"type": "task_started", "turn_id": self.turn_id,
                                 "turn_attribution": {"turn_trigger": trigger}})
        self.write("turn_context", {"turn_id": self.turn_id, "approval_policy": "never",
                                    "sandbox_policy": {"type": self.sandbox}})
        return self.stop()

    def stop(self) -> dict | None:
        return hook("Stop", {"session_id": self.id, "turn_id": self.turn_id,
                             "transcript_path": str(self.path), "cwd": str(self.project),
                             "hook_event_name": "Stop", "stop_hook_active": False,
                             "last_assistant_message": "Working on it."})

    def native_status(self) -> str:
        with sqlite3.connect(self.store) as db:
            return db.execute("SELECT status FROM thread_goals WHERE thread_id = ?",
                              (self.id,)).fetchone()[0]


def hook(event: str, payload: dict, host: str = "codex") -> dict | None:
    out, err = io.StringIO(), io.StringIO()
    code = run(["--host", host, event], io.BytesIO(json.dumps(payload).encode()), out, err)
    assert code == 0, err.getvalue()
    return json.loads(out.getvalue()) if out.getvalue().strip() else None


@pytest.fixture
def rollout(cli_project, tmp_path, monkeypatch) -> Rollout:
    monkeypatch.delenv("CLAUDE_PROJECT_DIR")
    return Rollout(cli_project, tmp_path / "codex-home")


def test_a_persons_goal_recorded_by_codex_activates_and_each_turn_is_charged_once(rollout):
    rollout.person_goal("ship it")
    assert rollout.turn() is None
    goal = goal_in_state(rollout.project)
    assert (goal["objective"], goal["turn_count"], goal["status"]) == ("ship it", 1, "active")
    rollout.stop()  # a repeated Stop for the same turn
    assert goal_in_state(rollout.project)["turn_count"] == 1
    rollout.turn()
    assert goal_in_state(rollout.project)["turn_count"] == 2


def test_at_the_ceiling_forge_pauses_codexs_native_goal_and_stops_the_turn(rollout):
    rollout.person_goal("ship it")
    replies = [rollout.turn() for _ in range(20)]
    assert [index for index, reply in enumerate(replies[:19]) if reply] == [5, 10, 15, 18]
    assert set(replies[5]) == {"systemMessage"}  # Codex takes no hookSpecificOutput on Stop
    assert replies[5]["systemMessage"].startswith("FORGE_GOAL_STUCK_WARNING: ")
    # nor any model context; a block would continue the same turn_id uncharged, so the
    # last-turn notice is the person's alone there
    assert set(replies[18]) == {"systemMessage"}
    assert replies[18]["systemMessage"].startswith("FORGE_GOAL_LAST_TURN: ")
    assert replies[19]["continue"] is False
    assert replies[19]["stopReason"].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: ")
    assert rollout.native_status() == "paused"
    rollout.goal_updated("ship it", "active")  # the person's /goal resume
    again = rollout.turn()
    assert again["continue"] is False and rollout.native_status() == "paused"
    assert goal_in_state(rollout.project)["turn_count"] == 20


def test_the_persons_goal_again_after_exhaustion_adds_a_tranche(rollout):
    rollout.person_goal("ship it")
    for _ in range(20):
        rollout.turn()
    rollout.host_says("User cleared the goal.")  # Codex's "Replace goal?" writes both
    rollout.person_goal("ship it")
    assert rollout.turn() is None
    goal = goal_in_state(rollout.project)
    assert (goal["turn_count"], goal["turn_ceiling"], goal["status"]) == (21, 40, "active")


def test_a_stop_hook_that_fails_for_a_bound_session_ends_its_autonomy(rollout, monkeypatch):
    from forge_runtime.hooks import goal_handlers

    rollout.person_goal("ship it")
    rollout.turn()

    def broken(event, confirm_pending=True):
        raise OSError("disk gone")

    monkeypatch.setattr(goal_handlers, "charge_stop", broken)
    reply = rollout.turn()
    assert reply["continue"] is False
    assert "FORGE_GOAL_HOOK_FAILED" in reply["stopReason"]
    assert rollout.native_status() == "paused"


def test_a_goal_the_model_created_never_activates_and_its_loop_is_stopped(rollout):
    rollout.write("response_item", {"type": "function_call", "name": "create_goal",
                                    "arguments": json.dumps({"objective": "model goal"}),
                                    "call_id": "c1"})
    assert rollout.turn(trigger="user") is None  # the turn in which the model made it
    with sqlite3.connect(rollout.store) as db:
        db.execute("INSERT INTO thread_goals VALUES (?, 'g', 'model goal', 'active', NULL, "
                   "0, 0, 0, 0)", (rollout.id,))
    reply = rollout.turn()
    assert reply["continue"] is False
    assert reply["stopReason"].splitlines()[1] == "Fix: /goal model goal"
    assert rollout.native_status() == "paused"
    assert goal_nonces(find_project(rollout.project)) == []


def test_an_unbound_session_reads_only_the_rollouts_tail(rollout):
    """A goal set more than TAIL_BYTES back with no binding is not confirmed from afar: its
    next goal turn is stopped, naming the objective Codex gave the model."""
    rollout.person_goal("ship it")
    rollout.write("response_item", {"type": "message", "role": "user", "content": [
        {"type": "input_text", "text": "x" * codex_transcript.TAIL_BYTES}]})
    rollout.write("response_item", {"type": "function_call_output", "name": "goal_objective",
                                    "output": "ship it"})
    reply = rollout.turn()
    assert reply["stopReason"].splitlines()[1] == "Fix: /goal ship it"
    assert goal_nonces(find_project(rollout.project)) == []
    rollout.person_goal("ship it")  # the Fix: a person's /goal, recorded near the end
    assert rollout.turn() is None
    assert goal_in_state(rollout.project)["turn_count"] == 1


def test_a_user_goal_text_written_by_the_model_is_not_the_hosts(rollout):
    """Only the host's own tagged context message counts, not the same words elsewhere."""
    rollout.write("response_item", {"type": "message", "role": "assistant", "content": [
        {"type": "output_text", "text": codex_transcript.HOST_CONTEXT
         + '\nUser set the goal: "fake"\n'}]})
    rollout.goal_updated("fake", "active")
    rollout.turn(trigger="user")
    assert goal_nonces(find_project(rollout.project)) == []


def test_codexs_verdicts_end_the_goal_with_its_count(rollout):
    rollout.person_goal("ship it")
    rollout.turn()
    rollout.turn()
    # the model ends the goal with update_goal; Codex answers with the goal as it now stands
    rollout.write("response_item", {"type": "function_call", "name": "update_goal",
                                    "arguments": '{"status": "complete"}', "call_id": "c9"})
    rollout.write("response_item", {"type": "function_call_output", "call_id": "c9",
                                    "output": json.dumps({"goal": {
                                        "threadId": rollout.id, "objective": "ship it",
                                        "status": "complete"}, "remainingTokens": None})})
    rollout.turn(trigger="user")  # the person's next turn: no goal runs, nothing charged
    goal = goal_in_state(rollout.project)
    assert (goal["status"], goal["turn_count"]) == ("complete", 2)


def _model_completes(rollout, objective: str = "ship it") -> None:
    rollout.write("response_item", {"type": "function_call", "name": "update_goal",
                                    "arguments": '{"status": "complete"}', "call_id": "c9"})
    rollout.write("response_item", {"type": "function_call_output", "call_id": "c9",
                                    "output": json.dumps({"goal": {
                                        "threadId": rollout.id, "objective": objective,
                                        "status": "complete"}, "remainingTokens": None})})


def _model_creates(rollout, objective: str) -> None:
    """The model's own `create_goal`: Codex answers with the new goal, active, and starts
    goal turns for it; no `user_goal` message, no person."""
    rollout.write("response_item", {"type": "function_call", "name": "create_goal",
                                    "arguments": json.dumps({"objective": objective}),
                                    "call_id": "c10"})
    rollout.write("response_item", {"type": "function_call_output", "call_id": "c10",
                                    "output": json.dumps({"goal": {
                                        "threadId": rollout.id, "objective": objective,
                                        "status": "active"}, "remainingTokens": None})})
    with sqlite3.connect(rollout.store) as db:
        db.execute("INSERT OR REPLACE INTO thread_goals VALUES (?, 'g', ?, 'active', NULL, "
                   "0, 0, 0, 0)", (rollout.id, objective))


def test_a_goal_the_model_creates_after_the_bound_goal_ended_is_stopped_and_recorded(rollout):
    """A model's `create_goal` in a session bound to an ended goal runs no turn uncharged,
    though `stop_hook_active` never comes from Codex's goal loop and the unbudgeted check
    is not the one that catches it. Its turns are the host's, after
    the goal ended: each is recorded over budget and stopped, and the loop paused. (A
    goal for another objective is stopped as unbudgeted at once: not the bound one.)"""
    rollout.person_goal("ship it")
    rollout.turn()
    _model_completes(rollout)
    _model_creates(rollout, "ship it")
    assert rollout.turn(trigger="user") is None  # the person's turn in which it happened
    reply = rollout.turn()  # Codex's goal loop, for the model's goal
    assert reply is not None and reply["continue"] is False
    assert rollout.native_status() == "paused"
    history = Ledger(find_project(rollout.project).ledger_root,
                     goal_in_state(rollout.project)["nonce"]).history()
    assert [record["kind"] for record in history][-1] == "overrun"
    assert history[-1]["turn"] == rollout.turn_id
    goal = goal_in_state(rollout.project)
    assert (goal["status"], goal["turn_count"]) == ("complete", 1)


def test_goal_clear_on_codex_cancels_the_goal_with_its_count(rollout):
    rollout.person_goal("ship it")
    rollout.turn()
    rollout.turn()
    rollout.host_says("User cleared the goal.")  # `/goal clear` fires no hook
    assert rollout.turn(trigger="user") is None  # the person's next prompt: not charged
    goal = goal_in_state(rollout.project)
    assert (goal["status"], goal["turn_count"]) == ("cancelled", 2)


def test_a_hook_refuses_the_other_hosts_input():
    codex_event = {"session_id": "s", "turn_id": "t", "hook_event_name": "PreToolUse",
                   "tool_name": "Bash", "tool_input": {"command": "ls"}}
    denied = hook("PreToolUse", codex_event, host="claude")
    assert denied["hookSpecificOutput"]["permissionDecision"] == "deny"
    claude_event = {k: v for k, v in codex_event.items() if k != "turn_id"}
    denied = hook("PreToolUse", claude_event, host="codex")
    assert "wired for Codex" in denied["hookSpecificOutput"]["permissionDecisionReason"]


def test_an_unknown_host_is_an_error_with_a_fix():
    out, err = io.StringIO(), io.StringIO()
    assert run(["--host", "vim", "Stop"], io.BytesIO(b"{}"), out, err) == 1
    assert err.getvalue().startswith("Error: forge launcher hook: --host is 'vim'")
    assert "\nFix: forge doctor" in err.getvalue()


def test_codex_home_comes_from_the_rollout_path(tmp_path):
    path = tmp_path / "h" / "sessions" / "2026" / "12" / "01" / "rollout-a.jsonl"
    assert codex.codex_home(str(path)) == tmp_path / "h"


def test_the_sandbox_posture_names_codexs_mode_and_what_it_protects(tmp_path):
    project, home = tmp_path / "p", tmp_path / "home"
    (project / ".codex").mkdir(parents=True)
    home.mkdir()
    default = codex.codex_sandbox_posture(project, home)
    assert default["ledger_kernel_protected"] is True
    (home / "config.toml").write_text('sandbox_mode = "danger-full-access"\n')
    full = codex.codex_sandbox_posture(project, home)
    assert (full["sandbox_mode"], full["ledger_kernel_protected"]) == \
        ("danger-full-access", False)
    (project / ".codex" / "config.toml").write_text('sandbox_mode = "workspace-write"\n')
    assert codex.codex_sandbox_posture(project, home)["source"].endswith(".codex/config.toml")


def test_a_persons_goal_in_codexs_full_access_is_refused_and_its_loop_paused(rollout):
    """`--sandbox danger-full-access` (or the bypass flag) is in no config file: the rollout's
    turn_context says what the session runs in."""
    rollout.sandbox = "danger-full-access"
    rollout.person_goal("ship it")
    reply = rollout.turn()
    assert reply["continue"] is False
    lines = reply["stopReason"].splitlines()
    assert lines[0].startswith("Error: FORGE_GOAL_UNSANDBOXED: a /goal runs only inside the "
                               "host's kernel sandbox, and Codex's sandbox_mode is "
                               "danger-full-access (this session's rollout)")
    assert "Fix: codex --sandbox workspace-write" in lines
    assert "Or: mkdir -p .forge && echo 'goal: {require_sandbox: false}' >> .forge/guard.yaml" \
        in lines
    assert rollout.native_status() == "paused"
    assert goal_nonces(find_project(rollout.project)) == []


def test_a_line_appended_to_the_rollout_cannot_make_a_full_access_session_sandboxed(rollout):
    rollout.sandbox = "danger-full-access"
    rollout.person_goal("ship it")
    rollout.write("turn_context", {"sandbox_policy": {"type": "workspace-write"}})
    assert rollout.turn()["continue"] is False


def test_an_opted_out_goal_in_full_access_runs_and_is_recorded_unsandboxed(rollout):
    from forge_runtime.goal.store.ledger import Ledger

    (rollout.project / ".forge").mkdir()
    (rollout.project / ".forge" / "guard.yaml").write_text("goal: {require_sandbox: false}\n")
    rollout.sandbox = "danger-full-access"
    rollout.person_goal("ship it")
    assert rollout.turn() is None
    goal = goal_in_state(rollout.project)
    head = Ledger(find_project(rollout.project).ledger_root, goal["nonce"]).head()
    assert head.goal["sandbox"] == "unsandboxed"


def test_a_goal_in_codexs_workspace_sandbox_is_recorded_sandboxed(rollout):
    from forge_runtime.goal.store.ledger import Ledger

    rollout.person_goal("ship it")
    rollout.turn()
    goal = goal_in_state(rollout.project)
    head = Ledger(find_project(rollout.project).ledger_root, goal["nonce"]).head()
    assert head.goal["sandbox"] == "sandboxed"


def _tool_call(rollout: Rollout, command: str) -> dict | None:
    """A PreToolUse of the session's current turn, as Codex sends it for exec_command."""
    return hook("PreToolUse", {"session_id": rollout.id, "turn_id": rollout.turn_id,
                               "transcript_path": str(rollout.path), "cwd": str(rollout.project),
                               "hook_event_name": "PreToolUse", "tool_name": "Bash",
                               "tool_input": {"command": command}})


def _start_turn(rollout: Rollout) -> None:
    rollout.turn_id = str(uuid.uuid4())
    rollout.write("turn_context", {"turn_id": rollout.turn_id, "approval_policy": "never",
                                   "sandbox_policy": {"type": rollout.sandbox}})


def test_a_native_goal_outside_codexs_sandbox_has_its_tool_calls_refused_before_any_stop(
        rollout):
    """No hook fires at a TUI /goal, and a first turn's `setsid -f` killer would meet no
    Stop of forge's alive: in danger-full-access the goal's tool calls are refused first."""
    rollout.sandbox = "danger-full-access"
    rollout.person_goal("ship it")
    _start_turn(rollout)
    denied = _tool_call(rollout, "setsid -f python3 k.py")
    decision = denied["hookSpecificOutput"]
    assert decision["permissionDecision"] == "deny"
    assert decision["permissionDecisionReason"].startswith("Error: FORGE_GOAL_UNSANDBOXED")
    assert "Fix: codex --sandbox workspace-write" in decision["permissionDecisionReason"]


@pytest.mark.parametrize("case", ["workspace sandbox", "no native goal", "opted out"])
def test_tool_calls_run_where_codex_sandboxes_or_no_goal_runs_or_the_project_opts_out(
        rollout, case):
    if case != "workspace sandbox":
        rollout.sandbox = "danger-full-access"
    if case == "opted out":
        (rollout.project / ".forge").mkdir()
        (rollout.project / ".forge" / "guard.yaml").write_text(
            "goal: {require_sandbox: false}\n")
    if case != "no native goal":
        rollout.person_goal("ship it")
    _start_turn(rollout)
    assert _tool_call(rollout, "ls") is None


def test_a_goal_codexs_model_completes_while_its_gate_fails_goes_on_with_every_block_charged(
        rollout):
    (rollout.project / ".forge").mkdir(exist_ok=True)
    (rollout.project / ".forge" / "gates.yaml").write_text(
        "gates:\n  unit-tests:\n    command: test -f done.txt\n    boundary: ['*.txt']\n")
    rollout.person_goal("ship it")
    rollout.turn_id = str(uuid.uuid4())
    rollout.write("event_msg", {"type": "task_started", "turn_id": rollout.turn_id})
    rollout.write("response_item", {"type": "function_call_output", "call_id": "c1",
                                    "output": json.dumps({"goal": {
                                        "threadId": rollout.id, "objective": "ship it",
                                        "status": "complete"}})})
    first = rollout.stop()  # the model's update_goal: Codex's loop is over, the gate fails
    assert set(first) == {"systemMessage", "decision", "reason"}
    assert first["decision"] == "block" and first["reason"] == first["systemMessage"]
    assert first["reason"].startswith("FORGE_GATES_NOT_FRESH: goal ")
    assert goal_in_state(rollout.project)["turn_count"] == 1

    def continued() -> dict | None:  # what Codex writes for a block, in the same turn
        rollout.write("response_item", {
            "type": "message", "id": f"msg_{uuid.uuid4().hex}", "role": "user",
            "content": [{"type": "input_text", "text": '<hook_prompt hook_run_id="stop:3">'
                         f'{first["reason"]}</hook_prompt>'}]})
        return rollout.stop()

    assert continued()["decision"] == "block"
    assert goal_in_state(rollout.project)["turn_count"] == 2  # the continuation: charged
    assert rollout.stop() is None  # repeated with no new continuation: never continued
    (rollout.project / "done.txt").write_text("done\n")
    done = continued()
    assert set(done) == {"systemMessage"} and done["systemMessage"].startswith(
        "FORGE_GOAL_VERIFIED: goal ")
    goal = goal_in_state(rollout.project)
    assert (goal["status"], goal["turn_count"]) == ("complete", 3)


def test_a_wedged_codex_stop_ends_autonomy_in_codexs_terms(rollout, monkeypatch):
    """The watchdog's answer (hooks/dispatch.py) goes through the adapter too: the native
    goal is paused, as for any Stop that ends a goal's autonomy on Codex."""
    import subprocess
    import sys

    rollout.person_goal("ship it")
    assert rollout.turn() is None
    nonce = goal_in_state(rollout.project)["nonce"]
    lock = find_project(rollout.project).ledger_root / nonce / "lock"
    holder = subprocess.Popen(
        [sys.executable, "-c", "import fcntl, os, sys, time; fd = os.open(sys.argv[1], "
         "os.O_RDWR); fcntl.flock(fd, fcntl.LOCK_EX); print('held', flush=True); "
         "time.sleep(60)", str(lock)], stdout=subprocess.PIPE, text=True)
    try:
        assert holder.stdout.readline() == "held\n"
        monkeypatch.setenv("FORGE_HOOK_WATCHDOG", "1")
        reply = rollout.turn()
    finally:
        holder.kill()
        holder.wait()
    assert reply["continue"] is False
    assert "FORGE_GOAL_WEDGED: forge's Stop hook did not finish within 1 s" in reply["stopReason"]
    assert rollout.native_status() == "paused"


# -- the first turn of a person's /goal, before its first Stop ------------------------------

def _spend_tokens(rollout: Rollout, tokens: int, total: int) -> None:
    rollout.write("event_msg", {"type": "token_count", "info": {
        "last_token_usage": {"input_tokens": tokens, "output_tokens": 0},
        "total_token_usage": {"input_tokens": total}}})


def _bash_call(rollout: Rollout) -> dict | None:
    return hook("PreToolUse", {"session_id": rollout.id, "turn_id": rollout.turn_id or "t1",
                               "transcript_path": str(rollout.path), "cwd": str(rollout.project),
                               "hook_event_name": "PreToolUse", "tool_name": "Bash",
                               "tool_input": {"command": "echo step"}})


def test_a_persons_codex_goal_holds_its_first_turn_to_the_token_ceiling(rollout):
    (rollout.project / ".forge").mkdir(exist_ok=True)
    (rollout.project / ".forge" / "guard.yaml").write_text(
        "goal: {tranche: {tokens: 1000}}\n")
    _spend_tokens(rollout, 5000, 5000)  # before the /goal: not its tokens
    rollout.person_goal("ship it")
    _spend_tokens(rollout, 600, 5600)
    assert _bash_call(rollout) is None
    _spend_tokens(rollout, 400, 6000)
    reason = _bash_call(rollout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("FORGE_GOAL_BUDGET_EXHAUSTED: the first turn of /goal ship it "
                             "used 1k of 1k tokens (the token ceiling)"), reason
    reply = rollout.turn(trigger="user")  # its Stop activates and charges the whole turn
    assert reply["continue"] is False and rollout.native_status() == "paused"
    goal = goal_in_state(rollout.project)
    assert (goal["turn_count"], goal["status"]) == (1, "exhausted")


def test_a_model_created_codex_goal_notes_no_first_turn(rollout):
    rollout.write("response_item", {"type": "function_call", "name": "create_goal",
                                    "arguments": json.dumps({"objective": "model goal"}),
                                    "call_id": "c1"})
    with sqlite3.connect(rollout.store) as db:
        db.execute("INSERT INTO thread_goals VALUES (?, 'g', 'model goal', 'active', NULL, "
                   "0, 0, 0, 0)", (rollout.id,))
    assert _bash_call(rollout) is None
    project = find_project(rollout.project)
    assert sessions.involvement(project.ledger_root, rollout.id) == set()


def test_a_codex_session_an_agent_started_is_not_a_person(rollout, monkeypatch):
    from forge_runtime.goal.hosts import nesting

    monkeypatch.setattr(nesting, "started_by_agent", lambda: "measured")
    rollout.person_goal("ship it")
    reason = _bash_call(rollout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("Error: FORGE_GOAL_NOT_A_PERSON: ")
    reply = rollout.turn(trigger="user")
    assert reply["continue"] is False and "FORGE_GOAL_NOT_A_PERSON" in reply["stopReason"]
    assert rollout.native_status() == "paused"
    assert goal_nonces(find_project(rollout.project)) == []


def _week_at(rollout: Rollout, percent: float) -> None:
    import time

    week = {"used_percent": percent, "window_minutes": 10080,
            "resets_at": int(time.time()) + 86400}
    rollout.write("event_msg", {"type": "token_count", "info": None,
                                "rate_limits": {"limit_id": "codex", "primary": None,
                                                "secondary": week}})


def test_a_codex_goals_own_week_starts_where_its_persons_goal_found_it(rollout):
    """Codex fires no hook at a TUI `/goal`: its first tool call notes the windows the
    rollout shows then (40% of the week, the person's earlier work), so the goal's own
    use counts from there, and its first turn stops at 3 points of its own."""
    (rollout.project / ".forge").mkdir(exist_ok=True)
    (rollout.project / ".forge" / "guard.yaml").write_text(
        "goal: {plan: {seven_day_spend: 3}}\n")
    _week_at(rollout, 40)  # before the /goal: not the goal's
    rollout.person_goal("ship it")
    assert _bash_call(rollout) is None
    pending = sessions.read_pending(find_project(rollout.project).ledger_root, rollout.id)
    assert pending["limits"]["plan_seen"]["codex"]["seven_day"]["used"] == 4000
    _week_at(rollout, 42)
    assert _bash_call(rollout) is None
    _week_at(rollout, 43)
    reason = _bash_call(rollout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith("FORGE_GOAL_BUDGET_EXHAUSTED: the first turn of /goal ship it "
                             "reached 3% of the week that the goal itself used"), reason
    reply = rollout.turn(trigger="user")
    assert reply["continue"] is False and rollout.native_status() == "paused"
    goal = Ledger(find_project(rollout.project).ledger_root,
                  goal_in_state(rollout.project)["nonce"]).current().goal
    assert (goal["plan_week"], goal["status"]) == (300, "exhausted")


def _five_hours_at(rollout: Rollout, percent: float) -> None:
    import time

    window = {"used_percent": percent, "window_minutes": 300,
              "resets_at": int(time.time()) + 3600}
    rollout.write("event_msg", {"type": "token_count", "info": None,
                                "rate_limits": {"limit_id": "codex", "primary": window,
                                                "secondary": None}})


def test_a_figure_forge_read_holds_though_the_agent_rewrites_the_rollout(rollout):
    """Where the person opted out of the sandbox the rollout is the agent's to rewrite: the
    tool call that found 85% is denied, the agent rewrites every figure to 0% before the
    Stop, and the Stop still ends the goal at its 5-hour ceiling (forge keeps what it read,
    mirrored in the witness); a copy of that the agent edits fails closed."""
    (rollout.project / ".forge").mkdir(exist_ok=True)
    (rollout.project / ".forge" / "guard.yaml").write_text("goal: {plan: {five_hour: 80}}\n")
    rollout.person_goal("ship it")
    rollout.turn_id = "t1"
    _five_hours_at(rollout, 70)
    assert _bash_call(rollout) is None
    _five_hours_at(rollout, 85)
    reason = _bash_call(rollout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "85% of the plan's 5-hour window" in reason, reason
    text = rollout.path.read_text()
    rollout.path.write_text(text.replace('"used_percent": 85', '"used_percent": 0')
                            .replace('"used_percent": 70', '"used_percent": 0'))
    assert codex_transcript.plan_reading(rollout.path)["primary"]["used_percent"] == 0
    reply = rollout.turn(trigger="user")
    assert reply["continue"] is False and "5-hour window" in reply["stopReason"], reply
    goal = goal_in_state(rollout.project)
    assert goal["status"] == "exhausted"

    root = find_project(rollout.project).ledger_root
    stored = sessions.session_file(root, rollout.id, ".plan.json")
    Path(stored).write_text(Path(stored).read_text().replace("8500", "100"))
    rollout.person_goal("ship it")
    rollout.turn_id = "t3"
    reason = _bash_call(rollout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "FORGE_GOAL_LEDGER_TAMPERED" in reason, reason


def test_after_the_5_hour_window_resets_the_persons_next_goal_runs(rollout):
    """The goal stopped at 85% of a window that resets 2 s later: once it has reset, the
    old figure (in the rollout and kept by forge) says nothing of the new window, and the
    person's next `/goal` runs on the new window's 5%."""
    import time

    (rollout.project / ".forge").mkdir(exist_ok=True)
    (rollout.project / ".forge" / "guard.yaml").write_text("goal: {plan: {five_hour: 80}}\n")
    resets_at = int(time.time()) + 2
    window = {"used_percent": 85, "window_minutes": 300, "resets_at": resets_at}
    rollout.person_goal("ship it")
    rollout.turn_id = "t1"
    rollout.write("event_msg", {"type": "token_count", "rate_limits": {"primary": window}})
    reason = _bash_call(rollout)["hookSpecificOutput"]["permissionDecisionReason"]
    assert "reached 85% of the plan's 5-hour window" in reason, reason
    assert rollout.turn(trigger="user")["continue"] is False
    assert goal_in_state(rollout.project)["status"] == "exhausted"

    time.sleep(max(resets_at - time.time(), 0) + 0.2)
    rollout.person_goal("ship it")
    rollout.turn_id = "t2"
    assert _bash_call(rollout) is None  # no figure of the new window yet
    _five_hours_at(rollout, 5)
    assert _bash_call(rollout) is None
    assert rollout.turn(trigger="user") is None
    goal = goal_in_state(rollout.project)
    assert (goal["status"], goal["turn_count"]) == ("active", 2)


def test_a_codex_goal_with_plan_ceilings_and_no_windows_ends_with_codexs_fix(rollout):
    """An API key login: Codex's token_count entries hold `null` windows (measured), so the
    goal's first Stop ends it, and the Fix names Codex's own sign-in."""
    (rollout.project / ".forge").mkdir(exist_ok=True)
    (rollout.project / ".forge" / "guard.yaml").write_text("goal: {plan: {five_hour: 80}}\n")
    rollout.person_goal("ship it")
    rollout.write("event_msg", {"type": "token_count", "rate_limits": {
        "limit_id": "codex", "primary": None, "secondary": None}})
    reply = rollout.turn(trigger="user")
    assert reply["continue"] is False and rollout.native_status() == "paused"
    lines = reply["stopReason"].splitlines()
    assert any(line.startswith("Error: FORGE_GOAL_PLAN_UNAVAILABLE: ") and
               "the rollout's token_count events carry no rate limits" in line
               for line in lines), lines
    assert "Fix: codex login" in lines


# -- the model a Codex response is priced as ------------------------------------------------

def _turn_on(rollout: Rollout, model: str) -> None:
    """A goal turn opening, its `turn_context` naming the model (no Stop yet)."""
    rollout.turn_id = str(uuid.uuid4())
    rollout.write("event_msg", {"type": "task_started", "turn_id": rollout.turn_id,
                                "turn_attribution": {"turn_trigger": "goal"}})
    rollout.write("turn_context", {"turn_id": rollout.turn_id, "approval_policy": "never",
                                   "sandbox_policy": {"type": rollout.sandbox},
                                   "model": model})


def test_a_codex_turn_is_priced_as_its_model_at_every_tool_call_and_stop(rollout):
    """Codex names a turn's model once, in its `turn_context`; the mid-turn count reads on
    from where the call before it stopped, and a Stop a block continued reads on from its
    own last read. Each carries the model over: without it the second tool call of a
    turn would price its response as an unknown model, the dearest of OpenAI's ($150 per million
    input: $0.15 for these 1,000 tokens, not $0.002), and deny it past the $0.05 ceiling
    after $0.004 of work."""
    from forge_runtime.hostkit.codex import MODEL  # $2 / $10 per million

    (rollout.project / ".forge").mkdir(exist_ok=True)
    (rollout.project / ".forge" / "guard.yaml").write_text(
        "goal: {require_sandbox: false, tranche: {usd: 0.05}}\n")
    rollout.person_goal("ship it")
    _turn_on(rollout, MODEL)
    _spend_tokens(rollout, 1000, 1000)
    assert _tool_call(rollout, "echo one") is None  # its first turn, before any Stop
    assert rollout.stop() is None
    _turn_on(rollout, MODEL)
    for total in (2000, 3000, 4000):
        _spend_tokens(rollout, 1000, total)
        assert _tool_call(rollout, "echo step") is None
    assert rollout.stop() is None
    rollout.write("response_item", {"type": "message", "id": "msg_block", "role": "user",
                                    "content": [{"type": "input_text", "text":
                                                 "<hook_prompt hook_run_id=\"stop:1\">go on"
                                                 "</hook_prompt>"}]})
    _spend_tokens(rollout, 1000, 5000)  # a continued turn: no new turn_context
    assert rollout.stop() is None
    ledger = Ledger(find_project(rollout.project).ledger_root,
                    goal_in_state(rollout.project)["nonce"])
    charges = [record for record in ledger.history() if record["kind"] == "charge"]
    assert [list(charge["usage"]["by_model"]) for charge in charges] == [[MODEL]] * 3
    assert ledger.current().goal["picousd"] == 5 * 1000 * 2 * 10**6


@pytest.mark.parametrize("status, ended", [
    ("complete", "met"), ("blocked", "impossible"), ("budget_limited", "unknown"),
    ("archived", "unknown"), ("", "unknown")])
def test_every_status_codex_ends_its_goal_with_ends_forges_goal_named(rollout, status, ended):
    from forge_runtime.goal.store.ledger import Ledger
    from forge_runtime.project import find_project

    rollout.person_goal("ship it")
    assert rollout.turn() is None
    rollout.goal_updated("ship it", status)
    rollout.turn(trigger="user")  # the person drives on: not charged to the ended goal
    nonce = goal_in_state(rollout.project)["nonce"]
    goal = Ledger(find_project(rollout.project).ledger_root, nonce).verified()
    assert (goal["status"] != "active", goal["ended"], goal["turn_count"]) == (True, ended, 1)


@pytest.mark.parametrize("status, runs", [
    ("active", "ship it"), ("paused", None), ("usage_limited", None), ("complete", None),
    ("blocked", None), ("budget_limited", None), ("archived", "ship it")])
def test_a_status_codex_has_not_shown_forge_reads_as_a_goal_that_may_run(rollout, status, runs):
    rollout.goal_updated("ship it", status)
    assert codex_transcript.running_goal(rollout.path) == runs


def test_a_new_codex_sessions_goal_charges_the_turn_another_session_left(rollout):
    """A turn whose Stop never ran (killed as the session ended) is charged by the goal's
    next session, from the first session's rollout."""
    rollout.person_goal("ship it")
    assert rollout.turn() is None
    rollout.turn_id = "t-unstopped"
    rollout.write("event_msg", {"type": "task_started", "turn_id": rollout.turn_id,
                                "turn_attribution": {"turn_trigger": "goal"}})
    later = Rollout(rollout.project, rollout.home)
    later.person_goal("ship it")
    assert later.turn() is None
    assert goal_in_state(rollout.project)["turn_count"] == 3
