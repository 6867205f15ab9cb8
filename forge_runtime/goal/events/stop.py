"""Stop: confirm a pending `/goal`, charge the finished turns, and answer.

A Stop of a bound session reads only what the transcript gained since the last event,
charges every turn it shows (catch_up.py) and replies: nothing, the stop message of a
spent budget or an ended goal, or the last-turn notice. Its outcome (`StopOutcome`)
carries the project, the binding and the goal after the charge, so what follows the
charge in the same hook (the killed-stops row, the final gates) reads none of them again.
A session with no binding and no pending activation costs three stats.
"""

from __future__ import annotations

import os

from forge_runtime.errors import ForgeError
from forge_runtime.goal.events.catch_up import charge_chunk, host_seen, owe_end
from forge_runtime.goal.events.reading import read_bound, reader, remember, storage_errors
from forge_runtime.goal.store import sessions
from forge_runtime.goal.store.ledger import ACTIVE, TAMPERED
from forge_runtime.goal.store.objective import normalise
from forge_runtime.goal.sync.witness import witnessed_ledger
from forge_runtime.project import Project

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from forge_runtime.goal.events.handed_in import FinalGates, SandboxPosture


class StopOutcome:
    """What a Stop's charge leaves for the rest of its hook: the `project`, the session's
    `binding` as the charge wrote it (None for a session with none), the `goal` after the
    charge (None when this Stop charged nothing) and the `reply`. The killed-stops check
    and the final gates take it, so the Stop locates the project and reads the binding
    once. A plain class: `dataclasses` would cost every charging Stop its imports."""

    __slots__ = ("project", "binding", "goal", "reply")

    def __init__(self, project: Project) -> None:
        self.project = project
        self.binding: dict | None = None
        self.goal: dict | None = None
        self.reply: dict | None = None


def charge_stop(event: dict, gates: FinalGates, posture: SandboxPosture,
                confirm_pending: bool = True) -> StopOutcome:
    """Confirm a pending activation, then charge this turn, and every earlier one the
    transcript shows uncharged, to the session's goal (`gates`: what holds a `met` for the
    final gates; `posture`: what a confirmed `/goal` runs under).

    `confirm_pending` is False for `forge ledger charge`, whose transcript path comes from a
    command line rather than the host.
    """
    outcome = StopOutcome(sessions.project_for(event))
    project, session = outcome.project, event["session_id"]
    involved = sessions.involvement(project.ledger_root, session)
    if not confirm_pending:
        involved.discard(sessions.PENDING)
    if sessions.WITNESSED in involved:  # the ledger lost this session's binding
        try:
            outcome.reply = _lost_binding(project, session)
        except ForgeError as exc:
            outcome.reply = _refused(exc, project)
        return outcome
    if not involved:
        return outcome
    try:
        with storage_errors(project):
            outcome.reply = _stop_bound(outcome, event, involved, gates, posture)
    except ForgeError as exc:
        outcome.goal = None  # whatever the refused Stop left, the gates read the head
        outcome.reply = _refused(exc, project, session)
    return outcome


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
    from forge_runtime.goal.events.replies import on_unbound_goal

    return on_unbound_goal(head.goal["objective"], "its binding is missing")


def _refused(exc: ForgeError, project: Project, session: str | None = None) -> dict:
    """The reply that ends the session on `exc`, with where the work stands (`checkpoint`,
    imported only here: a Stop that charges and says nothing never needs it). A wedged
    ledger is owed its end (`owe_end`)."""
    from forge_runtime.goal.events.replies import stop_session
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


def _stop_bound(outcome: StopOutcome, event: dict, involved: set[str], gates: FinalGates,
                posture: SandboxPosture) -> dict | None:
    """Charge a bound (or confirming) session's turns and answer; `outcome` gets the
    binding as it is on disk (read, or written once a `/goal` is confirmed) and the goal
    once it is charged."""
    from forge_runtime.goal.store.ledger import ACTIVE, repository_id, tampered

    project, session = outcome.project, event["session_id"]
    path = event.get("transcript_path") or ""
    binding = sessions.read_binding(project.ledger_root, session) \
        if sessions.BOUND in involved else None
    chunk = read_bound(event, binding) if binding else reader(event).read_since(path, 0)
    outcome.binding = binding
    if sessions.PENDING in involved:
        from forge_runtime.goal.events.confirm import confirm_pending

        binding, chunk = confirm_pending(project, event, binding, chunk, gates, posture)
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
        chunk = reader(event).follow(path, chunk, lambda seen: seen.turns())
    turns = chunk.turns()
    turn = turns[-1].uuid if turns else binding.get("last_turn")
    if turn is None:
        raise tampered("the transcript shows no finished turn to charge", "forge goal status")
    running = chunk.running_condition()
    if running is not None and normalise(running) != binding.get("objective"):
        # the host's native goal is not the one this session is bound to (a queued /goal
        # the first Stop could not confirm yet, or a confirmation an agent forged)
        from forge_runtime.goal.events.replies import on_unbound_goal

        return on_unbound_goal(running, f"this session is bound to goal {binding['nonce']}, "
                                        "another objective")
    seen = host_seen(project, event, binding)
    result = charge_chunk(project, binding, chunk, session, turn, path, gates, at_stop=True,
                          seen=seen)
    outcome.goal = binding["goal"]
    from forge_runtime.goal.hosts import host_prompts

    host_prompts.remember(binding, event)  # what the session's wake-ups and crons will send
    remember(project, session, binding, path, chunk)
    outcome.binding = binding  # as written: a confirmed binding counts once it is on disk
    if sessions.PENDING in involved:
        sessions.drop_pending(project.ledger_root, session)
    reply = _reply_after_charge(project, binding, event, result) or \
        _plan_unseen(project, event, binding, result.goal, seen)
    outcome.goal = binding["goal"]  # a goal ended for want of the plan's figures
    if binding.get("remote"):
        from forge_runtime.goal.sync.publisher import after_event

        notice = after_event(project, binding, result.goal, now=sessions.PENDING in involved,
                             can_tell=not (reply or {}).get("systemMessage"))
        if notice is not None:
            reply = {**(reply or {}), "systemMessage": notice}
    return reply


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
    from forge_runtime.goal.events.replies import EXHAUSTED_CODE, exhausted_hint
    from forge_runtime.goal.store.ledger import TRANCHE

    return (f"{EXHAUSTED_CODE}: goal {goal['nonce']} ran the {TRANCHE} turns a person's "
            f"/goal in this clone grants (turn {goal['turn_count']} of a ceiling of "
            f"{goal['turn_ceiling']}); the rest of the ceiling came from the remote's ledger, "
            "which grants no autonomy here; forge stopped it.\n"
            + exhausted_hint(goal).render())


PLAN_UNAVAILABLE_CODE = "FORGE_GOAL_PLAN_UNAVAILABLE"


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
    from forge_runtime.goal.events.replies import stop_session

    return stop_session(checkpoint.stamped(text, project.state_path))


def _reply_after_charge(project: Project, binding: dict, event: dict, result) -> dict | None:
    """What the Stop answers once its turns are charged: the budget spent, the goal ended
    while the host keeps it running, the stuck warning and the last-turn notice
    (goal/views/wrapup.py), or nothing."""
    from forge_runtime.goal.rules import charging
    from forge_runtime.goal.store.ledger import EXHAUSTED

    if result.goal["status"] == EXHAUSTED:
        from forge_runtime.goal.events.replies import exhausted_text, pending_words, stop_session
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
        from forge_runtime.goal.events.replies import ended_turn_text, stop_session
        from forge_runtime.goal.views import checkpoint

        return stop_session(checkpoint.stamped(ended_turn_text(result.goal, result.overrun),
                                               project.state_path))
    if past_allowance(binding, result.goal):
        from forge_runtime.goal.events.replies import stop_session
        from forge_runtime.goal.views import checkpoint

        return stop_session(checkpoint.stamped(allowance_text(result.goal),
                                               project.state_path))
    from forge_runtime.goal.views import wrapup

    stuck = None
    if result.stuck:  # the replies' module loads only for a Stop that says something
        from forge_runtime.goal.events.replies import stuck_reply

        stuck = stuck_reply(result.goal, result.unchanged_turns)
    return wrapup.after_charge(project, event, binding, result, stuck)


def _ended_but_running(binding: dict, event: dict) -> dict | None:
    """A Stop hook continues a session whose goal forge recorded as ended: if the host's
    native goal for that objective still runs, the verdict forge believed was not the
    host's (a forged `met`), so the session stops instead of running uncounted."""
    condition = reader(event).running_goal(event.get("transcript_path") or "")
    if condition is None or normalise(condition) != binding.get("objective"):
        return None
    from forge_runtime.goal.events.replies import on_unbound_goal

    return on_unbound_goal(condition, f"goal {binding['nonce']} was recorded as ended")
