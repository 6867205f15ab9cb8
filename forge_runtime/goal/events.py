"""The goal side of the host's UserPromptSubmit and Stop events.

Activation is two-phase, because of what the host writes when (measured, HOST.md):
1. UserPromptSubmit sees `/goal X` but cannot tell a person's prompt from one a model
   scheduled, and the transcript that would tell does not exist yet. forge records a
   *pending* activation for the session (objective + prompt_id) and nothing else.
2. The prompt's first Stop reads the transcript: only when it shows the person's
   `/goal` command entry for that prompt_id and the host's `Goal set:` reply does forge
   activate (rules 2-3), bind the session and charge that first turn. Otherwise the
   pending activation is dropped: a model-caused `/goal` never activates.

Each later Stop of a bound session reads only what the transcript gained since the last
event (offset and anchor kept in the binding), charges every turn it shows, its own and any
whose Stop hook died (charging.py), and applies the host's verdicts (met, cleared,
impossible) in transcript order. UserPromptSubmit and SessionEnd of a bound session catch up
the same way. A session with no binding and no pending activation costs three stats.
"""

from __future__ import annotations

import os

from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.goal.hosts import transcript
from forge_runtime.goal.store import sessions
from forge_runtime.goal.store.layout import REMOTE_STATE
from forge_runtime.goal.store.ledger import ACTIVE, EXHAUSTED, TAMPERED, TRANCHE
from forge_runtime.goal.store.objective import normalise, parse_goal_prompt
from forge_runtime.goal.sync.witness import witnessed_ledger
from forge_runtime.project import Project

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `hints` is imported where a reply is written
    from forge_runtime import hints

EXHAUSTED_CODE = "FORGE_GOAL_BUDGET_EXHAUSTED"
USAGE_LIMIT_CODE = "FORGE_GOAL_USAGE_LIMIT"
ENDED_TURN_CODE = "FORGE_GOAL_ENDED_TURN"
GATES_CHANGED_CODE = "FORGE_GATES_CHANGED"
_END_KIND = {transcript.MET: "complete", transcript.CLEARED: "cancel",
             transcript.IMPOSSIBLE: "cancel", transcript.UNKNOWN: "cancel"}


# `hints` (with `unicodedata`) is imported where a reply is written: a Stop that charges a
# turn and says nothing never needs it.


def _reader(event: dict):
    """The transcript reader of the host that sent `event`: transcript.py for Claude Code,
    codex_transcript.py for Codex (both offer the same functions and chunk)."""
    from forge_runtime.goal.hosts.host_adapter import transcript_reader

    return transcript_reader(event)


# -- hook replies -------------------------------------------------------------------------

def stop_session(text: str) -> dict:
    """The Stop reply that ends native autonomy."""
    return {"continue": False, "stopReason": text}


def refusal_text(error: ForgeError) -> str:
    return error.hint().render()


def exhausted_hint(goal: dict) -> hints.Hint:
    """The way on from a spent budget: the same words in the Stop reply and `forge goal status`."""
    from forge_runtime import hints

    return hints.next_(f"/goal {goal['objective']}",
                       f"adds one more tranche of {tranche_words(goal)}", or_=["/goal clear"])


def tranche_words(goal: dict) -> str:
    """What one tranche of this goal holds: `20 turns`, and its token and minute ceilings."""
    from forge_runtime.goal.views.gauge import tokens_text

    words = [f"{TRANCHE} turns"]
    if isinstance(goal.get("token_ceiling"), int):
        words.append(f"{tokens_text(goal['tranche_tokens'])} tokens"
                     if isinstance(goal.get("tranche_tokens"), int) else "its tokens")
    if isinstance(goal.get("tranche_usd"), int):
        from forge_runtime.goal.budget.pricing import dollars

        words.append(dollars(goal["tranche_usd"]))
    if isinstance(goal.get("minute_ceiling"), int):
        words.append(f"{goal['minute_ceiling']} minutes")
    return ", ".join(words[:-1]) + " and " + words[-1] if len(words) > 1 else words[0]


def spent_words(goal: dict, ceiling: str | None) -> str:
    """Which ceiling ended the tranche, in the stop message's words."""
    from forge_runtime.goal.budget import ceilings
    from forge_runtime.goal.views.gauge import tokens_text

    if ceiling == ceilings.TOKENS:
        return (f"used {tokens_text(goal.get('token_count', 0))} of "
                f"{tokens_text(goal['token_ceiling'])} tokens (the token ceiling) in "
                f"{goal['turn_count']} turns")
    if ceiling == ceilings.USD:
        from forge_runtime.goal.budget.pricing import dollars

        return (f"spent {dollars(goal.get('picousd', 0))} of {dollars(goal['usd_ceiling'])} "
                f"(the dollar ceiling) in {goal['turn_count']} turns")
    if ceiling == ceilings.MINUTES:
        return (f"ran {ceilings.minutes_used(goal, ceilings.now())} of {goal['minute_ceiling']} "
                f"minutes (the time ceiling) of this tranche in {goal['turn_count']} turns")
    if ceiling in (ceilings.FIVE_HOUR, ceilings.SEVEN_DAY, ceilings.WEEK_SPEND):
        from forge_runtime.goal.views.gauge import plan_words

        return f"{plan_words(goal, ceiling)} in {goal['turn_count']} turns"
    if ceiling == ceilings.USAGE_LIMIT:
        return (f"was stopped by the host at its plan's usage limit after {goal['turn_count']} "
                "turns; forge ended autonomy there, and refuses the host's own continuation "
                "after the limit resets")
    return (f"used {goal['turn_count']} of {goal['turn_ceiling']} turns "
            f"({goal['activation_count']} x 20)")


def pending_words(event: dict) -> str:
    """What the host says is still to wake the session (Claude Code's Stop input: running
    background tasks, scheduled prompts), in words, or ''."""
    tasks = [task for task in event.get("background_tasks") or []
             if isinstance(task, dict) and task.get("status") in ("running", "pending")]
    crons = [cron for cron in event.get("session_crons") or [] if isinstance(cron, dict)]
    if not tasks and not crons:
        return ""
    parts = ([f"{len(tasks)} background task{'s' if len(tasks) != 1 else ''}"] if tasks
             else []) + ([f"{len(crons)} scheduled prompt{'s' if len(crons) != 1 else ''}"]
                         if crons else [])
    return (f" Still pending: {' and '.join(parts)}; forge holds the prompts they send before "
            "they reach the model, and a turn one still starts does no work and goes on the "
            "ledger.")


def exhausted_text(goal: dict, late: int = 0, owed: int = 0, ceiling: str | None = None,
                   overrun: int = 0, pending: str = "") -> str:
    """The stop message; `ceiling` names the one spent (else the first the goal reached)."""
    from forge_runtime.goal.budget import ceilings

    ceiling = ceiling or ceilings.reached(goal, ceilings.now())
    code = USAGE_LIMIT_CODE if ceiling == ceilings.USAGE_LIMIT else EXHAUSTED_CODE
    head = f"{code}: goal {goal['nonce']} {spent_words(goal, ceiling)}; forge stopped it."
    if late:
        head += (f" {late} of this tranche's turns were charged late (their Stop hooks did "
                 "not finish).")
    if owed:
        head += f" {owed} more ran past the ceiling; the next tranche starts with them."
    if overrun:
        head += " " + overrun_words(overrun)
    return head + pending + "\n" + exhausted_hint(goal).render()


def overrun_words(overrun: int) -> str:
    return (f"{overrun} turn{'s' if overrun != 1 else ''} the host started after the goal "
            "ended (its own continuation after a usage limit, a scheduled wake-up, a cron, a "
            "background task's notice; no person's prompt) did no work and went on the ledger "
            "as over budget.")


def ended_turn_text(goal: dict, overrun: int) -> str:
    """The stop message for a turn the host started for a goal that had ended: at the
    host's usage limit (FORGE_GOAL_USAGE_LIMIT: the host continues such a goal by itself
    once the limit resets), or otherwise."""
    from forge_runtime.goal.budget import ceilings

    if goal["status"] == EXHAUSTED and ceilings.usage_limited(goal):
        return (f"{USAGE_LIMIT_CODE}: goal {goal['nonce']} ended when the host stopped it at "
                "its plan's usage limit; this turn is the host's own continuation after the "
                "limit reset (no person's prompt), so forge denies its work and stops it. "
                f"{overrun_words(max(overrun, 1))}\n" + exhausted_hint(goal).render())
    return (f"{ENDED_TURN_CODE}: goal {goal['nonce']} is {goal['status']}; this turn was "
            "started by the host, not by a person's prompt, so forge denies its work and "
            f"stops it. {overrun_words(max(overrun, 1))}\n" + ended_hint(goal).render())


def ended_hint(goal: dict) -> hints.Hint:
    """The way on from a goal that ended: another tranche for a spent one, else its story."""
    if goal["status"] == "exhausted":
        return exhausted_hint(goal)
    from forge_runtime import hints

    return hints.next_("forge goal status", "see how the goal ended and the turns the host "
                       "started after it")


def past_allowance(binding: dict, goal: dict) -> bool:
    """Has this session charged the turns its person's /goal grants in this clone? A goal
    published on a remote may hold tranches no person here granted (anyone with push
    access writes that chain, docs/remote-ledger.md): they count, they grant nothing."""
    allowance = binding.get("allowance")
    if allowance is None or goal["status"] != ACTIVE:
        return False
    return not isinstance(allowance, int) or goal["turn_count"] >= allowance


def allowance_text(goal: dict) -> str:
    """The stop message for a session past its allowance (`past_allowance`)."""
    return (f"{EXHAUSTED_CODE}: goal {goal['nonce']} ran the {TRANCHE} turns a person's "
            f"/goal in this clone grants (turn {goal['turn_count']} of a ceiling of "
            f"{goal['turn_ceiling']}); the rest of the ceiling came from the remote's ledger, "
            "which grants no autonomy here; forge stopped it.\n"
            + exhausted_hint(goal).render())


def stuck_reply(goal: dict, unchanged: int) -> dict:
    from forge_runtime import hints
    from forge_runtime.goal.rules.charging import STUCK_CODE

    text = (f"{STUCK_CODE}: the checklist and next step in .forge/local/state.md have not "
            f"changed for {unchanged} charged turns ({goal['turn_count']} of "
            f"{goal['turn_ceiling']} used). Tick finished steps or rethink the plan.")
    text += "\n" + hints.next_("forge goal status", "see the budget and next step").render()
    return {"systemMessage": text,
            "hookSpecificOutput": {"hookEventName": "Stop", "additionalContext": text}}


# -- UserPromptSubmit ---------------------------------------------------------------------

def on_prompt(event: dict) -> dict | None:
    """Record a pending `/goal`; for a bound session, charge the turns its Stops missed and
    apply the verdicts that ended its goal (a prompt into a goal that this exhausts is
    blocked), and tell the model when the prompt starts the tranche's last turn."""
    from forge_runtime import hints

    goal_prompt = parse_goal_prompt(event["prompt"])
    if goal_prompt is not None and goal_prompt.invisible:
        return {"decision": "block", "reason": hints.error(
            "BLOCKED: this /goal's objective has no visible characters, so forge could "
            "neither show nor budget it", "forge goal status").render()}
    sets_goal = goal_prompt is not None and goal_prompt.sets_goal
    project = sessions.project_for(event)
    involved = sessions.involvement(project.ledger_root, event["session_id"])
    if not sets_goal and sessions.BOUND not in involved:
        return None
    if sessions.BOUND in involved:
        try:
            caught_up = _follow_transcript(project, event)
        except ForgeError as exc:  # the next Stop fails closed (or this /goal rebinds)
            if not sets_goal:
                return {"systemMessage": refusal_text(exc)}
            caught_up = None
        held = _take_held_prompt(project, event["session_id"])
        if not sets_goal and caught_up is not None and caught_up.exhausted_now:
            from forge_runtime.goal.views import checkpoint

            return {"decision": "block", "reason": checkpoint.stamped(exhausted_text(
                caught_up.goal, caught_up.late, caught_up.owed), project.state_path)}
        if held is not None and not sets_goal:
            from forge_runtime.goal.budget import ceilings
            from forge_runtime.goal.views import checkpoint

            return {"decision": "block", "reason": checkpoint.stamped(exhausted_text(
                held, ceiling=ceilings.USAGE_LIMIT), project.state_path)}
        if not sets_goal:
            woken = _host_prompt_held(project, event)
            if woken is not None:
                return woken
            from forge_runtime.goal.views import wrapup

            return wrapup.at_prompt(project, event)
    if sets_goal:
        from forge_runtime.goal.hosts.nesting import require_person
        from forge_runtime.goal.rules import qualification
        from forge_runtime.sandbox import posture

        try:
            require_person(goal_prompt.objective)
            qualification.require(project, os.environ.get("CLAUDE_PLUGIN_ROOT"))
            unsandboxed = posture.goal_notice_once(project, event["session_id"],
                                                   host_posture(project, event))
            # the ceilings the first turn's tool calls are held to before any Stop confirms
            # it (a dollar ceiling with no price table is refused here, as at that Stop)
            first_turn = first_turn_limits(project, goal_prompt.objective, event)
        except ForgeError as exc:
            return {"decision": "block", "reason": refusal_text(exc)}
        from forge_runtime.gates.recorded import field_for

        # the final gates as the person's prompt finds them, before the model's first turn
        gates = field_for(project)
        sessions.write_pending(project.ledger_root, event["session_id"], {
            "objective": goal_prompt.objective, "prompt_id": event.get("prompt_id"),
            "recorded": gates, **first_turn})
        changed = gates_notice(project, goal_prompt.objective, gates)
        if unsandboxed and changed:  # one hint per reply: the gates notice's comes last
            from forge_runtime import hints

            body = hints.split_rendered(unsandboxed)[0]
            return {"systemMessage": "\n".join(body) + "\n\n" + changed}
        if unsandboxed or changed:
            return {"systemMessage": unsandboxed or changed}
    return None



# the binding's note that the session's next prompt is refused: the host stopped its goal
# at the usage limit (`hold_next_prompt`)
HELD_PROMPT = "held_prompt"


def hold_next_prompt(event: dict) -> None:
    """After the host stopped a goal's turn at its usage limit (StopFailure, once its turn
    is charged), hold the session's next prompt: Claude Code sends its own continuation
    once the limit resets, and a prompt blocked before it reaches the model is one it does
    not retry (measured: "Automatic continue did not run ... send a prompt to continue"),
    so no request is spent on it. A prompt hook cannot tell the host's prompt from a
    person's (the transcript has no entry for it yet), so the next one is held whoever
    sent it, once; it says why and the way on. A goal that goes on after a usage limit
    (`after_usage_limit: continue`) holds nothing."""
    from forge_runtime.goal.budget import ceilings

    project = sessions.project_for(event)
    binding = sessions.read_binding(project.ledger_root, event["session_id"])
    goal = (binding or {}).get("goal")
    if isinstance(goal, dict) and goal.get("status") == EXHAUSTED and \
            ceilings.usage_limited(goal):
        binding[HELD_PROMPT] = ceilings.USAGE_LIMIT
        sessions.write_binding(project.ledger_root, event["session_id"], binding)


def _take_held_prompt(project: Project, session: str) -> dict | None:
    """The goal whose usage limit holds this prompt (`hold_next_prompt`), or None; the
    hold is used up either way, so only one prompt is held."""
    binding = sessions.read_binding(project.ledger_root, session) or {}
    if HELD_PROMPT not in binding:
        return None
    del binding[HELD_PROMPT]
    sessions.write_binding(project.ledger_root, session, binding)
    goal = binding.get("goal")
    from forge_runtime.goal.budget import ceilings

    return goal if isinstance(goal, dict) and goal.get("status") == EXHAUSTED and \
        ceilings.usage_limited(goal) else None


def _host_prompt_held(project: Project, event: dict) -> dict | None:
    """The block for a prompt the host sent on its own (goal/hosts/host_prompts.py: a wake-up, a
    cron, a background task's notice) into a session whose goal has ended: it never reaches
    the model, so the turn it would start costs nothing. A person's prompt goes through."""
    from forge_runtime.goal.hosts import host_prompts

    binding = sessions.read_binding(project.ledger_root, event["session_id"]) or {}
    goal = binding.get("goal")
    if not isinstance(goal, dict) or goal.get("status") in (None, ACTIVE):
        return None
    why = host_prompts.sent_by_host(event, binding)
    if why is None:
        return None
    if host_prompts.forget_fired(binding, event["prompt"]):
        sessions.write_binding(project.ledger_root, event["session_id"], binding)
    from forge_runtime.goal.views import checkpoint

    text = (f"{ENDED_TURN_CODE}: goal {goal.get('nonce')} is {goal['status']}, and this prompt "
            f"is the host's own ({why}), not a person's; forge held it before it reached the "
            "model, so the turn it would start costs nothing.\n" + ended_hint(goal).render())
    return {"decision": "block", "reason": checkpoint.stamped(text, project.state_path)}


def first_turn_limits(project: Project, objective: str, event: dict) -> dict:
    """What a pending activation keeps for the ceilings of the first turn (midturn.py): when
    the prompt arrived (the tranche's clock starts then), the goal's ceilings as the
    person's `/goal` would set them (`activation.prospect`), and where the turn's usage
    starts: the transcript's size and its subagent transcripts' marks at this moment."""
    from forge_runtime.goal.budget import ceilings

    path = event.get("transcript_path") or ""
    try:
        offset = os.path.getsize(path) if path else 0
    except OSError:
        offset = 0
    try:
        _, marks = transcript.read_subagents(path, {}) if path else (None, {})
    except transcript.Unattributable:
        marks = {}
    return plan_baseline(project, event,
                         first_turn_note(project, objective, ceilings.now(), offset, marks))


def plan_baseline(project: Project, event: dict, note: dict) -> dict:
    """A pending activation's `note` with where the goal's own use of the week starts, for
    a goal with plan ceilings: the plan as the person's `/goal` finds it (on Codex, whose
    `/goal` fires no hook, as the turn's first tool call finds it: the rollout's windows
    before the turn's first response), kept outside the work tree (goal/store/prompt_notes.py).
    A Claude Code `/goal` watching a window the host has not reported is refused
    (goal/hosts/unreported_windows.py)."""
    found = None
    if isinstance(note["limits"].get("plan_ceilings"), dict):
        from forge_runtime.goal.budget import plan
        from forge_runtime.goal.hosts import plan_readings, unreported_windows

        unreported_windows.require_reported(project, event, note["limits"])
        try:
            found = plan_readings.current(event, project.ledger_root)
        except ForgeError:  # a reading forge did not write starts nothing
            found = None
        note["limits"] = plan.baseline(note["limits"], found)
    from forge_runtime.goal.store import prompt_notes

    prompt_notes.keep(project.ledger_root, event["session_id"], note["limits"], found,
                     event.get("prompt_id"))
    return note


# what a first turn is held to (midturn.py): the goal's counts and ceilings, the price
# table its dollars are counted with, and the plan's figures and ceilings (goal/budget/plan.py)
FIRST_TURN_FIELDS = ("nonce", "objective", "turn_count", "token_count", "token_ceiling",
                     "tranche_tokens", "minute_ceiling", "tranche_started", "picousd",
                     "usd_ceiling", "tranche_usd", "prices", "plan_ceilings", "plan_seen",
                     "plan_host", "plan_week", "after_usage_limit")


def first_turn_note(project: Project, objective: str, at: str, offset: int,
                    subagents: dict) -> dict:
    """The pending activation's part that midturn.py holds a first turn to: the prompt's
    time `at`, where its usage starts (`offset` in the transcript, `subagents` marks), and
    the ceilings the `/goal` will give its goal (`activation.prospect`)."""
    from forge_runtime.goal.rules import activation

    goal = activation.prospect(project, objective, at)
    return {"at": at, "offset": offset, "subagents": subagents, "limits": {
        key: goal.get(key) for key in FIRST_TURN_FIELDS if key in goal}}


def gates_notice(project: Project, objective: str, field: dict) -> str | None:
    """At a person's `/goal`: the FORGE_GATES_CHANGED notice when the final gates it records
    (`field`, read from the gates file now) differ from those the objective's goal last
    recorded, so the person sees a gate an agent's script weakened before it counts."""
    from forge_runtime.gates import recorded

    try:
        last = recorded.last_recorded(project, objective)
    except ForgeError as exc:  # the ledger's own check refuses this /goal at its first Stop
        return refusal_text(exc)
    if last is None:
        return None
    nonce, before = last
    after = recorded.of_field(field[recorded.FIELD]) if field else None
    lines = recorded.changes(before, after)
    if not lines:
        return None
    from forge_runtime import hints

    return (f"{GATES_CHANGED_CODE}: this /goal records final gates that differ from those goal "
            f"{nonce} last recorded; it will be judged by these:\n"
            + "".join(f"  - {hints.sanitize(line)}\n" for line in lines)
            + hints.next_("git diff -- .forge/gates.yaml", "see what changed the gates; if "
                          "you did not mean it, restore the file and type the same /goal "
                          "again, which records the gates as they are then").render())


def host_posture(project: Project, event: dict) -> dict | None:
    """The host's own sandbox for its session (Codex's kernel layer), as the host's adapter
    reads it (goal/hosts/host_adapter.py); None on Claude Code, whose sandbox is forge's
    settings layer."""
    from forge_runtime.goal.hosts import host_adapter

    handed = host_adapter.adapter(event)
    if handed is None:
        return None
    from pathlib import Path

    return handed.sandbox_posture(Path(project.root), event.get("transcript_path"))


def on_session_end(event: dict) -> None:
    """Charge the turns and apply the verdicts the session's last Stop could not see, then
    publish what the session leaves owed (a goal kept on the remote)."""
    project = sessions.project_for(event)
    _follow_transcript(project, event)
    binding = sessions.read_binding(project.ledger_root, event["session_id"]) or {}
    if binding.get("remote"):
        from forge_runtime.goal.sync.publisher import after_event

        after_event(project, binding, None, now=True)


def _follow_transcript(project: Project, event: dict):
    """Catch up with what the transcript gained since the session's last event: every turn
    it shows is charged (late: no Stop of theirs did it), every verdict applied."""
    session = event["session_id"]
    path = event.get("transcript_path") or ""
    binding = sessions.read_binding(project.ledger_root, session)
    with storage_errors(project):
        catch_up_sessions(project, binding["nonce"], session)
        chunk = _read_bound(event, binding)
        result = _catch_up(project, binding, chunk, session, None, path,
                           seen=host_seen(project, event, binding, wait=False))
        _remember(project, session, binding, path, chunk)
    return result


def _read_bound(event: dict, binding: dict) -> transcript.Chunk:
    """What a bound session's transcript gained since forge last read it, or the tamper
    error when the part forge read is no longer there as it was."""
    reader, path = _reader(event), event.get("transcript_path") or ""
    mark = binding.get("anchor")
    try:
        chunk = reader.read_since(path, binding.get("offset", 0)) if mark is None \
            else reader.read_anchored(path, mark)  # None: nothing read yet
    except transcript.Unattributable as exc:
        raise _unattributable(exc, binding) from None
    chunk.model_before = binding.get("model")  # the model of the turn the last read ended in
    return chunk


def _unattributable(exc: transcript.Unattributable, binding: dict) -> ForgeError:
    """The tamper error for a transcript (or a subagent's) that lost what forge read."""
    from forge_runtime import hints

    objective = hints.sanitize(binding.get("objective") or "")
    return ForgeError(
        f"{exc}, so the turns after the ones goal {binding.get('nonce')} charged cannot be "
        "attributed", f"/goal {objective}", exit_code=EXIT_REFUSED, code=TAMPERED,
        rationale="in a new session: the goal keeps its count; this session's transcript "
                  "can no longer show its turns")


def _turn_usage(path: str, binding: dict, chunk: transcript.Chunk, turns: list[str],
                ledger=None) -> dict:
    """The tokens each of `turns` spent (usage.py): its distinct responses, the first one's
    with the part of the turn an earlier event read (the binding's `usage_open`), the last
    one's with what the session's subagents spent since the last event. On Claude Code a
    turn's responses come before the entry that closes it, and what follows the last one
    waits in the binding for the next turn; on Codex they follow the entry that opens it.
    A goal whose activation sealed a price table (`ledger`'s head says) has each response
    priced (pricing.py)."""
    from forge_runtime.goal.budget import pricing, usage

    try:
        pricer = None if ledger is None else \
            pricing.pricer_for(ledger.root, ledger.current().goal)
    except pricing.Unsealed as exc:
        from forge_runtime.goal.store.ledger import tampered

        raise tampered(f"goal {binding.get('nonce')}: {exc}") from None
    usage.price_with(pricer)
    try:
        return _tally_turns(path, binding, chunk, turns)
    finally:
        usage.price_with(None)


def _tally_turns(path: str, binding: dict, chunk: transcript.Chunk, turns: list[str]) -> dict:
    """`_turn_usage`'s tally, priced as it set up."""
    from forge_runtime.goal.budget import usage

    try:
        helpers, binding["subagents"] = transcript.read_subagents(
            path, binding.get("subagents") or {})
    except transcript.Unattributable as exc:
        raise _unattributable(exc, binding) from None
    marks = [(turn.index, turn.uuid) for turn in chunk.turns() if turn.uuid in turns]
    carried = usage.Tally(binding.get("usage_open"))
    tallies = {uuid: usage.Tally({"last": carried.last}) for _, uuid in marks}
    if marks:
        tallies[marks[0][1]].merge(carried)
        carried = usage.Tally({"last": carried.last})
    for index, ident, model, spent in chunk.responses():
        owner = _owner(marks, index, chunk.OPENS_TURNS)
        tally = carried if owner is None else tallies[owner]
        tally.add_response(ident, model, spent)
        carried.last = tally.last
    (tallies[marks[-1][1]] if marks else carried).merge(helpers)
    binding["usage_open"] = carried.state()
    return {uuid: tally.take() for uuid, tally in tallies.items()}


def _owner(marks: list[tuple[int, str]], index: int, opens: bool) -> str | None:
    """The turn a response at `index` belongs to, of the turns being charged (`marks`:
    (index, turn), in order); None when it belongs to a turn still running."""
    if opens:  # Codex: the last turn opened before it (or the first, for what came earlier)
        owner = marks[0][1] if marks else None
        for start, uuid in marks:
            if start <= index:
                owner = uuid
        return owner
    for end, uuid in marks:  # Claude Code: the first turn closed at or after it
        if index <= end:
            return uuid
    return None


def _remember(project: Project, session: str, binding: dict, path: str,
              chunk: transcript.Chunk) -> None:
    """Keep where the next read of this session's transcript starts, and its anchor: the
    bytes from the newest charged turn's entry to that offset; and the transcript and its
    reader, for a later session of the goal to catch up what this one missed
    (`catch_up_sessions`)."""
    if path:
        binding.update(transcript=path, reader=_READERS.get(type(chunk).__module__,
                                                            "transcript"))
    turns = chunk.turns()
    if turns:
        start = chunk.starts[turns[-1].index]
    else:
        start = (binding.get("anchor") or {}).get("start", 0)
    binding.update(offset=chunk.end_offset,
                   last_turn=turns[-1].uuid if turns else binding.get("last_turn"))
    if chunk.model_after is not None:
        binding["model"] = chunk.model_after
    mark = transcript.anchor(path, start, chunk.end_offset) if chunk.end_offset else None
    if mark is not None:
        binding["anchor"] = mark
    sessions.write_binding(project.ledger_root, session, binding)
    from forge_runtime.goal.sync.witness import Witness

    Witness(project).mark_session(session, binding["nonce"])


# the transcript readers a binding may name (goal/hosts/host_adapter.py: each host's reader module)
_READERS = {"forge_runtime.goal.hosts.transcript": "transcript",
            "forge_runtime.goal.hosts.codex_transcript": "codex_transcript"}


def catch_up_sessions(project: Project, nonce: str, current: str) -> None:
    """Charge every turn the goal's other sessions worked since their last charge, from their
    own transcripts: a Stop that could not write (a full disk) or was killed as its session
    ended leaves its turns owed, and a later session of the goal (a person's `/goal`, a
    prompt, a session's end) charges them here, late, before it goes on. A transcript that
    has not grown since its session's last read costs one stat."""
    for session, binding in sessions.bound_sessions(project.ledger_root, nonce).items():
        path = binding.get("transcript")
        if session == current or not isinstance(path, str) or not path:
            continue
        try:
            grown = os.stat(path).st_size > binding.get("offset", 0)
        except OSError:
            continue  # gone with its session: nothing more can be read of it
        if not grown:
            continue
        if binding.get("reader") == "codex_transcript":
            from forge_runtime.goal.hosts import codex_transcript as reader
        else:
            reader = transcript
        mark = binding.get("anchor")
        try:
            chunk = reader.read_since(path, binding.get("offset", 0)) if mark is None \
                else reader.read_anchored(path, mark)
        except transcript.Unattributable:
            continue  # that session's own next event refuses it; nothing to charge here
        chunk.model_before = binding.get("model")
        _catch_up(project, binding, chunk, session, None, path)
        _remember(project, session, binding, path, chunk)


def _catch_up(project: Project, binding: dict, chunk: transcript.Chunk, session: str,
              own_turn: str | None, path: str, at_stop: bool = False, seen=None):
    """Charge the chunk's turns worked before the goal ended, then apply its verdicts.

    Transcript order decides: a turn closed before a verdict that ended the goal is charged,
    one after it is not (the goal had ended). `own_turn` is the turn whose Stop this is (a
    repeated Stop's, when the chunk shows none); every other turn is charged late, each with
    the tokens it spent (`path` is the transcript's), and what the host reported beside
    them (`seen`, charging.Seen) with the last. None when there was nothing to charge.

    A turn the host started after the goal ended (no person's prompt began it: a wake-up,
    a cron, a notification, Codex's goal loop for a goal the model made) is recorded over
    budget with its tokens (`charging.overrun`), and the result says so (`host_turn` when
    it is this Stop's own: the Stop then ends it).

    At a Stop (`at_stop`), a `met` verdict on a goal with recorded final gates ends nothing:
    forge holds it (gates/held.py) and goes on charging the turns it keeps the goal going
    for, until its own run of the gates passes, the budget ends it, or a person's own
    prompt takes over (the host's record of who sent it: a scheduled one never does).
    """
    from forge_runtime.goal.rules import charging

    ledger = witnessed_ledger(project, binding["nonce"])
    verdicts = [verdict for verdict in chunk.verdicts() if verdict.condition is None
                or normalise(verdict.condition) == binding.get("objective")]
    if at_stop and any(verdict.outcome == transcript.MET for verdict in verdicts):
        from forge_runtime.gates.held import hold_met

        if hold_met(project, binding["nonce"]):
            verdicts = [verdict for verdict in verdicts if verdict.outcome != transcript.MET]
    if at_stop:
        verdicts = sorted(verdicts + _person_took_over(project, binding, chunk),
                          key=lambda verdict: verdict.index)
    origins, binding["prompt_origin"] = chunk.turn_origins(binding.get("prompt_origin"))
    cut = verdicts[0].index if verdicts else len(chunk.entries)
    shown = chunk.turns()
    before_end = [turn.uuid for turn in shown if turn.index < cut]
    if own_turn is not None and not shown:
        before_end = [own_turn]  # a repeated Stop: the turn it charged already
    turns = before_end
    if verdicts and shown and _forge_continued(project, ledger):
        # the turns after the verdict ran because forge's reply to the last Stop kept the
        # session going (the host writes a turn's verdict a Stop late): forge's, so charged,
        # up to a person's prompt that took over, whichever event reads them (a turn a
        # person's Esc ended has no Stop: the next prompt reads it)
        taken = next((verdict.index for verdict in verdicts if verdict.outcome == _TAKEN_OVER),
                     len(chunk.entries) if at_stop else _person_after(chunk, cut))
        turns = [turn.uuid for turn in shown if turn.index < taken]
    after_end = [turn.uuid for turn in shown
                 if turn.uuid not in turns and origins.get(turn.uuid) == transcript.HOST]
    if any(turn in turns for turn in chunk.usage_limited()):
        # the host's own record says its usage limit stopped one of these turns: the charge
        # carries the mark, and the goal ends there unless it goes on after one (ceilings.py)
        seen = charging.Seen(seen.plan if seen is not None else None, True)
    spent = _turn_usage(path, binding, chunk, turns + after_end, ledger)
    result = None
    if turns or own_turn is not None:
        result = charging.charge(ledger, project.state_path, turns, session, own_turn, spent,
                                 seen)
    overrun = after_end
    if result is not None and result.outcome in (charging.REFUSED, charging.ENDED) \
            and not result.owed:  # the goal had ended before this event: none was charged
        overrun = [turn for turn in turns if origins.get(turn) == transcript.HOST] + overrun
    ended_own = own_turn is not None and own_turn not in before_end
    for verdict in verdicts:
        if verdict.outcome == _TAKEN_OVER:
            from forge_runtime.gates.held import release

            goal = release(project, ledger.current().goal, session,
                           "a person's prompt took over")
        else:
            goal = charging.end(ledger, project.state_path, _END_KIND[verdict.outcome],
                                session, f"host verdict: {verdict.outcome}", verdict.outcome)
        binding["goal"] = goal
        if ended_own:  # it ran after the goal ended (charged, when forge continued it)
            result = charging.Charge(charging.ENDED, goal)
    if result is not None and not verdicts:
        binding["goal"] = result.goal  # what the next tool call's budget check starts from
    if overrun:
        goal, recorded = charging.overrun(ledger, project.state_path, overrun, session, spent)
        binding["goal"] = goal
        was = result or charging.Charge(charging.ENDED, goal)
        result = charging.Charge(was.outcome, goal, was.unchanged_turns, was.late, was.stuck,
                                 was.owed, recorded, own_turn in overrun)
    owed = binding.pop(END_OWED, None)
    if isinstance(owed, dict) and owed.get("ended") in charging.ENDS_BY_FORGE:
        # forge ended the goal at an event that could not write the ledger (wedged): the
        # turns before it are charged above, and the end is recorded now
        binding["goal"] = charging.end(ledger, project.state_path, "cancel", session,
                                       str(owed.get("why")), owed["ended"])
        if result is not None:
            result = charging.Charge(charging.ENDED, binding["goal"], result.unchanged_turns,
                                     result.late, result.stuck, result.owed, result.overrun,
                                     result.host_turn)
    if "goal" in binding:  # and the ledger's head then: a later append elsewhere shows
        binding["goal_seq"] = ledger.pointer()
    return result


# a binding's note of an end forge owes the ledger (`owe_end`), recorded at the next event
END_OWED = "end_owed"


def owe_end(project: Project, session: str, ended: str, why: str) -> None:
    """Note in the session's binding that forge ended its goal (`ended`, one of
    charging.ENDS_BY_FORGE) at an event that could not write the ledger: the session's next
    event charges the turns it missed, then records this end. The note only ever ends a
    goal, so one an agent removed grants nothing the goal did not have."""
    binding = sessions.read_binding(project.ledger_root, session)
    if binding is None or END_OWED in binding:
        return
    binding[END_OWED] = {"ended": ended, "why": why}
    sessions.write_binding(project.ledger_root, session, binding)
    from forge_runtime.goal.rules import end_notes

    end_notes.wedged(project.ledger_root, binding, why)  # said now: the record may come late


_TAKEN_OVER = "taken over"


def _person_after(chunk: transcript.Chunk, start: int) -> int:
    """The index of the first person's prompt in the chunk after `start`, else its end."""
    return next((index for index in range(start, len(chunk.entries))
                 if chunk.prompt_origin(chunk.entries[index]) == transcript.PERSON),
                len(chunk.entries))


def _person_took_over(project: Project, binding: dict,
                      chunk: transcript.Chunk) -> list[transcript.Verdict]:
    """A person's own prompt on a goal whose `met` forge holds (gates/held.py) ends it, as
    a verdict at that prompt; a prompt the host sent (a wake-up, a cron) never does."""
    person = next((index for index, entry in enumerate(chunk.entries)
                   if chunk.prompt_origin(entry) == transcript.PERSON), None)
    if person is None:
        return []
    from forge_runtime import gates

    if not gates.in_play(project):
        return []
    from forge_runtime.gates import files, held

    goal = witnessed_ledger(project, binding["nonce"]).current().goal
    if goal["status"] != ACTIVE or not held.is_held(files.read_record(project, goal["nonce"]),
                                                    goal):
        return []
    return [transcript.Verdict(_TAKEN_OVER, None, person)]


def _forge_continued(project: Project, ledger) -> bool:
    """Whether forge's own reply to the goal's last charged Stop continued the session (its
    gates record's `continued_at`, gates/held.py)."""
    from forge_runtime import gates

    if not gates.in_play(project):
        return False
    from forge_runtime.gates.files import read_record

    continued = read_record(project, ledger.nonce).get("continued_at")
    return continued == ledger.current().goal["turn_count"]


class storage_errors:  # noqa: N801 (used as `with storage_errors(project):`)
    """Turn a failed write into the refusal that names its condition (storage.py). A class,
    not `contextlib.contextmanager`: `contextlib` costs every charging Stop a few ms."""

    def __init__(self, project: Project) -> None:
        self.project = project

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, traceback) -> bool:
        if isinstance(exc, OSError):
            from forge_runtime.goal.store.unwritable import unwritable

            raise unwritable(exc, self.project.ledger_root) from None
        return False


# -- Stop ---------------------------------------------------------------------------------

def confirm_at_end(event: dict) -> None:
    """At SessionEnd, a person's `/goal` no Stop confirmed, whose first turn the transcript
    shows finished: confirm and charge it as its Stop would have. That Stop never ran when
    the turn ended on an API error (measured: `claude -p` ends the StopFailure hook of a
    usage limit as it exits, before it has charged anything) or was killed; the turn ran
    all the same, so it is charged."""
    path = event.get("transcript_path") or ""
    if _reader(event).read_since(path, 0).turns():
        on_stop(event)


def on_stop(event: dict, confirm_pending: bool = True) -> dict | None:
    """Confirm a pending activation, then charge this turn, and every earlier one the
    transcript shows uncharged, to the session's goal.

    `confirm_pending` is False for `forge ledger charge`, whose transcript path comes from a
    command line rather than the host.
    """
    project = sessions.project_for(event)
    session = event["session_id"]
    involved = sessions.involvement(project.ledger_root, session)
    if not confirm_pending:
        involved.discard(sessions.PENDING)
    if sessions.WITNESSED in involved:  # the ledger lost this session's binding
        try:
            return _lost_binding(project, session)
        except ForgeError as exc:
            return _refused(exc, project)
    if not involved:
        return None
    try:
        with storage_errors(project):
            return _stop_bound(project, event, involved)
    except ForgeError as exc:
        return _refused(exc, project, session)


def _lost_binding(project: Project, session: str) -> dict | None:
    """A session the witness knows as bound has no binding in the ledger: with its goal
    still in the ledger (only the binding deleted), stop it with the way back; with the goal
    gone too (the ledger deleted, replaced or relocated), fail closed."""
    from forge_runtime.goal.store.ledger import ACTIVE, EXHAUSTED, Ledger
    from forge_runtime.goal.sync.witness import Witness

    witness = Witness(project)
    nonce = witness.bound_goal(session)
    if nonce is None:  # another repository's session
        return None
    ledger = Ledger(project.ledger_root, nonce, witness=witness)
    if not os.path.isdir(ledger.dir):
        raise witness.lost_binding(session, nonce)
    with ledger.lock():
        head = ledger.head()
        witness.check(ledger, head)
    if head.goal["status"] not in (ACTIVE, EXHAUSTED):
        return None
    return on_unbound_goal(head.goal["objective"], "its binding is missing")


def on_unbound_goal(condition: str, why: str = "its binding is missing") -> dict | None:
    """The reply for a session in which the host's native goal `condition` runs (native.py)
    while forge counts no turn of it: its binding deleted, a goal set before forge was
    installed, or a goal forge recorded as ended on a verdict the host did not keep (the
    transcript is a file an agent can append to). End it; the person's `/goal` binds or
    reopens it with the count it had."""
    from forge_runtime import hints

    objective = normalise(condition)
    if not objective:
        return None
    return stop_session(hints.error(
        f"FORGE_GOAL_UNBUDGETED: this session's native /goal runs while forge counts none "
        f"of its turns ({why})", f"/goal {objective}",
        "binds this session again; the objective keeps its count").render())


def _refused(exc: ForgeError, project: Project, session: str | None = None) -> dict:
    """The reply that ends the session on `exc`, with where the work stands (`checkpoint`,
    imported only here: a Stop that charges and says nothing never needs it). A wedged
    ledger is owed its end (`owe_end`)."""
    from forge_runtime.goal.store.lock import WEDGED
    from forge_runtime.goal.sync.ledger_location import MOVED
    from forge_runtime.goal.views import checkpoint

    if exc.code in (TAMPERED, MOVED):  # nothing is recorded: the person hears of it now
        from forge_runtime.goal.rules import end_notes

        end_notes.refused(project.ledger_root, session, exc.code, exc.message,
                     exc.hint().render())
    if exc.code == WEDGED and session is not None:
        from forge_runtime.goal.rules.charging import WEDGED as ENDED_WEDGED

        try:  # noqa: SIM105 (contextlib costs a Stop a few ms: see storage_errors)
            owe_end(project, session, ENDED_WEDGED, f"{WEDGED}: {exc.message}")
        except (ForgeError, OSError):  # the reply ends autonomy all the same
            pass
    return stop_session(checkpoint.refusal(exc, project.state_path))


def _confirm_pending(project: Project, event: dict, binding: dict | None,
                     chunk: transcript.Chunk) -> tuple[dict | None, transcript.Chunk]:
    from forge_runtime.goal.hosts import host_adapter as goal_host
    from forge_runtime.goal.rules import activation, qualification

    session = event["session_id"]
    pending = sessions.read_pending(project.ledger_root, session) or {}
    prompt_id = pending.get("prompt_id")
    set_at = None
    if isinstance(prompt_id, str):
        def confirmed(seen: transcript.Chunk):
            return seen.person_set_goal(prompt_id, str(pending.get("objective")))

        chunk = _reader(event).follow(event.get("transcript_path") or "", chunk, confirmed)
        set_at = confirmed(chunk)
        if set_at is None and chunk.person_set_goal(prompt_id, None) is not None:
            # the host did set a goal for the person's prompt, but not the objective forge
            # saw: that goal would run with no budget, so end it (the pending note stays as
            # evidence)
            raise qualification.blocked("the host set a goal for this /goal prompt whose "
                                        "objective forge cannot match to the prompt, so it "
                                        "cannot be budgeted", "forge doctor")
    if set_at is None:  # not a person's /goal: never activates
        sessions.drop_pending(project.ledger_root, session)
        return binding, chunk
    from forge_runtime.goal.hosts.nesting import require_person

    try:  # a session an agent started: its host set a goal no person gave, so it ends
        require_person(str(pending.get("objective")))
    except ForgeError:
        sessions.drop_pending(project.ledger_root, session)
        raise
    qualification.require(project, os.environ.get("CLAUDE_PLUGIN_ROOT"))
    from forge_runtime.sandbox import posture

    sandbox = posture.for_goal(project, host_posture(project, event))
    recorded = pending.get("recorded")
    from forge_runtime.goal.store import prompt_notes

    note = prompt_notes.found(project.ledger_root, session)
    _catch_up_goal_of(project, str(pending["objective"]), session)
    started = activation.activate(project, pending["objective"], session,
                                  recorded if isinstance(recorded, dict) else None, sandbox,
                                  activation.clock_start(pending.get("at")),
                                  _prompt_plan(project, event, note),
                                  (note or {}).get("limits"), goal_host.name(event))
    # the pending note stays until the binding is written (`_stop_bound`): a hook killed in
    # between confirms again at the next Stop (activation binds idempotently) instead of
    # leaving the session unbound with its native goal running unbudgeted
    binding = {"nonce": started.goal["nonce"], "objective": started.goal["objective"],
               "repository": started.goal["repository"]}
    from forge_runtime.goal.sync import remote

    published_on = remote.configured(project)
    if published_on is not None or os.path.exists(os.path.join(
            project.ledger_root, started.goal["nonce"], REMOTE_STATE)):
        # what this person's /goal grants here, whatever tranches a chain that came from a
        # remote (now or before `goal.remote` was taken out) holds
        binding["allowance"] = started.goal["turn_count"] + TRANCHE
    if published_on is not None:  # every later hook of the session publishes without asking
        binding["remote"] = published_on
        if started.notice is not None:  # said once, by the publish step of this Stop
            remote.write_state(witnessed_ledger(project, started.goal["nonce"]),
                               failed=started.notice)
    return binding, chunk.after(set_at)


def _catch_up_goal_of(project: Project, objective: str, session: str) -> None:
    """Before a person's `/goal` applies: the turns its goal's other sessions left owed
    (`catch_up_sessions`), so a new tranche or a new session starts from every turn worked."""
    from forge_runtime.goal.store.objective import objective_hash
    from forge_runtime.goal.store.objective_index import find_nonce

    nonce = find_nonce(project.ledger_root, objective_hash(normalise(objective)))
    if nonce is not None and os.path.isdir(os.path.join(project.ledger_root, nonce)):
        catch_up_sessions(project, nonce, session)


def _prompt_plan(project: Project, event: dict, note: dict | None) -> dict | None:
    """The plan's reading the person's `/goal` prompt found (`note`, goal/store/prompt_notes.py):
    where the goal's own use of the week starts (goal/budget/plan.py), and no higher than what the
    host reports now (`plan.no_higher`): a start set high would hide what the goal uses."""
    if not note or note.get("plan") is None:
        return None
    from forge_runtime.goal.budget import plan
    from forge_runtime.goal.hosts import plan_readings

    return plan.no_higher(note["plan"], plan_readings.current(event, project.ledger_root))


def _stop_bound(project: Project, event: dict, involved: set[str]) -> dict | None:
    from forge_runtime.goal.store.ledger import ACTIVE, repository_id, tampered

    session = event["session_id"]
    path = event.get("transcript_path") or ""
    binding = sessions.read_binding(project.ledger_root, session) \
        if sessions.BOUND in involved else None
    chunk = _read_bound(event, binding) if binding else _reader(event).read_since(path, 0)
    if sessions.PENDING in involved:
        binding, chunk = _confirm_pending(project, event, binding, chunk)
    if binding is None:
        return None
    if binding.get("repository") != repository_id(project.ledger_root):
        from forge_runtime.goal.sync.remote_state import known_repository

        if not known_repository(project.ledger_root, binding.get("repository")):
            raise tampered(f"session {session} is bound to a goal of another repository")
    ledger = witnessed_ledger(project, binding["nonce"])
    if not chunk.turns() and (ledger.current().goal["status"] == ACTIVE or chunk.open_origin(
            chunk.turn_origins(binding.get("prompt_origin"))[1]) is not None):
        # a new turn whose entry the host has not written yet (the TUI writes late), or a
        # repeated Stop; after the goal ended, only a turn some prompt opened is waited for
        # (the host's continuation after a usage limit: it goes on the ledger over budget)
        chunk = _reader(event).follow(path, chunk, lambda seen: seen.turns())
    turns = chunk.turns()
    turn = turns[-1].uuid if turns else binding.get("last_turn")
    if turn is None:
        raise tampered("the transcript shows no finished turn to charge", "forge goal status")
    running = chunk.running_condition()
    if running is not None and normalise(running) != binding.get("objective"):
        # the host's native goal is not the one this session is bound to (a queued /goal
        # the first Stop could not confirm yet, or a confirmation an agent forged)
        return on_unbound_goal(running, f"this session is bound to goal {binding['nonce']}, "
                                        "another objective")
    seen = host_seen(project, event, binding)
    result = _catch_up(project, binding, chunk, session, turn, path, at_stop=True, seen=seen)
    from forge_runtime.goal.hosts import host_prompts

    host_prompts.remember(binding, event)  # what the session's wake-ups and crons will send
    _remember(project, session, binding, path, chunk)
    if sessions.PENDING in involved:
        sessions.drop_pending(project.ledger_root, session)
    reply = _reply_after_charge(project, binding, event, result) or \
        _plan_unseen(project, event, binding, result.goal, seen)
    if binding.get("remote"):
        from forge_runtime.goal.sync.publisher import after_event

        notice = after_event(project, binding, result.goal, now=sessions.PENDING in involved,
                             can_tell=not (reply or {}).get("systemMessage"))
        if notice is not None:
            reply = {**(reply or {}), "systemMessage": notice}
    return reply


PLAN_UNAVAILABLE_CODE = "FORGE_GOAL_PLAN_UNAVAILABLE"
# how long a Claude Code Stop waits for the status line's first reading of a goal with plan
# ceilings (it redraws a moment after each response; a Stop can come first)
PLAN_WAIT_SECONDS = 2.0


def host_seen(project: Project, event: dict, binding: dict, wait: bool = True):
    """What the host reports beside the turns (charging.Seen): for a goal with plan
    ceilings, the newest reading of its plan's windows (goal/budget/plan.py); a reading forge did
    not write fails closed (the tamper error)."""
    from forge_runtime.goal.rules import charging

    goal = binding.get("goal")
    if not isinstance(goal, dict):  # the Stop that confirms a /goal: no charge left one yet
        goal = witnessed_ledger(project, binding["nonce"]).current().goal
    if not isinstance(goal.get("plan_ceilings"), dict):
        return charging.Seen()
    from forge_runtime.goal.hosts import plan_readings
    from forge_runtime.goal.hosts.host_adapter import adapter

    reading = plan_readings.current(event, project.ledger_root)
    if wait and adapter(event) is None and not (reading or {}).get("windows"):
        import time

        deadline = time.monotonic() + PLAN_WAIT_SECONDS
        while time.monotonic() < deadline and not (reading or {}).get("windows"):
            time.sleep(0.1)
            reading = plan_readings.current(event, project.ledger_root)
    return charging.Seen(plan=reading if (reading or {}).get("windows") else None)


def _plan_unseen(project: Project, event: dict, binding: dict, goal: dict,
                 seen) -> dict | None:
    """A goal with plan ceilings whose host reported no plan windows, or none of a window
    the goal watches: forge cannot hold it to them, so it ends here (fail closed), recorded
    as ended for want of the plan's figures, with what would let forge see them."""
    from forge_runtime.goal.budget import plan
    from forge_runtime.goal.hosts.host_adapter import adapter

    if not isinstance(goal.get("plan_ceilings"), dict) or seen is None or \
            goal.get("status") != ACTIVE:
        return None
    blind = plan.unwatched(goal) if seen.plan is not None else []
    if seen.plan is not None and not blind:
        return None
    from forge_runtime import hints
    from forge_runtime.goal.views import checkpoint

    if adapter(event) is not None:  # Codex: the windows come with a ChatGPT sign-in's replies
        where = ("the rollout's token_count events carry no rate limits (an API key login "
                 "reports none)")
        fix, why = "codex login", ("signs Codex in with a ChatGPT plan, whose replies report "
                                   "the plan's windows")
    else:
        where = ("forge's status line got no `rate_limits` from the host (an API key login, "
                 "or a session without forge's status line: `claude -p` draws none)")
        fix, why = "forge init --statusline", ("shows forge the plan's windows in an "
                                               "interactive session of a subscription login")
    if blind:  # the plan has no such window: only taking it out of goal.plan helps
        from forge_runtime.goal.hosts.unreported_windows import way_on

        where = (f"the host reports no figure of its {' or '.join(blind)} window, which the "
                 "goal watches")
        fix, why = way_on(goal, seen.plan.get("windows") or {})
    from forge_runtime.goal.rules import charging

    ledger = witnessed_ledger(project, goal["nonce"])
    binding["goal"] = charging.end(ledger, project.state_path, "cancel", event["session_id"],
                                   f"{PLAN_UNAVAILABLE_CODE}: {where}",
                                   charging.PLAN_UNAVAILABLE)
    binding["goal_seq"] = ledger.pointer()
    sessions.write_binding(project.ledger_root, event["session_id"], binding)
    if not blind:
        why += f"; or remove goal.plan from .forge/guard.yaml, then type /goal " \
               f"{goal['objective']}"
    text = hints.error(
        f"{PLAN_UNAVAILABLE_CODE}: goal {goal['nonce']} has plan ceilings "
        f"(.forge/guard.yaml goal.plan), and {where}, so forge cannot hold it to them; "
        "forge ended it", fix, why).render()
    return stop_session(checkpoint.stamped(text, project.state_path))


def _reply_after_charge(project: Project, binding: dict, event: dict, result) -> dict | None:
    """What the Stop answers once its turns are charged: the budget spent, the goal ended
    while the host keeps it running, the stuck warning and the last-turn notice
    (goal/views/wrapup.py), or nothing."""
    from forge_runtime.goal.rules import charging
    from forge_runtime.goal.store.ledger import EXHAUSTED

    if result.goal["status"] == EXHAUSTED:
        from forge_runtime.goal.views import checkpoint

        return stop_session(checkpoint.stamped(
            exhausted_text(result.goal, result.late, result.owed, overrun=result.overrun,
                           pending=pending_words(event)),
            project.state_path))
    if event.get("stop_hook_active") is True and (
            result.outcome == charging.ENDED or result.host_turn):
        # the host continues a goal forge recorded as ended: if its native goal for the
        # objective still runs, the end forge believed was not the host's (a forged `met`),
        # which says more than "a turn the host started" (FORGE_GOAL_UNBUDGETED)
        running = _ended_but_running(binding, event)
        if running is not None or not result.host_turn:
            return running
    if result.host_turn and result.goal["status"] != ACTIVE:
        from forge_runtime.goal.views import checkpoint

        return stop_session(checkpoint.stamped(ended_turn_text(result.goal, result.overrun),
                                               project.state_path))
    if past_allowance(binding, result.goal):
        from forge_runtime.goal.views import checkpoint

        return stop_session(checkpoint.stamped(allowance_text(result.goal),
                                               project.state_path))
    from forge_runtime.goal.views import wrapup

    return wrapup.after_charge(project, event, binding, result, stuck_reply(
        result.goal, result.unchanged_turns) if result.stuck else None)


def _ended_but_running(binding: dict, event: dict) -> dict | None:
    """A Stop hook continues a session whose goal forge recorded as ended: if the host's
    native goal for that objective still runs, the verdict forge believed was not the
    host's (a forged `met`), so the session stops instead of running uncounted."""
    condition = _reader(event).running_goal(event.get("transcript_path") or "")
    if condition is None or normalise(condition) != binding.get("objective"):
        return None
    return on_unbound_goal(condition, f"goal {binding['nonce']} was recorded as ended")
