"""OpenAI Codex CLI: map its hook events and replies onto forge's core.

What differs from Claude Code (measured with Codex CLI 0.171.0, see codex_transcript.py):
- A person's `/goal X` in the TUI fires no hook at all. Codex writes it to its rollout file,
  so the Stop hook reads the rollout: a `/goal` the host confirmed there becomes the same
  pending activation UserPromptSubmit records on Claude Code, and the core confirms it from
  the rollout (`codex_transcript.Chunk.person_set_goal`). A goal the model made with
  `create_goal` is never confirmed; its turns are stopped like any unbudgeted native goal.
  The first tool call of a person's goal notes that pending activation already (from the
  goal store and the rollout), so the goal's ceilings hold its first turn too.
- The turn identity is the `turn_id` of the turn's `task_started` entry.
- A Stop reply `{"continue": false}` ends the turn but NOT the native goal loop: Codex
  starts the next goal turn anyway. What stops the loop is the goal's status in Codex's own
  goal store (`$CODEX_HOME/goals_<n>.sqlite`, table `thread_goals`, keyed by the thread id,
  which is the hook's `session_id`): when forge ends autonomy it sets that goal `paused`
  and answers `continue: false` with the reason the TUI shows ("Hook stopped").
- Stop replies carry no `hookSpecificOutput` (Codex accepts none for Stop); the stuck
  warning reaches the person as `systemMessage`. Codex gives hooks no session variable, so
  a Stop that fails for a session with a goal is answered here, from the event itself.
- `apply_patch` is a PreToolUse tool whose `tool_input.command` is the patch text; the
  guard reads the paths it names (forge_runtime/guard/patch.py).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from forge_runtime import safeio
from forge_runtime.goal.hosts.host_adapter import KEY
from forge_runtime.host_contract import codex as contract

NAME = "codex"
TURN_EVENTS = contract.TURN_EVENTS  # the events forge reads that carry their turn's id
PAUSED = "paused"
# What forge's own run of the recorded gates may take in a SessionEnd hook (gates/goal.py):
# the host's limit is 10 s, which Codex clamps to 3 s.
SESSION_END_BUDGET_SECONDS = 2.0
# SessionEnd's watchdog (hooks/session_end.py), below that 3 s; Codex kills at once, so
# the dispatcher's hard limit after it may come too late there, and nothing is lost then:
# Codex's next event of the session charges what this one could not.
SESSION_END_WATCHDOG_SECONDS = 2.5


def shape_problem(event_name: str, event: dict) -> str | None:
    """Why `event` cannot be Codex's, or None: its turn events carry a `turn_id`, and its
    transcript is a `rollout-*.jsonl` file."""
    if event_name in TURN_EVENTS and not isinstance(event.get("turn_id"), str):
        return "the input has no turn_id, as Codex's do: this hook is wired for Codex"
    transcript = event.get("transcript_path")
    if transcript is not None and not (isinstance(transcript, str) and
                                       os.path.basename(transcript).startswith("rollout-")):
        return "transcript_path is not a Codex rollout file: this hook is wired for Codex"
    return None


def handle(event_name: str, module, event: dict) -> dict | None:
    """Run the core's event module for a Codex event, this adapter handed over on it (the
    core asks it what goal/hosts/host_adapter.py lists); map its reply back."""
    event = {**event, KEY: sys.modules[__name__]}
    if event_name == "PreToolUse":
        objective = native_goal(event)
        if objective is None:
            return module.handle(event)
        denial = unsandboxed_goal_denial(event, active=True) or \
            note_first_turn(event, objective)
        return denial or module.handle(event)
    if event_name != "Stop":
        return module.handle(event)
    try:
        early = _note_person_goal(event)
        reply = early if early is not None else module.handle(event)
    except Exception as exc:  # fail closed for a session with a goal, as on Claude Code
        from forge_runtime.goal.store import sessions

        if not sessions.event_involvement(event):
            raise
        reply = module.failure_reply(f"internal error {exc.__class__.__name__}: {exc}")
    return stop_reply(event, reply)


def transcript_reader():
    """The core's reader of this host's transcripts (goal/hosts/host_adapter.py): its
    rollout files."""
    from forge_runtime.goal.hosts import codex_transcript

    return codex_transcript


def sandbox_posture(project_root: Path, rollout: str | None) -> dict:
    """Codex's own sandbox for a session, for the core (goal/hosts/host_adapter.py)."""
    return codex_sandbox_posture(project_root, rollout=rollout)


def continuing(reply: dict) -> dict:
    """The core's reply that keeps a goal going (gates/goal.py), in Codex's terms: Codex
    takes no model context on Stop, and makes another turn for a block whose reason is
    that text."""
    return {**reply, "decision": "block",
            "reason": reply["hookSpecificOutput"]["additionalContext"]}


def wedged_reply(event_name: str, event: dict, reply: dict | None) -> dict | None:
    """A hook whose watchdog fired (hooks/dispatch.py) answers in Codex's terms too."""
    return stop_reply(event, reply) if event_name == "Stop" else reply


def stop_reply(event: dict, reply: dict | None) -> dict | None:
    """The core's Stop reply in Codex's terms: ending autonomy also pauses the native goal."""
    if not reply:
        return reply
    reply = {key: value for key, value in reply.items() if key != "hookSpecificOutput"}
    if reply.get("continue") is False and not pause_native_goal(event):
        reply["stopReason"] = (f"{reply.get('stopReason', '')}\n(forge could not pause "
                               "Codex's native goal; run /goal pause)").lstrip()
    return reply or None


def _note_person_goal(event: dict) -> dict | None:
    """Turn a `/goal` the host recorded since the session's last event into a pending
    activation for the core to confirm; stop a native goal no person set (None: go on)."""
    from forge_runtime.errors import ForgeError
    from forge_runtime.goal.store import sessions

    project = sessions.project_for(event)
    session = event["session_id"]
    involved = sessions.involvement(project.ledger_root, session)
    binding = sessions.read_binding(project.ledger_root, session) \
        if sessions.BOUND in involved else None
    try:
        noted, chunk = _note_pending(event, project, binding)
    except ForgeError as exc:  # a session an agent started: its goal runs for nobody
        from forge_runtime.goal.events.replies import stop_session

        return stop_session(exc.hint().render())
    if noted or involved:
        return None
    pursued = chunk.unconfirmed_goal(event["turn_id"])
    if pursued is None:
        return None
    from forge_runtime.goal.events.replies import on_unbound_goal

    return on_unbound_goal(pursued, "no person's /goal set it, e.g. the model created it "
                                    "itself; only a person's /goal runs with a budget")


def note_first_turn(event: dict, objective: str) -> dict | None:
    """Hold the first turn of a person's `/goal` to its goal's ceilings from its first tool
    call (goal/events/tool_call.py), though Codex fires no hook at a TUI `/goal`: while the goal
    store holds an active goal that this session is not bound to as an active goal, the
    rollout's newest person's `/goal` becomes the pending activation the Stop confirms,
    with the ceilings that `/goal` will have, its clock started at the rollout's entry and
    its tokens counted from there. A goal the model created (no person's `/goal` in the
    rollout) is noted nothing here; its first Stop stops it as unbudgeted. A `/goal` in a
    session an agent started (goal/hosts/nesting.py) is denied its tool calls instead."""
    from forge_runtime.errors import ForgeError
    from forge_runtime.goal.store import sessions

    project = sessions.project_for(event)
    session = event["session_id"]
    involved = sessions.involvement(project.ledger_root, session)
    binding = None
    if sessions.BOUND in involved:
        binding = sessions.read_binding(project.ledger_root, session) or {}
        goal = binding.get("goal") or {}
        if goal.get("status") == "active" and binding.get("objective") == objective:
            return None  # the bound goal's own ceilings hold (goal/events/tool_call.py)
    if sessions.PENDING in involved:
        pending = sessions.read_pending(project.ledger_root, session) or {}
        if isinstance(pending.get("limits"), dict):
            return None  # noted at an earlier tool call of this turn
    try:
        _note_pending(event, project, binding, first_turn=True)
    except ForgeError as exc:
        return _deny(exc.hint().render())
    return None


def _note_pending(event: dict, project, binding: dict | None, first_turn: bool = False):
    """Turn the newest person's `/goal` the rollout shows since the session's last event
    into a pending activation (kept when already noted): whether there is one, and the
    part of the rollout read. `first_turn`: noted at a tool call, with what its ceilings
    need (events.first_turn_note: the prompt's time and offset, the ceilings it will
    have). A `/goal` in a session an agent started raises FORGE_GOAL_NOT_A_PERSON."""
    from forge_runtime.goal.hosts import codex_transcript
    from forge_runtime.goal.store import sessions

    session, path = event["session_id"], event.get("transcript_path") or ""
    chunk = codex_transcript.read_since(path, binding.get("offset", 0)) if binding \
        else codex_transcript.read_tail(path)
    person = chunk.newest_person_goal()
    if person is None:
        return False, chunk
    message_id, objective = person
    pending = sessions.read_pending(project.ledger_root, session) or {}
    if pending.get("prompt_id") == message_id:
        return True, chunk
    from forge_runtime.goal.hosts.nesting import require_person

    require_person(objective)  # a session an agent started notes nothing
    note = {"objective": objective, "prompt_id": message_id}
    if first_turn:
        from forge_runtime.goal.budget.ceilings import now
        from forge_runtime.goal.events.first_turn import first_turn_note, plan_baseline
        from forge_runtime.goal.rules.activation import clock_start

        index = chunk.person_goal_index(message_id)
        stamp = chunk.entries[index].get("timestamp") if index is not None else None
        at = clock_start(stamp[:19] + "Z" if isinstance(stamp, str) else None) or now()
        note.update(plan_baseline(project, event, first_turn_note(
            project, objective, at, chunk.starts[index] if index is not None else 0, {})))
    sessions.write_pending(project.ledger_root, session, note)
    return True, chunk


def unsandboxed_goal_denial(event: dict, active: bool | None = None) -> dict | None:
    """Deny the tool call of a thread whose native goal runs outside Codex's sandbox, in a
    project that requires it (None: the guard decides as usual).

    No hook fires at a TUI `/goal`, so the first Stop is where forge refuses such a goal;
    a model that starts a hook killer on its first turn (measured in danger-full-access:
    `setsid -f` outlives its command and SIGKILLs every Stop hook) would never meet that
    Stop. Its tool calls come first, and this refuses them, so nothing it runs lives on.
    """
    if not (native_goal_active(event) if active is None else active):
        return None
    from forge_runtime.errors import ForgeError
    from forge_runtime.goal.store import sessions
    from forge_runtime.sandbox import posture

    project = sessions.project_for(event)
    try:
        posture.for_goal(project, codex_sandbox_posture(
            Path(project.root), rollout=event.get("transcript_path")))
    except ForgeError as exc:
        return _deny(exc.hint().render())
    return None


def _deny(reason: str) -> dict:
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                   "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}


def native_goal_active(event: dict) -> bool:
    """Whether Codex's goal store holds an active goal for this thread (False without one)."""
    return native_goal(event) is not None


def native_goal(event: dict) -> str | None:
    """The objective of this thread's active goal in Codex's goal store; None without one,
    "" when a store forge cannot read might hold one."""
    import sqlite3

    store = goal_store(codex_home(event.get("transcript_path")))
    if store is None:
        return None
    try:
        with sqlite3.connect(f"file:{store}?mode=ro", uri=True, timeout=2.0) as db:
            row = db.execute("SELECT objective FROM thread_goals WHERE thread_id = ? AND "
                             "status = 'active'", (event["session_id"],)).fetchone()
    except sqlite3.Error:
        return ""  # a store forge cannot read might hold one: the sandbox check decides
    if row is None:
        return None
    from forge_runtime.goal.store.objective import normalise

    return normalise(row[0]) if isinstance(row[0], str) else ""


# -- Codex's goal store -------------------------------------------------------------------

def codex_home(transcript_path: str | None) -> Path:
    """The CODEX_HOME a session runs in: the rollout lives at
    `<home>/sessions/YYYY/MM/DD/rollout-*.jsonl`; else $CODEX_HOME, else ~/.codex."""
    if transcript_path:
        parents = Path(transcript_path).parents
        if len(parents) > 4 and parents[3].name == "sessions":
            return parents[4]
    return Path(os.environ.get("CODEX_HOME") or Path.home() / ".codex")


def goal_store(home: Path) -> Path | None:
    """Codex's goal database (`goals_<schema>.sqlite`, the newest schema), or None."""
    stores = []
    for path in home.glob("goals_*.sqlite"):
        suffix = path.stem.split("_", 1)[1]
        if suffix.isdigit():
            stores.append((int(suffix), path))
    return max(stores)[1] if stores else None


def pause_native_goal(event: dict) -> bool:
    """Set this thread's active native goal to `paused` in Codex's goal store, so Codex
    starts no further goal turn; True when the store holds no running goal afterwards."""
    import sqlite3
    import time

    store = goal_store(codex_home(event.get("transcript_path")))
    if store is None:
        return False
    try:
        with sqlite3.connect(store, timeout=2.0) as db:
            db.execute("UPDATE thread_goals SET status = ?, updated_at_ms = ? "
                       "WHERE thread_id = ? AND status = 'active'",
                       (PAUSED, int(time.time() * 1000), event["session_id"]))
            running = db.execute("SELECT COUNT(*) FROM thread_goals WHERE thread_id = ? AND "
                                 "status = 'active'", (event["session_id"],)).fetchone()[0]
        return running == 0
    except sqlite3.Error:
        return False


# -- Codex's sandbox ----------------------------------------------------------------------

SANDBOXING_MODES = ("workspace-write", "read-only")


def codex_sandbox_posture(project_root: Path, home: Path | None = None,
                          rollout: str | None = None) -> dict:
    """What Codex's own sandbox protects for this project, read from its config files and,
    for a running session, from its rollout.

    `sandbox_mode` comes from the project's `.codex/config.toml`, else the user's
    `$CODEX_HOME/config.toml`, else Codex's default (`workspace-write` in the TUI for a
    trusted project, `read-only` for `codex exec`). Measured: `workspace-write` mounts the
    project writable but `.git`, `.codex` and `.agents` read-only, so the goal ledger under
    `.git` is kernel-protected; `danger-full-access` protects nothing, and a command the
    person approves with escalation runs outside the sandbox. The command line
    (`--sandbox`) outranks the files, so a session's rollout says what it really runs in
    (`codex_transcript.sandbox_modes`): any turn there outside a sandboxing mode makes the
    session unprotected (a line appended to the rollout can add a turn, not remove one).
    """
    import tomllib

    home = home or codex_home(rollout)
    mode, source = None, "Codex's default"
    for path in (project_root / ".codex" / "config.toml", home / "config.toml"):
        try:
            with safeio.reader(path, "rb", follow_links=True) as handle:  # no FIFO
                config = tomllib.loads(handle.read().decode("utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError):
            continue
        if isinstance(config.get("sandbox_mode"), str):
            mode, source = config["sandbox_mode"], str(path)
            break
    if rollout:
        from forge_runtime.goal.hosts.codex_transcript import sandbox_modes

        seen = sandbox_modes(rollout)
        outside = [seen_mode for seen_mode in seen if seen_mode not in SANDBOXING_MODES]
        if outside or seen:
            mode, source = (outside or seen)[-1], "this session's rollout"
    protects = mode is None or mode in SANDBOXING_MODES
    return {"host": NAME, "sandbox_mode": mode or "workspace-write (TUI) / read-only (exec)",
            "source": source, "ledger_kernel_protected": protects,
            "detail": ("Codex's sandbox mounts .git, .codex and .agents read-only"
                       if protects else f"{mode}: the kernel protects nothing; "
                       "only forge's guard and the ledger's hash chain remain")}
