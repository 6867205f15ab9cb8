"""What this process ended or warned of, kept for the person's notification.

The goal notes each end as it records it (rules/charging.py: an exhaustion, a `complete`
or `cancel` record, the stuck warning; gates/goal.py: a final gate stuck) and each refusal
that ends a goal with no record (events/: a tampered or moved ledger, a wedged hook).
The notes live here, in the goal, so that recording an end never reaches up into notify/:
the surface that answered (hooks/dispatch.py after its reply, the CLI after its command)
hands them to notify/trigger.py, which sends them. Noting is an append to a list: a hook
that notes nothing imports nothing of notify/.
"""

import os

# kinds of note
END, STUCK, REFUSED, WEDGED = "end", "stuck", "refused", "wedged"

NOTED: list[dict] = []


def recorded(ledger_root, record: dict) -> None:
    """An end record (`exhaust`, `complete`, `cancel`) just appended to a goal's ledger."""
    NOTED.append({"kind": END, "ledger_root": os.fspath(ledger_root), "record": record})


def stuck(ledger_root, goal: dict, why: str) -> None:
    """The stuck warning given at this charge (`why`: the warning's sentence)."""
    NOTED.append({"kind": STUCK, "ledger_root": os.fspath(ledger_root), "goal": goal,
                  "why": why})


def refused(ledger_root, session: str | None, code: str, message: str, hint: str) -> None:
    """A refusal that ends a session's goal without recording anything (the ledger cannot
    be written: tampered, moved); `hint` is the refusal's rendered way on."""
    NOTED.append({"kind": REFUSED, "ledger_root": os.fspath(ledger_root), "session": session,
                  "code": code, "why": message, "hint": hint})


def wedged(ledger_root, binding: dict, why: str) -> None:
    """forge ended a session's goal because a hook could not finish (its end is recorded
    at the session's next event, which may come much later): said now."""
    NOTED.append({"kind": WEDGED, "ledger_root": os.fspath(ledger_root),
                  "nonce": binding.get("nonce"), "goal": binding.get("goal"),
                  "seq": binding.get("goal_seq"), "why": why})


def take() -> list[dict]:
    """Every note so far, leaving none."""
    notes = NOTED[:]
    del NOTED[:]
    return notes
