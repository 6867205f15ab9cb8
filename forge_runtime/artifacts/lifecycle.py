"""The lifecycle: which status may follow which, and `stale` computed on every read.

    draft -> active                      (activate)
    active -> superseded | deprecated    (supersede, deprecate)
    active -> stale                      (computed: valid_until passed or evidence expired)
    stale -> active | deprecated         (renew, deprecate)
    superseded, deprecated               terminal

A transition is recorded as an entry of the front matter's `history`; the recorded status is
the last entry's. `stale` is never written: it is what every read says an active artifact
is once its own `valid_until`, or that of its evidence, has passed.
"""

from __future__ import annotations

import datetime as dt

from forge_runtime.artifacts import links
from forge_runtime.artifacts.model import (
    ACTIVE,
    DEPRECATED,
    DRAFT,
    STALE,
    SUPERSEDED,
    Artifact,
)
from forge_runtime.steps import Call, OpError, call

# status -> {status it may move to: the operation that moves it}
TRANSITIONS: dict[str, dict[str, str]] = {
    DRAFT: {ACTIVE: "activate"},
    ACTIVE: {SUPERSEDED: "supersede", DEPRECATED: "deprecate"},
    STALE: {ACTIVE: "renew", DEPRECATED: "deprecate"},
    SUPERSEDED: {},
    DEPRECATED: {},
}


def now_utc() -> dt.datetime:
    return dt.datetime.now(dt.UTC).replace(microsecond=0)


def timestamp(moment: dt.datetime) -> str:
    return moment.isoformat().replace("+00:00", "Z")


def expired(valid_until: str | None, today: dt.date) -> bool:
    """True when the date has passed; an unreadable date counts as passed (fail closed)."""
    if valid_until is None:
        return False
    try:
        return dt.date.fromisoformat(valid_until[:10]) < today
    except ValueError:
        return True


def stale_reasons(artifact: Artifact, graph: dict[str, Artifact], today: dt.date) -> list[str]:
    """Why an active artifact reads as stale; empty when it does not."""
    if artifact.status != ACTIVE:
        return []
    reasons = []
    if expired(artifact.valid_until, today):
        reasons.append(f"its valid_until {artifact.valid_until} has passed")
    reasons.extend(f"its evidence {evidence.id} expired on {evidence.valid_until}"
                   for evidence in links.evidence_of(artifact, graph)
                   if expired(evidence.valid_until, today))
    return reasons


def effective_status(artifact: Artifact, graph: dict[str, Artifact], today: dt.date) -> str:
    """The status every read reports: the recorded one, or `stale` when it has gone stale."""
    return STALE if stale_reasons(artifact, graph, today) else artifact.status


def allowed_steps(artifact: Artifact, status: str, graph: dict[str, Artifact]) -> list[Call]:
    """The transitions open from `status`, each as the call that makes it."""
    steps = []
    for op in TRANSITIONS.get(status, {}).values():
        if op != "supersede":
            steps.append(call(op, id=artifact.id))
            continue
        steps.extend(call("supersede", id=artifact.id, by=other.id)
                     for other in graph.values()
                     if other.id != artifact.id and artifact.id in links.targets(
                         other, "supersedes"))
    return steps


def require(artifact: Artifact, status: str, target: str, op: str,
            graph: dict[str, Artifact]) -> None:
    """Refuse a transition the lifecycle does not have, naming the ones it does."""
    if TRANSITIONS.get(status, {}).get(target) == op:
        return
    allowed = allowed_steps(artifact, status, graph)
    open_ = ", ".join(f"{op_} -> {to}" for to, op_ in TRANSITIONS.get(status, {}).items())
    message = (f"{artifact.id} is {status}; {op} would make it {target}, which the lifecycle "
               f"does not allow from {status}")
    message += f" (allowed: {open_})" if open_ else f" ({status} is terminal)"
    fix = allowed[0] if allowed else call("get", id=artifact.id)
    raise OpError(message, fix, or_=allowed[1:], code="FORGE_TRANSITION_REFUSED",
                  exit_code=2, data={"id": artifact.id, "status": status,
                                     "allowed": [step.op for step in allowed]})


def record(artifact: Artifact, status: str, target: str, op: str, moment: dt.datetime,
           **details) -> None:
    """Append the transition to the artifact's history and set its status line."""
    entry = {"from": status, "to": target, "at": timestamp(moment), "by": op, **details}
    artifact.meta["history"] = [*artifact.history, entry]
    artifact.meta["status"] = target
    artifact.meta["updated"] = timestamp(moment)


def path_to(status: str, target: str) -> str | None:
    """The first operation on the way from `status` to `target`, or None when none leads."""
    frontier = [(status, None)]
    seen = {status}
    while frontier:
        here, first = frontier.pop(0)
        for to, op in TRANSITIONS.get(here, {}).items():
            if to == target:
                return first or op
            if to not in seen:
                seen.add(to)
                frontier.append((to, first or op))
    return None
