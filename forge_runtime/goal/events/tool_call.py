"""PreToolUse: a turn that runs past its tranche's token, dollar or time ceiling,
or past the share of the plan's windows the goal may use (goal/budget/plan.py: the host's newest
reading), ends at its next tool call, not at its Stop an hour later.

A goal session's PreToolUse asks `spent(event)`. The last event that charged the session
left the goal as the ledger then had it in the binding (`goal`); this adds what the turn
has spent since: the binding's `usage_open` (the part of the turn an earlier event read),
then the transcript lines and subagent transcripts added since, read from a cursor of its
own (sessions.read_cursor), so each call reads only the bytes added since the call
before. When the charged tokens plus these reach the ceiling, or the tranche's clock has
run out, the call is denied with FORGE_GOAL_BUDGET_EXHAUSTED and the checkpoint: the model
gets the denial as the tool's result, the turn ends, and its Stop charges it and ends
autonomy.

A goal that has ended, and the tools that start later turns, are after_end.py's: a turn the
host started after the end does no work.

The same holds before any Stop has bound the session: a person's `/goal` prompt
leaves a pending activation with the ceilings that `/goal` will give its goal, the time and
the transcript offset it arrived at (first_turn.first_turn_note; on Codex the first tool call
notes it from the goal store and the rollout, hosts/codex.py), and the first turn's tool
calls are held to those, counted from that offset with a cursor of their own.

An early stop only: the Stop's charge, with its anchored reads, stays what counts. The
cursor never moves the binding's offset (the Stop must still see every entry since the
last charged turn: verdicts, the closing entry). A goal whose binding names no ceiling
costs one binding read.
"""

import os

from forge_runtime.goal.budget import ceilings
from forge_runtime.goal.store import sessions
from forge_runtime.goal.store.layout import head_file

# Claude Code's tools that make a model request of their own whose usage no transcript
# holds (measured for WebSearch: one request on the session's model, absent from the
# transcript and from the tool's result; WebFetch's summary, by the binary, on the small model)
UNCOUNTED_MODEL_CALLS = {
    "WebSearch": "runs a model request of its own",
    "WebFetch": "summarises the page with a model request of its own",
}
# after_end.py's LATER_TURNS and GOAL_LOOPS, named here so that an active goal's other tool
# calls never import it (tests/test_goal_ended.py holds the two to each other)
_LATER_TURN_TOOLS = frozenset(("ScheduleWakeup", "CronCreate", "RemoteTrigger", "Monitor",
                               "SetGoal", "create_goal"))
FIRST_TURN = sessions.FIRST_TURN_CURSOR
# how long a tool call waits for the response that asked for it to reach the transcript
# (PreToolUse's deadline is 2 s)
RESPONSE_WAIT_SECONDS = 0.5


def spent(event: dict, root: str | None = None) -> str | None:
    """The deny reason when the bound goal's tranche is spent on tokens, dollars or time,
    or when the first turn of a `/goal` no Stop has confirmed yet has reached the ceilings
    that goal will have (`_first_turn_spent`), else None. `root`: the event's ledger root,
    when the hook has found it. The session's involvement is read here, as late as it can
    be: a confirming Stop may bind the session meanwhile."""
    session = event["session_id"]
    if root is None:
        root = sessions.event_ledger_root(event)
    involved = sessions.involvement(root, session)
    reason = _bound_spent(event, root, session) if sessions.BOUND in involved else None
    if reason is None and sessions.PENDING in involved:
        reason = _first_turn_spent(event, root, session)
    return reason


def _bound_spent(event: dict, root: str, session: str) -> str | None:
    from forge_runtime.errors import ForgeError

    try:
        binding = sessions.read_binding(root, session) or {}
        goal = _current_goal(root, binding)
    except ForgeError as exc:  # a binding or a ledger that is not forge's: nothing runs on it
        return exc.hint().render()
    if not isinstance(goal, dict):
        return None
    if goal.get("status") != "active" or event.get("tool_name") in _LATER_TURN_TOOLS:
        from forge_runtime.goal.events.after_end import denial

        reason = denial(event, root, binding, goal)
        if reason is not None or goal.get("status") != "active":
            return reason
    return _unseen_limit(event, binding, goal) or _over(event, root, binding, goal, None)


def _unseen_limit(event: dict, binding: dict, goal: dict) -> str | None:
    """Codex runs no hook when its usage limit ends a turn (Claude Code runs StopFailure,
    which charges the turn at once), nor when a person resumes the goal after one (`/goal
    resume`): the resumed turn would work until its Stop charged the limit. Its rollout
    since the last charge says so first (codex_transcript.Chunk.usage_limited), so the tool
    call is denied and the Stop ends autonomy. Codex sessions only, and not for a goal that
    goes on after a usage limit."""
    from forge_runtime.goal.hosts.host_adapter import adapter, transcript_reader

    if adapter(event) is None or goal.get("after_usage_limit") == "continue":
        return None
    offset = binding.get("offset", 0)
    chunk = transcript_reader(event).read_since(event.get("transcript_path") or "",
                                                offset if isinstance(offset, int) else 0)
    if not chunk.usage_limited():
        return None
    from forge_runtime.goal.events.replies import USAGE_LIMIT_CODE, exhausted_hint
    from forge_runtime.goal.views import checkpoint

    text = (f"{USAGE_LIMIT_CODE}: the host stopped a turn of goal {goal.get('nonce')} at its "
            "plan's usage limit (its rollout says so), which ends the goal's autonomy; forge "
            "denies this tool call so the turn ends, and its Stop ends autonomy.\n"
            + exhausted_hint(goal).render())
    return checkpoint.stamped(text, sessions.project_for(event).state_path)


def _first_turn_spent(event: dict, root: str, session: str) -> str | None:
    """The ceilings of a person's `/goal` hold from its first tool call, before the Stop
    that confirms it (goal/events/): the pending activation holds the goal's ceilings as that
    `/goal` would set them and where the turn's usage starts. A restriction on a pending
    activation grants nothing; the pending note is dropped at the prompt's first Stop when
    the transcript shows no person's `/goal` (a model-scheduled one), so it never outlives
    that turn."""
    from forge_runtime.errors import ForgeError

    try:
        pending = sessions.read_pending(root, session) or {}
    except ForgeError as exc:  # a pending note that is not forge's: nothing runs on it
        return exc.hint().render()
    goal = pending.get("limits")
    if not isinstance(goal, dict) or not isinstance(pending.get("offset"), int):
        return None  # a note of a host whose /goal fires no hook until its first Stop
    start = {"offset": pending["offset"], "subagents": pending.get("subagents") or {},
             "usage_open": None, "objective": goal.get("objective"),
             "nonce": goal.get("nonce") or "(not yet activated)"}
    return _over(event, root, start, goal, FIRST_TURN)


def _over(event: dict, root: str, start: dict, goal: dict, cursor_kind: str | None
          ) -> str | None:
    """The denial when `goal` plus what the turn spent since `start` (a binding, or a
    pending activation's start) reaches its token or dollar ceiling, its clock has run out,
    or the host's plan windows reach the goal's plan ceilings."""
    tokens, minutes = goal.get("token_ceiling"), goal.get("minute_ceiling")
    usd = goal.get("usd_ceiling")
    if (isinstance(tokens, int) or isinstance(usd, (int, float))) and \
            event.get("tool_name") in UNCOUNTED_MODEL_CALLS:
        return _uncounted(event, goal)
    ceiling = None
    if ceilings.usage_limited(goal):
        # the host's usage limit stopped a turn, and the hook that charged it was cut off
        # before the exhaustion (`claude -p` ends StopFailure's process as it exits)
        ceiling = ceilings.USAGE_LIMIT
    elif isinstance(goal.get("plan_ceilings"), dict):
        over = _plan_over(event, root, goal)
        if isinstance(over, str):
            return over  # figures forge cannot vouch for, or none: nothing runs on them
        if over is not None:
            ceiling, goal = over
    if ceiling is None and isinstance(minutes, int) and \
            (ceilings.minutes_used(goal, ceilings.now()) or 0) >= minutes:
        ceiling = ceilings.MINUTES
    elif ceiling is None and (isinstance(tokens, int) or isinstance(usd, int)):
        pending = _pending_spend(event, root, start, goal if isinstance(usd, int) else None,
                                 cursor_kind)
        if pending is None:
            return _unreadable(event, start)
        goal = {**goal, "token_count": (goal.get("token_count") or 0) + pending[0],
                "picousd": (goal.get("picousd") or 0) + pending[1]}
        if isinstance(tokens, int) and goal["token_count"] >= tokens:
            ceiling = ceilings.TOKENS
        elif ceilings.usd_reached(goal):
            ceiling = ceilings.USD
    if ceiling is None:
        return None
    return _denial(event, goal, ceiling) if cursor_kind is None else \
        _first_turn_denial(event, goal, ceiling)


def _plan_over(event: dict, root: str, goal: dict):
    """(the plan ceiling reached, the goal with the host's reading) when the goal's plan
    ceilings are reached (goal/budget/plan.py), None when they are not; the denial's text when
    the reading is not forge's. A Claude Code session's own call is held to the figures of
    the answer that asked for it (goal/hosts/plan_freshness.py): denied when none come in
    time, or when they lack a window the goal watches (goal/hosts/unreported_windows.py);
    any other call to the
    newest reading."""
    from forge_runtime.errors import ForgeError
    from forge_runtime.goal.budget import plan
    from forge_runtime.goal.hosts import plan_readings

    asked = _asked_by(event)
    try:
        if asked is None:
            reading = plan_readings.current(event, root)
        else:
            from forge_runtime.goal.hosts.plan_freshness import reading_for_call

            reading = reading_for_call(event, root, asked)
    except ForgeError as exc:
        return exc.hint().render()
    if isinstance(reading, str):
        return reading
    if reading is not None and reading["windows"]:
        goal = plan.advanced(goal, reading)
        at = reading["at"]
    else:
        at = ceilings.epoch(ceilings.now())
    blind = plan.unwatched(goal) if asked is not None else []
    if blind:
        from forge_runtime.goal.hosts import unreported_windows

        return unreported_windows.denial(goal, blind, list(reading["windows"]))
    over = plan.over(goal, at)
    return (over[0], goal) if over else None


def _uncounted(event: dict, goal: dict) -> str:
    """The deny reason for a tool whose own model call no transcript shows, under a token
    ceiling it would spend past unseen."""
    from forge_runtime import hints
    from forge_runtime.goal.views import checkpoint

    tool = event["tool_name"]
    text = (f"FORGE_GOAL_UNCOUNTED_TOOL: {tool} {UNCOUNTED_MODEL_CALLS[tool]}, whose tokens "
            "reach no transcript, so forge could not count them against goal "
            f"{goal.get('nonce')}'s token or dollar ceiling; forge denies it while the "
            "tranche has one.\n" + hints.next_("forge goal status", "see the tranche's "
                                               "ceilings; a person's .forge/guard.yaml "
                                               "without `tranche: tokens` or `usd` lets it "
                                               "run").render())
    return checkpoint.stamped(text, sessions.project_for(event).state_path)


def _current_goal(root: str, binding: dict) -> dict | None:
    """The goal as this session's last charge left it in the binding, or, when the ledger
    has moved since (another session charged it, a person added a tranche), as its checked
    head says now (the tamper error when that head is not forge's)."""
    from forge_runtime import fastjson, safeio

    goal, nonce = binding.get("goal"), binding.get("nonce")
    if not isinstance(goal, dict) or not isinstance(nonce, str) or len(nonce) != 32:
        return None
    try:
        seq = fastjson.loads(safeio.read_bytes(head_file(root, nonce))).get("seq")
    except (OSError, ValueError, AttributeError):
        seq = None
    if seq == binding.get("goal_seq"):
        return goal
    from forge_runtime.goal.store.ledger import Ledger

    return Ledger(root, nonce).current().goal


def _pending_spend(event: dict, root: str, binding: dict, priced: dict | None,
                   cursor_kind: str | None = None) -> tuple[int, int] | None:
    """(counted tokens, picodollars) of the turn so far (none of them charged yet), the
    dollars only for a `priced` goal (one with a dollar ceiling); None when a subagent
    transcript forge read is gone or rewritten, or the goal's sealed price table is.
    `cursor_kind` keeps the first turn's cursor apart from a bound goal's."""
    from forge_runtime.goal.budget import pricing, usage

    try:
        usage.price_with(pricing.pricer_for(root, priced))
    except pricing.Unsealed:
        return None
    try:
        return _tally_pending(event, root, binding, cursor_kind)
    finally:
        usage.price_with(None)


def _tally_pending(event: dict, root: str, binding: dict, cursor_kind: str | None
                   ) -> tuple[int, int] | None:
    """`_pending_spend`'s reading, priced as it set up."""
    from forge_runtime.goal.budget import usage
    from forge_runtime.goal.hosts import transcript
    from forge_runtime.goal.hosts.host_adapter import transcript_reader

    reader, session = transcript_reader(event), event["session_id"]
    path = event.get("transcript_path") or ""
    cursor = sessions.read_cursor(root, session, cursor_kind)
    offset = binding.get("offset", 0)
    if not isinstance(cursor, dict) or cursor.get("from") != offset:
        # the first call since a charge: start from where the charge left the turn
        cursor = {"from": offset, "offset": offset, "tally": binding.get("usage_open"),
                  "subagents": binding.get("subagents") or {}, "helpers": None,
                  "model": binding.get("model")}
    tally = usage.Tally(cursor.get("tally"))

    def read(where: str, at: int):
        return transcript.read_lines(where, at, reader.USAGE_TOKENS, reader.Chunk)

    chunk = read(path, cursor.get("offset", offset))
    asked_in_chunk = transcript.tool_use_ids(chunk)
    asked = _asked_by(event)
    if asked is not None and asked not in (cursor.get("asked") or ()) \
            and asked not in asked_in_chunk:
        # the host starts PreToolUse before it has written the response that asked for
        # the call (measured on Claude Code: one response late, two on a loaded machine):
        # count that response too, so a crossing is caught at the next call
        chunk = transcript.follow(path, chunk,
                                  lambda seen: asked in transcript.tool_use_ids(seen),
                                  RESPONSE_WAIT_SECONDS, read)
        asked_in_chunk = transcript.tool_use_ids(chunk)
    chunk.model_before = cursor.get("model")
    for _, ident, model, spent in chunk.responses():
        tally.add_response(ident, model, spent)
    helpers = usage.Tally(cursor.get("helpers"))
    try:
        grown, marks = transcript.read_subagents(path, cursor.get("subagents") or {})
    except transcript.Unattributable:
        return None
    helpers.merge(grown)
    cursor.update(offset=chunk.end_offset, tally=tally.state(), subagents=marks,
                  helpers=helpers.state(), model=chunk.model_after,
                  asked=sorted(asked_in_chunk) or cursor.get("asked"))
    try:  # noqa: SIM105 (`contextlib` costs every guarded call of a goal session)
        sessions.write_cursor(root, session, cursor, cursor_kind)
    except OSError:  # the next call reads these bytes again; the Stop still charges them
        pass
    return (usage.counted(tally.by_model) + usage.counted(helpers.by_model),
            usage.picousd(tally.by_model) + usage.picousd(helpers.by_model))


def _asked_by(event: dict) -> str | None:
    """The id of the tool call a Claude Code session's own model asked for (its response is
    in the session's transcript), else None: Codex's calls, a subagent's (its responses are
    in its own transcript)."""
    from forge_runtime.goal.hosts.host_adapter import adapter

    ident = event.get("tool_use_id")
    if not isinstance(ident, str) or event.get("agent_id") or adapter(event) is not None:
        return None
    return ident


def _denial(event: dict, goal: dict, ceiling: str) -> str:
    from forge_runtime.goal.events.replies import exhausted_text
    from forge_runtime.goal.views import checkpoint

    text = exhausted_text(goal, ceiling=ceiling).replace(
        "; forge stopped it.", "; forge denies this tool call so the turn ends, and its Stop "
        "ends autonomy.", 1)
    return checkpoint.stamped(text, sessions.project_for(event).state_path)


def _unreadable(event: dict, binding: dict) -> str:
    from forge_runtime import hints

    objective = hints.sanitize(binding.get("objective") or "")
    return hints.error("FORGE_GOAL_LEDGER_TAMPERED: a subagent transcript forge read for goal "
                       f"{binding.get('nonce')} is gone or rewritten, so its tokens cannot be "
                       "counted", f"/goal {objective}",
                       "in a new session: the goal keeps its count").render()


def _first_turn_denial(event: dict, goal: dict, ceiling: str) -> str:
    """The denial of a first turn that reached the ceilings its `/goal` will have."""
    from forge_runtime import hints
    from forge_runtime.goal.events.replies import spent_words
    from forge_runtime.goal.views import checkpoint

    spent = spent_words(goal, ceiling).rsplit(" in ", 1)[0]  # no turn is charged yet
    objective = hints.sanitize(goal.get("objective") or "")
    text = (f"FORGE_GOAL_BUDGET_EXHAUSTED: the first turn of /goal {objective} {spent} before "
            "any Stop confirmed the goal; forge denies this tool call so the turn ends, and "
            "its Stop charges the turn and ends autonomy.\n"
            + hints.next_(f"/goal {objective}", "after that Stop: adds one more tranche",
                          or_=["/goal clear"]).render())
    state_path = sessions.project_for(event).state_path
    # a goal's first tranche has no state.md yet to show a checkpoint from
    return checkpoint.stamped(text, state_path) if os.path.exists(state_path) else text
