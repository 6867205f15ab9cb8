"""The record that started a goal's current tranche, and the tranche's pace from it
(goal/views/forecast.py).

A tranche's records all carry the activation id of the person's `/goal` that granted it;
the first of them is the tranche's activation (or the join that took another clone's
tranche in, goal/store/merge.py). Finding it walks back from the head, one checked record at a
time, at most WALK_LIMIT records (a tranche holds its 20 charges and a few records beside
them); a session keeps where it found it (`seq`, in its binding), so a Stop or a status
line after the first reads one record, checked to be that start still.
"""

from __future__ import annotations

from forge_runtime.errors import ForgeError
from forge_runtime.goal.store.merge import MERGE

WALK_LIMIT = 64
# the binding's note of where its goal's current tranche starts (a record's seq)
SEQ_KEY = "tranche_seq"
_STARTS = ("activate", MERGE)


def start(ledger, head, seq: int | None = None) -> dict | None:
    """The record that started `head`'s tranche: the one at `seq` when it is such a start
    of the same activation, else found by walking back; None when the walk gives up or a
    record cannot be read (a forecast is then made without it)."""
    activation = head.goal.get("activation_id")
    try:
        if isinstance(seq, int) and not isinstance(seq, bool) and 1 <= seq <= head.seq:
            found = head.record if seq == head.seq else ledger.record_at(seq)
            if found.get("kind") in _STARTS and \
                    found["goal"].get("activation_id") == activation:
                return found
        found = head.record
        for _ in range(WALK_LIMIT):
            if found["seq"] == 1:
                return found
            earlier = ledger.previous(found)
            if earlier["goal"].get("activation_id") != activation:
                return found
            found = earlier
    except (ForgeError, OSError, KeyError, TypeError):
        return None
    return None


def pace(ledger, head, seq: int | None = None):
    """The tranche's pace (forecast.Pace) as `head` stands, and the record that started
    it (None when not found)."""
    from forge_runtime.goal.views import forecast

    first = start(ledger, head, seq)
    return forecast.pace_of(first, head.goal, head.record.get("at")), first
