"""The final gates of a goal: what its Stop hook tells the model, and whether a met goal is
verified.

A goal is complete only when forge's own run of the final gates its `/goal` recorded
(recorded.py, confirm.py) passes; receipts of `forge gate run` only tell the model what to
run. While a goal runs, each Stop compares the gates with what it last told the model; when
that changed, the reply carries the gates that need a run (and the `Next:` that runs them)
as next-turn context, which the host's own goal evaluator reads too. A Stop at which every
receipt says fresh and passing (the model is done) runs the recorded gates itself, within
the hook's budget, and tells the model if they do not pass. When the host judges the goal
met, forge records whether its own run passed on the tree as it is then: if not, the goal
is met but unverified until `forge goal verify-gates` finds them passing.

    <ledger root>/gates/<nonce>.json   what the model was last told; forge's own run
                                       (`confirmed`); the met verdict

Only a session bound to a goal in a project with `.forge/gates.yaml` (or whose ledger keeps
gates records) pays anything: every other Stop costs two stats here.
"""

from __future__ import annotations

from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.gates import defined, files
from forge_runtime.gates.reading import VERIFY, Reading, unrecorded
from forge_runtime.goal.store.ledger import ACTIVE, COMPLETE, now
from forge_runtime.project import paths_of

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `hints` is imported where a reply is written
    from forge_runtime import hints

UNVERIFIED = "FORGE_GOAL_UNVERIFIED"
# What forge's own run of the recorded gates may take in each hook (confirm.py), below the
# host's limits: Stop and UserPromptSubmit 30 s; SessionEnd 10 s (a host adapter may say less).
STOP_BUDGET_SECONDS = 20.0
PROMPT_BUDGET_SECONDS = 20.0
SESSION_END_BUDGET_SECONDS = 6.0


def session_end_budget(event: dict) -> float:
    """What a SessionEnd hook may spend: the host's adapter says, else Claude Code's."""
    from forge_runtime.goal.hosts import host_adapter

    handed = host_adapter.adapter(event)
    return SESSION_END_BUDGET_SECONDS if handed is None else handed.SESSION_END_BUDGET_SECONDS


def _charged_goal(outcome) -> dict | None:
    """The goal the Stop charged; for a Stop that ended before its charge, the bound goal's
    head."""
    if outcome.goal is not None:
        return outcome.goal
    return _head_of(outcome.project, (outcome.binding or {}).get("nonce"))


def _head_of(project, nonce) -> dict | None:
    """Goal `nonce`'s head, read through the witness; None for a binding that names none."""
    if not isinstance(nonce, str):
        return None
    from forge_runtime.goal.sync.witness import witnessed_ledger

    return witnessed_ledger(project, nonce).current().goal


# -- the Stop and SessionEnd hooks --------------------------------------------------------

def after_stop(event: dict, outcome) -> dict | None:
    """The reply of the goal's Stop (`outcome`, goal/events/stop.py's StopOutcome), with the
    gates' notice added. The caller has found the gates in play (`gates.in_play`).

    While a goal's final gates are not fresh and passing by forge's own knowledge, every
    Stop that charged a turn tells the model which gates to run and what failed, as model
    context: the host answers that with another model request (measured), so this is what
    keeps a goal going after the host judged it met (held.py). Gates that turned fresh are
    told to the person, once. A reply that ends the session is returned as it is (said
    unverified when forge holds the host's `met`). A broken gates file is told to the model
    like any other problem, never a reason to stop the goal.
    """
    from forge_runtime.gates import held

    project, reply = outcome.project, outcome.reply
    if reply and reply.get("continue") is False:
        return _ended(outcome)
    goal = _charged_goal(outcome)
    if goal is None:
        return reply
    if goal["status"] == COMPLETE:
        note_met(project, goal, STOP_BUDGET_SECONDS)
        return reply
    if goal["status"] != ACTIVE:
        return reply
    reading = Reading(project, goal)
    if reading.recorded is None and not defined(project):
        return reply  # a goal set with no gates file, in a project that still has none
    record = files.read_record(project, goal["nonce"])
    holding = reading.error is None and held.is_held(record, goal)
    if reading.receipts_fresh or holding:
        # the model is done (its receipts say so, or the host said met): forge runs the
        # recorded gates itself, reusing what passed on these very files
        from forge_runtime.gates import confirm

        confirmed = confirm.confirm(paths_of(project), goal["nonce"], reading.recorded,
                                    STOP_BUDGET_SECONDS)
        if confirmed["passed"] and holding:
            return held.complete(project, goal, event["session_id"], reading)
        if not confirmed["passed"] and reading.receipts_fresh:
            reading.unconfirmed = confirmed
        record = files.read_record(project, goal["nonce"])
    from forge_runtime.gates import streak

    told, now_seen = record.get("told"), reading.signature()
    updated, stuck_for = streak.observe({**record, "told": now_seen}, reading,
                                        goal["turn_count"])
    continuing = not reading.verified and held.may_continue(goal, updated)
    if continuing:
        updated["continued_at"] = goal["turn_count"]
    if updated != record:
        files.write_record(project, goal["nonce"], updated)
    # the first look speaks only of gates that need something; later, of any change
    changed = told != now_seen if told is not None else bool(now_seen)
    if reading.error is not None and held.is_held(updated, goal):
        # the gates a person recorded cannot be judged (their file changed or broke, which
        # the agent may not touch): no turn of the model's can verify the goal, so it ends
        # as the host judged it, and the person hears why
        note_met(project, held.release(project, goal, event["session_id"],
                                       "its final gates could not be judged"),
                 STOP_BUDGET_SECONDS)
        return _with_notice(None, reading.body(goal["nonce"]), reading.hint(project),
                            to_model=False)
    if not reading.verified:
        if not continuing:
            return reply  # a Stop the host repeated with no new turn: never continue it
        body = reading.body(goal["nonce"])
        if stuck_for:
            warned = streak.warning(streak.failing_names(reading), stuck_for, goal)
            from forge_runtime.goal.rules import end_notes

            end_notes.stuck(project.ledger_root, goal, warned)
            body = warned + "\n" + body
        return _continuing(event, _with_notice(reply, body, reading.hint(project),
                                               to_model=True,
                                               to_person=changed or bool(stuck_for)))
    if changed:
        return _with_notice(reply, reading.body(goal["nonce"]), reading.hint(project),
                            to_model=False)
    return reply


def _continuing(event: dict, reply: dict) -> dict:
    """The reply that keeps the goal going, in the host's terms: Claude Code answers model
    context with another model request; Codex accepts no context on Stop (hosts/codex.py
    drops it) and makes another turn for a block with the same text as its reason: the
    host's adapter says (goal/hosts/host_adapter.py)."""
    from forge_runtime.goal.hosts import host_adapter

    handed = host_adapter.adapter(event)
    return reply if handed is None else handed.continuing(reply)


def _ended(outcome) -> dict:
    """A reply that ends the session, saying the goal is unverified when forge holds the
    host's `met` on it; a ledger forge cannot read leaves the reply as it is."""
    from forge_runtime.gates import held

    project, reply = outcome.project, outcome.reply
    try:
        goal = _charged_goal(outcome)
        record = files.read_record(project, goal["nonce"]) if goal else {}
        if goal is None or not held.is_held(record, goal):
            return reply
        summary = _as_last_run(project, goal, record).summary()
        return held.unverified_stop(project, goal, reply, summary)
    except ForgeError:
        return reply


def _as_last_run(project, goal: dict, record: dict) -> Reading:
    """The goal's gates as they read now, with forge's last own run when the receipts say
    fresh and passing but that run did not pass (what a hook found, without running it)."""
    reading = Reading(project, goal)
    confirmed = record.get("confirmed")
    if reading.receipts_fresh and isinstance(confirmed, dict) and not confirmed.get("passed"):
        reading.unconfirmed = confirmed
    return reading


def _with_notice(reply: dict | None, body: str, hint: hints.Hint, to_model: bool,
                 to_person: bool = True) -> dict:
    """One message: an earlier notice's body (the stuck warning), the gates', and one hint;
    the gates' hint comes first, the earlier one's command becomes an `Or:`.

    Only what the model must act on goes into `additionalContext`: the host answers a Stop
    that carries it with another model request (measured, like a block), so gates that
    turned fresh are told to the person alone (`systemMessage`). The person hears of gates
    that still need work only when that changes (`to_person`), not at every turn.
    """
    from forge_runtime import hints

    lines = []
    alternatives: list[str] = []
    earlier = (reply or {}).get("systemMessage")
    if earlier:
        try:
            before, earlier_hint = hints.split_rendered(earlier)
            alternatives.extend(hints.commands_of(earlier_hint))
        except ValueError:  # not ours to reword: keep it whole
            before = earlier.splitlines()
        lines.extend(before)
    lines.append(body)
    if alternatives and hint.marker == hints.NEXT:
        hint = hints.next_(hint.text, hint.rationale, or_=[*hint.alternatives, *alternatives])
    text = "\n".join([*lines, hint.render()])
    merged = {**(reply or {})}
    if to_person or earlier:
        merged["systemMessage"] = text
    if to_model or "hookSpecificOutput" in merged:
        merged["hookSpecificOutput"] = {"hookEventName": "Stop", "additionalContext": text}
    return merged


def note_if_met(project, event: dict, binding: dict, budget: float) -> None:
    """Record the verdict on a goal this event found met. The host writes a turn's verdict
    while that turn's Stop hooks run, so it is first seen by the session's next prompt or
    its end (SessionEnd), before anyone works on past it. A goal whose `met` forge held for
    its gates (held.py) ends at the session's end too. A prompt does not end it here: the
    hook's input cannot tell a person's from one the host sent (a wake-up, a cron), so the
    Stop of the turn it starts decides, from the host's record of who sent it
    (goal/events/). `binding`: the session's, as the hook's catch-up left it; the caller
    has found the gates in play. `budget`: the seconds forge may spend running the recorded
    gates within this hook's time limit."""
    from forge_runtime.gates import held

    goal = _head_of(project, binding.get("nonce"))
    if goal is not None and goal["status"] == ACTIVE and \
            event.get("hook_event_name") == "SessionEnd" and \
            held.is_held(files.read_record(project, goal["nonce"]), goal):
        goal = held.release(project, goal, event["session_id"], "the session ended")
    if goal is not None and goal["status"] == COMPLETE:
        note_met(project, goal, budget)


def judge(project, goal: dict, budget: float | None) -> tuple[bool, str]:
    """Whether forge's own run of the goal's recorded final gates passes on the tree as it
    is (confirm.py), and why, in words."""
    from forge_runtime.gates import confirm, recorded

    gates = recorded.of_goal(paths_of(project), goal["nonce"])
    if gates is None:
        return False, unrecorded(goal).message
    confirmed = confirm.confirm(paths_of(project), goal["nonce"], gates, budget)
    return confirmed["passed"], confirm.describe(confirmed)


def note_met(project, goal: dict, budget: float | None) -> dict:
    """Record, once, whether the goal's recorded gates passed forge's own run when it was
    met."""
    record = files.read_record(project, goal["nonce"])
    if "met" in record:
        return record
    verified, why = judge(project, goal, budget)
    record = {**files.read_record(project, goal["nonce"]),
              "met": {"at": now(), "verified": verified, "why": why}}
    if verified:
        record["verified_at"] = record["met"]["at"]
    files.write_record(project, goal["nonce"], record)
    return record


# -- `forge goal status` and `forge goal verify-gates` -------------------------------------

def status_of(project, goal: dict) -> tuple[str, hints.Hint | None]:
    """A line on the goal's gates for `forge goal status`, and the hint that overrides the
    goal's own way on (None: the gates ask nothing)."""
    from forge_runtime import hints

    if goal["status"] == COMPLETE:
        record = files.read_record(project, goal["nonce"])
        if record.get("verified_at"):
            return f"verified at {record['verified_at']}: forge ran every recorded final " \
                   "gate itself and all passed", None
        why = (record.get("met") or {}).get("why") or "not judged yet"
        return f"met but unverified: {why}", hints.next_(
            VERIFY, "runs the goal's recorded final gates, confined, and records the verdict")
    from forge_runtime.gates import held

    record = files.read_record(project, goal["nonce"])
    reading = Reading(project, goal)
    running = goal["status"] == ACTIVE and not reading.verified
    line = held.status_line(record, goal, reading.summary()) or reading.summary()
    return line, reading.hint(project) if running else None


def verify(project, goal: dict) -> tuple[dict, dict]:
    """forge runs the goal's recorded final gates itself (no budget but their timeouts);
    refuse (exit 2) unless all pass; record a met goal as verified. Returns the gates record
    (with `reset`: why a record that was not forge's was dropped) and forge's run."""
    from forge_runtime.gates import confirm, recorded

    gates = recorded.of_goal(paths_of(project), goal["nonce"])
    if gates is None:
        raise unrecorded(goal)
    # a person's run: a record that is not forge's is dropped whole, nothing of it reused
    reset = files.reset_record(project, goal["nonce"])
    confirmed = confirm.confirm(paths_of(project), goal["nonce"], gates, None)
    if not confirmed["passed"]:
        failing = confirm.not_passing(confirmed)
        fix = f"forge gate run {' '.join(failing)}" if failing else "forge gate status"
        raise ForgeError(f"goal {goal['nonce']} cannot be called verified: "
                         f"{confirm.describe(confirmed)}", fix, exit_code=EXIT_REFUSED,
                         code=UNVERIFIED, rationale="after fixing what its log shows")
    record = files.read_record(project, goal["nonce"])
    if goal["status"] == COMPLETE and not record.get("verified_at"):
        record = {**record, "verified_at": now()}
        files.write_record(project, goal["nonce"], record)
    return ({**record, "reset": reset} if reset else record), confirmed
