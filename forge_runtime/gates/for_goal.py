"""The final gates as the goal's event handlers are handed them (goal/events/handed_in.py,
`FinalGates`): the module is the handed object. goal/ never imports gates/; the hooks hand
this in (hooks/goal_handlers.py). Each function imports what it uses, so a Stop whose goal
has no gates pays two stats here.
"""

from __future__ import annotations


def in_play(project) -> bool:
    """Whether a goal's gates can matter here (`gates.in_play`): two stats."""
    from forge_runtime import gates

    return gates.in_play(project)


def recorded_field(project) -> dict:
    """The final gates a person's `/goal` records now (recorded.py)."""
    from forge_runtime.gates.recorded import field_for

    return field_for(project)


def last_changes(project, objective: str, field: dict) -> tuple[str, list[str]] | None:
    """(nonce, lines): how the gates `field` records differ from those the objective's goal
    last recorded; None when it recorded none. Raises ForgeError on a ledger not forge's."""
    from forge_runtime.gates import recorded

    last = recorded.last_recorded(project, objective)
    if last is None:
        return None
    nonce, before = last
    after = recorded.of_field(field[recorded.FIELD]) if field else None
    return nonce, recorded.changes(before, after)


def hold_met(project, nonce: str) -> bool:
    """Whether the host's `met` on goal `nonce` waits for forge's own run (held.py)."""
    from forge_runtime.gates.held import hold_met as holds

    return holds(project, nonce)


def is_held(project, goal: dict) -> bool:
    """Whether forge holds the host's `met` on `goal` now (its gates record says)."""
    from forge_runtime.gates import files, held

    return held.is_held(files.read_record(project, goal["nonce"]), goal)


def release(project, goal: dict, session: str, why: str) -> dict:
    """End a held goal complete as the host judged it (held.py); the goal after the end."""
    from forge_runtime.gates import held

    return held.release(project, goal, session, why)


def continued_at(project, nonce: str) -> object:
    """The turn count at which forge's reply last kept goal `nonce` going (held.py)."""
    from forge_runtime.gates.files import read_record

    return read_record(project, nonce).get("continued_at")
