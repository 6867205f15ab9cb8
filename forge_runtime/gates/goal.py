"""The final gates of a goal: what its Stop hook tells the model, and whether a met goal is
verified.

A goal is complete only with every final gate fresh and passing. While a goal runs, each
Stop compares the gates with what it last told the model; when that changed, the reply
carries the gates that need a run (and the `Next:` that runs them) as next-turn context,
which the host's own goal evaluator reads too. When the host judges the goal met, forge
records whether every gate was fresh and passing then: if not, the goal is met but
unverified until `forge goal verify-gates` finds them so.

    <ledger root>/gates/<nonce>.json   what the model was last told; the met verdict

Only a session bound to a goal in a project with `.forge/gates.yaml` pays anything: every
other Stop costs one stat here (and `hints`, `files` and `status` are imported past it).
"""

from __future__ import annotations

from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.gates import config, defined
from forge_runtime.goal.ledger import ACTIVE, COMPLETE, now
from forge_runtime.project import join, paths_of

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `hints` is imported where a reply is written
    from forge_runtime import hints

NOT_FRESH = "FORGE_GATES_NOT_FRESH"
ALL_FRESH = "FORGE_GATES_FRESH"
UNVERIFIED = "FORGE_GOAL_UNVERIFIED"
VERIFY = "forge goal verify-gates"


def _record_path(project, nonce: str):
    return join(project.ledger_root, "gates", f"{nonce}.json")


def read_record(project, nonce: str) -> dict:
    from forge_runtime.gates.files import read_json

    record = read_json(_record_path(project, nonce))
    return record if isinstance(record, dict) else {}


def _write_record(project, nonce: str, record: dict) -> None:
    from forge_runtime.gates.files import write_json

    write_json(_record_path(project, nonce), record)


def _bound_goal(project, session_id: str) -> dict | None:
    from forge_runtime.goal import sessions
    from forge_runtime.goal.ledger import Ledger

    binding = sessions.read_binding(project.ledger_root, session_id)
    if not binding or not isinstance(binding.get("nonce"), str):
        return None
    return Ledger(project.ledger_root, binding["nonce"]).current().goal


class Reading:
    """The gates as they stand, or the error that keeps forge from reading them.

    `gates.status` (and its subprocess import) loads here, not with this module: a bound
    goal's Stop imports this module even in a project without gates."""

    def __init__(self, project) -> None:
        from forge_runtime.gates import status

        self.status = status
        try:
            self.states = status.assess(paths_of(project))
            self.error = None
        except ForgeError as exc:
            self.states, self.error = [], exc

    @property
    def verified(self) -> bool:
        return self.error is None and all(s.state == self.status.FRESH for s in self.states)

    def signature(self) -> list:
        """What the model was told, to tell it again only when this changes."""
        if self.error is not None:
            return [["error", self.error.message]]
        return [[s.gate.name, s.state] for s in self.states if s.state != self.status.FRESH]

    def hint(self, project) -> hints.Hint:
        from forge_runtime import hints

        if self.error is not None:
            return self.error.hint()
        if self.verified:
            return hints.next_(VERIFY, "confirms the goal's final gates once it is met")
        return self.status.way_on(self.states, paths_of(project))

    def summary(self) -> str:
        return self.status.summary(self.states) if self.error is None else self.error.message

    def body(self, nonce: str) -> str:
        if self.error is not None:
            return f"{NOT_FRESH}: goal {nonce}: forge cannot read its final gates."
        if self.verified:
            return f"{ALL_FRESH}: goal {nonce}: every final gate is fresh and passing."
        return (f"{NOT_FRESH}: goal {nonce}: final gates not fresh and passing: "
                f"{self.summary()}. The goal is complete only when every "
                "final gate is fresh and passing.")


# -- the Stop and SessionEnd hooks --------------------------------------------------------

def after_stop(event: dict, reply: dict | None) -> dict | None:
    """The goal Stop path's `reply`, with the gates' notice added when they changed.

    A reply that ends the session is returned as it is. A broken gates file is told to the
    model like any other change, never a reason to stop the goal.
    """
    from forge_runtime.goal import sessions

    if reply and reply.get("continue") is False:
        return reply
    project = sessions.project_for(event)
    if not defined(project):
        return reply
    goal = _bound_goal(project, event["session_id"])
    if goal is None:
        return reply
    if goal["status"] == COMPLETE:
        note_met(project, goal["nonce"])
        return reply
    if goal["status"] != ACTIVE:
        return reply
    reading = Reading(project)
    record = read_record(project, goal["nonce"])
    told, now_seen = record.get("told"), reading.signature()
    if told != now_seen:
        _write_record(project, goal["nonce"], {**record, "told": now_seen})
    # the first look speaks only of gates that need something; later, of any change
    changed = told != now_seen if told is not None else bool(now_seen)
    stuck = bool(reply) and "systemMessage" in (reply or {})
    if changed or (stuck and not reading.verified):
        return _with_notice(reply, reading.body(goal["nonce"]), reading.hint(project),
                            to_model=not reading.verified)
    return reply


def _with_notice(reply: dict | None, body: str, hint: hints.Hint, to_model: bool) -> dict:
    """One message: an earlier notice's body (the stuck warning), the gates', and one hint;
    the gates' hint comes first, the earlier one's command becomes an `Or:`.

    Only what the model must act on goes into `additionalContext`: the host answers a Stop
    that carries it with another model request (measured, like a block), so gates that
    turned fresh are told to the person alone (`systemMessage`).
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
    merged = {**(reply or {}), "systemMessage": text}
    if to_model or "hookSpecificOutput" in merged:
        merged["hookSpecificOutput"] = {"hookEventName": "Stop", "additionalContext": text}
    return merged


def note_if_met(event: dict) -> None:
    """Record the verdict on a goal this event found met. The host writes a turn's verdict
    while that turn's Stop hooks run, so it is first seen by the session's next prompt or
    its end (SessionEnd), before anyone works on past it."""
    from forge_runtime.goal import sessions

    project = sessions.project_for(event)
    if not defined(project):
        return
    goal = _bound_goal(project, event["session_id"])
    if goal is not None and goal["status"] == COMPLETE:
        note_met(project, goal["nonce"])


def note_met(project, nonce: str) -> dict:
    """Record, once, whether the goal's gates were fresh and passing when it was met."""
    record = read_record(project, nonce)
    if "met" in record:
        return record
    reading = Reading(project)
    record = {**record, "met": {"at": now(), "verified": reading.verified,
                                "gates": reading.signature()}}
    if reading.verified:
        record["verified_at"] = record["met"]["at"]
    _write_record(project, nonce, record)
    return record


# -- `forge goal status` and `forge goal verify-gates` -------------------------------------

def status_of(project, goal: dict) -> tuple[str, hints.Hint | None]:
    """A line on the goal's gates for `forge goal status`, and the hint that overrides the
    goal's own way on (None: the gates ask nothing)."""
    reading = Reading(project)
    if goal["status"] == COMPLETE:
        record = read_record(project, goal["nonce"])
        if record.get("verified_at"):
            return f"verified at {record['verified_at']}: every final gate fresh and " \
                   "passing", None
        return f"met but unverified: {reading.summary()}", reading.hint(project)
    running = goal["status"] == ACTIVE and not reading.verified
    return reading.summary(), reading.hint(project) if running else None


def verify(project, goal: dict) -> tuple[dict, list]:
    """Refuse (exit 2) unless every final gate is fresh and passing; record a met goal as
    verified. Returns the record and the gate states."""
    config.load(project)  # a missing or broken gates file raises its own error and fix
    reading = Reading(project)
    if reading.error is not None:
        raise reading.error
    if not reading.verified:
        hint = reading.hint(project)
        raise ForgeError(f"goal {goal['nonce']} cannot be called verified: "
                         f"{reading.summary()}", hint.text, exit_code=EXIT_REFUSED,
                         code=UNVERIFIED, rationale=hint.rationale)
    record = read_record(project, goal["nonce"])
    if goal["status"] == COMPLETE and not record.get("verified_at"):
        record = {**record, "verified_at": now()}
        _write_record(project, goal["nonce"], record)
    return record, reading.states
