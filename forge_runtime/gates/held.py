"""A `met` verdict held for the final gates: the host's evaluator is not the last word.

The host's native `/goal` judges a goal met by a small model reading the transcript, and it
can say so while a final gate is stale or failing. A goal is complete only when forge's own
run of its recorded gates passes (confirm.py), so a Stop that finds the host's `met` on a
goal with recorded gates ends nothing (goal/events/): forge keeps the goal going, each
further turn charged like any other, and it ends:

- complete and verified, at the first Stop whose own run of the gates passes (the record
  names the receipts and forge's run);
- exhausted and unverified, when the ledger's ceiling comes first (the stop says so);
- complete and unverified, when a person takes over first (their next prompt, by the host's
  record of who sent it, at the Stop of the turn it starts; or the session's end: a
  person's Esc ends the turn, and what they type next ends the goal). A prompt the host
  sent (a scheduled wake-up, a cron, a task's notice) is no person: the goal stays held.

Claude Code writes a turn's verdict while that turn's Stop hooks run (HOST.md), so the Stop
that blocks first cannot know of it (on Codex the model's `update_goal` precedes its Stop);
the native goal is gone after it, and forge's reply is then all that continues the session
(model context on Claude Code, a block on Codex: gates/goal.py). A continuation is only
ever given for a turn the ledger charged since the last one (`may_continue`): a Stop the
host repeats without a new turn gets nothing, so forge never keeps a session going that it
does not count.

    <ledger root>/gates/<nonce>.json   "held": {"at", "activation_count"};
                                       "continued_at": the turn count forge last continued at
"""

from __future__ import annotations

from forge_runtime.goal.store.ledger import ACTIVE, COMPLETE, now
from forge_runtime.goal.sync.witness import witnessed_ledger

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_runtime.gates.reading import Reading

UNVERIFIED = "FORGE_GOAL_UNVERIFIED"
VERIFIED = "FORGE_GOAL_VERIFIED"


def hold_met(project, nonce: str) -> bool:
    """Hold the host's `met` on goal `nonce` if it has recorded final gates: True when held
    (the verdict then ends nothing). A goal with no gates recorded is met as the host says."""
    from forge_runtime.gates import files, in_play, recorded
    from forge_runtime.goal.store.ledger import Ledger
    from forge_runtime.project import paths_of

    if not in_play(project) or recorded.of_goal(paths_of(project), nonce) is None:
        return False
    current = Ledger(project.ledger_root, nonce).current().goal
    record = files.read_record(project, nonce)
    if not is_held(record, current):
        files.write_record(project, nonce, {**record, "held": {
            "at": now(), "activation_count": current.get("activation_count")}})
    return True


def is_held(record: dict, goal: dict) -> bool:
    """The host said `met` during this activation of the goal and forge holds it; a person's
    `/goal` that adds a tranche starts a new activation, which the host judges afresh."""
    held = record.get("held")
    return isinstance(held, dict) and held.get("activation_count") == goal.get("activation_count")


def may_continue(goal: dict, record: dict) -> bool:
    """Whether forge may keep the session going after this Stop: only for an active goal,
    and only when the ledger charged a turn since the last Stop forge continued (the
    record's `continued_at`, which the caller then sets): a repeated Stop never is."""
    last = record.get("continued_at")
    return goal["status"] == ACTIVE and not (isinstance(last, int)
                                             and goal["turn_count"] <= last)


def complete(project, goal: dict, session: str, reading: Reading) -> dict:
    """End a held goal complete and verified: forge's own run of every recorded gate passed.
    The gates record names the receipts and forge's run; returns the Stop's reply, a notice
    for the person alone (the native goal is over: nothing continues the session)."""
    from forge_runtime import hints
    from forge_runtime.gates import files
    from forge_runtime.gates.confirm import describe
    from forge_runtime.goal.rules import charging

    names = ", ".join(state.gate.name for state in reading.states) or "its final gates"
    charging.end(witnessed_ledger(project, goal["nonce"]), project.state_path, "complete", session,
                 f"host verdict: met; forge's own run of its final gates passed: {names}",
                 charging.VERIFIED)
    record = files.read_record(project, goal["nonce"])
    confirmed = record.get("confirmed") or {}
    at = now()
    files.write_record(project, goal["nonce"], {**record, "verified_at": at, "met": {
        "at": at, "verified": True, "why": describe(confirmed),
        "receipts": _receipts(reading, confirmed)}})
    text = "\n".join([
        f"{VERIFIED}: goal {goal['nonce']} is complete and verified: the host judged it met, "
        f"and forge's own run of {names} passed.",
        hints.done("the goal's record names the receipts; forge goal status shows it").render()])
    return {"systemMessage": text}


def _receipts(reading: Reading, confirmed: dict) -> dict:
    """Each recorded gate's receipt (the model's sealed run) and forge's own verdict on it."""
    results = confirmed.get("results") or {}
    named = {}
    for state in reading.states:
        receipt = state.receipt or {}
        mine = results.get(state.gate.name) or {}
        named[state.gate.name] = {
            "receipt": {key: receipt.get(key) for key in
                        ("finished_at", "exit_code", "boundary_hash", "output_sha256", "log")},
            "confirmed": {key: mine.get(key) for key in ("verdict", "at", "boundary",
                                                           "confinement")}}
    return named


def release(project, goal: dict, session: str, why: str) -> dict:
    """A person took over a held goal (their next prompt, or the session ended): it ends
    complete as the host judged it, unverified unless forge's run passes (`note_met`)."""
    from forge_runtime.goal.rules import charging

    return charging.end(witnessed_ledger(project, goal["nonce"]), project.state_path, "complete",
                        session, f"host verdict: met; held for its final gates until {why}",
                        charging.MET_UNVERIFIED)


def unverified_stop(project, goal: dict, reply: dict, summary: str) -> dict:
    """A reply that ends a held goal's autonomy (its budget spent, most often), saying that
    the goal is not verified: the line goes before the reply's own hint."""
    from forge_runtime import hints

    text = reply.get("stopReason") or ""
    line = (f"{UNVERIFIED}: goal {goal['nonce']}: the host judged it met, but forge's own "
            f"run of its final gates never passed ({summary}); it is not complete.")
    try:
        body, hint = hints.split_rendered(text)
    except ValueError:  # not a hint-ending text: add the line rather than garble it
        return {**reply, "stopReason": f"{line}\n{text}" if text else line}
    return {**reply, "stopReason": "\n".join([*body, line, hint.render()])}


def status_line(record: dict, goal: dict, summary: str) -> str | None:
    """`forge goal status`'s words for a goal whose `met` forge holds, or None."""
    if goal["status"] == COMPLETE or not is_held(record, goal):
        return None
    held_at = record["held"].get("at")
    if goal["status"] == ACTIVE:
        return (f"the host judged it met at {held_at}; forge keeps it going until its final "
                f"gates pass: {summary}")
    return f"met by the host at {held_at} but unverified: {summary}"
