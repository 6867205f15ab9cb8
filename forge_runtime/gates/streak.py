"""The stuck warning of a goal's final gates: the same gate failing the same way.

A model that keeps re-running a failing gate without changing what makes it fail spends the
budget on nothing, whether or not it ticks its checklist. So a goal whose final gates fail
with the same output (the receipt's output digest, or forge's own verdict) for five charged
turns in a row gets the stuck warning, and its way on is the cheapest check that could prove
the current idea wrong (workflows/goal.md): read the failing gate's log, then run that gate
alone, before anything dearer.

    <ledger root>/gates/<nonce>.json   "failing": {"key", "since", "warned"}
"""

from __future__ import annotations

from forge_runtime.goal.rules.charging import STUCK_AFTER, STUCK_CODE

TYPE_CHECKING = False
if TYPE_CHECKING:
    from forge_runtime.gates.reading import Reading


def _key(reading: Reading) -> list:
    """What the failing gates' failure looks like now: [gate, output digest] pairs."""
    if reading.error is not None:
        return []
    if reading.unconfirmed is not None:
        results = reading.unconfirmed.get("results") or {}
        return [[name, "confirmed " + str(results[name].get("verdict"))]
                for name in sorted(results) if results[name].get("verdict") != "passed"]
    failing = reading.status.FAILING
    return [[s.gate.name, (s.receipt or {}).get("output_sha256")]
            for s in reading.states if s.state == failing]


def observe(record: dict, reading: Reading, turn_count: int) -> tuple[dict, int]:
    """The record's `failing` field after this Stop, and the charged turns the same failure
    has lasted when that makes it stuck now (else 0)."""
    key = _key(reading)
    if not key:
        return {key: value for key, value in record.items() if key != "failing"}, 0
    before = record.get("failing") if isinstance(record.get("failing"), dict) else {}
    since = before.get("since") if before.get("key") == key else None
    since = since if isinstance(since, int) else turn_count
    lasted = turn_count - since + 1
    stuck = lasted % STUCK_AFTER == 0 and before.get("warned") != turn_count
    failing = {"key": key, "since": since}
    if stuck or before.get("warned") == turn_count:
        failing["warned"] = turn_count
    return {**record, "failing": failing}, lasted if stuck else 0


def warning(names: list[str], lasted: int, goal: dict) -> str:
    """The warning's sentence; the hint (the gate's own `Next:`) is the notice's."""
    gates = ", ".join(names)
    return (f"{STUCK_CODE}: final gate {gates} has failed the same way for {lasted} charged "
            f"turns ({goal['turn_count']} of {goal['turn_ceiling']} used). Read its log and "
            "test the idea behind the fix with the cheapest check that could prove it wrong "
            "before another try.")


def failing_names(reading: Reading) -> list[str]:
    return [name for name, _ in _key(reading)]
