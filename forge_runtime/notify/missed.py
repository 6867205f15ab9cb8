"""An end recorded by a hook that died before telling it, told by the session's next event.

A hook is noted of each end it records (goal/rules/end_notes.py) and tells it after its
reply; a hook killed in between has recorded the end and told nobody, and a sender killed
as it started has taken no record (notify/outbox.py `reopen`). `claude -p` ends
StopFailure's hook, and what it started, as it exits. So the session's next event (its
end, its next prompt) looks at its goal: ended, with channels configured, its end record
recent and no message about it sent, failed or being sent, the end is noted again and
told as any other.
"""

from __future__ import annotations

# an end older than this is one the person has seen at their terminal since, or will
RECENT_SECONDS = 600
_ENDS = ("exhaust", "complete", "cancel")
_LOOK_BACK = 50  # records past an end: the turns the host started after it (overrun)


def note_missed(project_root, ledger_root, binding: dict) -> None:
    """Note the end of `binding`'s goal when no message about it was started."""
    goal = binding.get("goal")
    nonce = binding.get("nonce")
    if not isinstance(goal, dict) or goal.get("status") in (None, "active") or \
            not isinstance(nonce, str):
        return
    from forge_runtime.notify import config

    if not config.present(project_root):
        return
    from forge_runtime.errors import ForgeError
    from forge_runtime.goal.store.ledger import Ledger

    try:
        record = _last_end(Ledger(ledger_root, nonce))
    except (ForgeError, OSError):  # the session's own refusal says what is wrong
        return
    if record is None or not _recent(record):
        return
    from forge_runtime.goal.rules import end_notes
    from forge_runtime.notify import outbox

    noted = {note["record"]["seq"] for note in end_notes.NOTED
             if note["kind"] == end_notes.END}
    if record["seq"] not in noted and not outbox.told(ledger_root, f"{nonce}-{record['seq']}"):
        end_notes.recorded(ledger_root, record)


def _last_end(ledger) -> dict | None:
    record = ledger.current().record
    for _ in range(_LOOK_BACK):
        if record.get("kind") in _ENDS:
            return record
        if record["seq"] <= 1:
            return None
        record = ledger.previous(record)
    return None


def _recent(record: dict) -> bool:
    import time

    from forge_runtime.goal.budget.ceilings import epoch

    try:
        return time.time() - epoch(str(record.get("at"))) <= RECENT_SECONDS
    except ValueError:
        return False
