"""Charging what a transcript shows: every turn worked before the goal ended, then the
host's verdicts (met, cleared, impossible), in transcript order.

Each event of a bound session charges every turn the transcript gained since the last
one, its own and any whose Stop hook died, and a later session of the goal charges what
its other sessions left owed (`catch_up_sessions`), each turn with the tokens it spent
(`tokens_of_turns`). An end forge decided at an event that
could not write the ledger is noted in the binding (`owe_end`) and recorded here next.
"""

from __future__ import annotations

import os

from forge_runtime.goal.events.reading import (
    read_bound,
    remember,
    storage_errors,
    unattributable,
)
from forge_runtime.goal.hosts import transcript
from forge_runtime.goal.store import sessions
from forge_runtime.goal.store.ledger import ACTIVE
from forge_runtime.goal.store.objective import normalise
from forge_runtime.goal.sync.witness import witnessed_ledger
from forge_runtime.project import Project

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from forge_runtime.goal.events.handed_in import FinalGates

_END_KIND = {transcript.MET: "complete", transcript.CLEARED: "cancel",
             transcript.IMPOSSIBLE: "cancel", transcript.UNKNOWN: "cancel"}


def follow_transcript(project: Project, event: dict, binding: dict, gates: FinalGates):
    """Catch up with what the transcript gained since the session's last event (`binding`,
    which this updates and writes): every turn it shows is charged (late: no Stop of theirs
    did it), every verdict applied."""
    session = event["session_id"]
    path = event.get("transcript_path") or ""
    with storage_errors(project):
        catch_up_sessions(project, binding["nonce"], session, gates)
        chunk = read_bound(event, binding)
        result = charge_chunk(project, binding, chunk, session, None, path, gates,
                              seen=host_seen(project, event, binding, wait=False))
        remember(project, session, binding, path, chunk)
    return result


def catch_up_sessions(project: Project, nonce: str, current: str, gates: FinalGates) -> None:
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
        charge_chunk(project, binding, chunk, session, None, path, gates)
        remember(project, session, binding, path, chunk)


def charge_chunk(project: Project, binding: dict, chunk: transcript.Chunk, session: str,
              own_turn: str | None, path: str, gates: FinalGates, at_stop: bool = False,
              seen=None):
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
    if at_stop and any(verdict.outcome == transcript.MET for verdict in verdicts) and \
            gates.hold_met(project, binding["nonce"]):
        verdicts = [verdict for verdict in verdicts if verdict.outcome != transcript.MET]
    if at_stop:
        verdicts = sorted(verdicts + _person_took_over(project, binding, chunk, gates),
                          key=lambda verdict: verdict.index)
    origins, binding["prompt_origin"] = chunk.turn_origins(binding.get("prompt_origin"))
    cut = verdicts[0].index if verdicts else len(chunk.entries)
    shown = chunk.turns()
    before_end = [turn.uuid for turn in shown if turn.index < cut]
    if own_turn is not None and not shown:
        before_end = [own_turn]  # a repeated Stop: the turn it charged already
    turns = before_end
    if verdicts and shown and _forge_continued(project, ledger, gates):
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
    spent = tokens_of_turns(path, binding, chunk, turns + after_end, ledger)
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
            goal = gates.release(project, ledger.current().goal, session,
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


def _person_took_over(project: Project, binding: dict, chunk: transcript.Chunk,
                      gates: FinalGates) -> list[transcript.Verdict]:
    """A person's own prompt on a goal whose `met` forge holds (gates/held.py) ends it, as
    a verdict at that prompt; a prompt the host sent (a wake-up, a cron) never does."""
    person = next((index for index, entry in enumerate(chunk.entries)
                   if chunk.prompt_origin(entry) == transcript.PERSON), None)
    if person is None:
        return []
    if not gates.in_play(project):
        return []
    goal = witnessed_ledger(project, binding["nonce"]).current().goal
    if goal["status"] != ACTIVE or not gates.is_held(project, goal):
        return []
    return [transcript.Verdict(_TAKEN_OVER, None, person)]


def _forge_continued(project: Project, ledger, gates: FinalGates) -> bool:
    """Whether forge's own reply to the goal's last charged Stop continued the session (its
    gates record's `continued_at`, gates/held.py)."""
    if not gates.in_play(project):
        return False
    return gates.continued_at(project, ledger.nonce) == ledger.current().goal["turn_count"]


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


def tokens_of_turns(path: str, binding: dict, chunk: transcript.Chunk, turns: list[str],
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
    """`tokens_of_turns`'s tally, priced as it set up."""
    from forge_runtime.goal.budget import usage

    try:
        helpers, binding["subagents"] = transcript.read_subagents(
            path, binding.get("subagents") or {})
    except transcript.Unattributable as exc:
        raise unattributable(exc, binding) from None
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
