"""Whether a ledger holds a goal in progress: the one question the guard asks of the goal
store, to keep `.forge/gates.yaml` unchanged while a goal is judged by the gates its `/goal`
recorded (guard/gate_files.py). A session without a goal never asks it: only a call that
would write the gates file does."""

import os

from forge_runtime.goal.store import layout

AWAITING_FIRST_STOP = "(a /goal awaiting its first Stop)"


def goal_in_progress(ledger_root: str) -> str | None:
    """The nonce of a goal in progress (active: not exhausted, complete or cancelled),
    AWAITING_FIRST_STOP for a person's `/goal` whose first Stop has not come yet (its gates
    are recorded already), None when there is none. A goal whose ledger cannot be read
    counts as in progress: the guard fails closed."""
    from forge_runtime.errors import ForgeError
    from forge_runtime.goal.store.ledger import ACTIVE, Ledger

    try:
        names = layout.goal_dir_names(ledger_root)
    except FileNotFoundError:
        return None
    try:
        pending = any(name.endswith(layout.PENDING_SUFFIX)
                      for name in os.listdir(layout.sessions_dir(ledger_root)))
    except FileNotFoundError:
        pending = False
    if pending:
        return AWAITING_FIRST_STOP
    for name in sorted(names):
        try:
            if Ledger(ledger_root, name).current().goal["status"] == ACTIVE:
                return name
        except (ForgeError, OSError, KeyError):
            return name
    return None
