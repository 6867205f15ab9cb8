"""What the goal's event handlers are handed by their caller (hooks/goal_handlers.py): the
final gates and the sandbox posture. goal/ imports neither gates/ nor sandbox/, which sit
beside it and read the goal's store themselves; the surface composes them. Imported for
annotations only: no hook pays for `typing`.
"""

from __future__ import annotations

from typing import Protocol


class FinalGates(Protocol):
    """The final gates as a goal's prompt, Stop and catch-up need them (gates/for_goal.py)."""

    def in_play(self, project) -> bool:
        """Whether a goal's gates can matter here: two stats."""

    def recorded_field(self, project) -> dict:
        """The final gates a person's `/goal` records now, as the ledger record's field."""

    def last_changes(self, project, objective: str, field: dict) -> tuple[str, list[str]] | None:
        """(nonce, lines): how `field` differs from the gates the objective's goal last
        recorded; None when it recorded none. Raises ForgeError on a ledger not forge's."""

    def hold_met(self, project, nonce: str) -> bool:
        """Whether the host's `met` on goal `nonce` waits for forge's own run of its gates."""

    def is_held(self, project, goal: dict) -> bool:
        """Whether forge holds the host's `met` on `goal` now."""

    def release(self, project, goal: dict, session: str, why: str) -> dict:
        """End a held goal complete as the host judged it; the goal after the end."""

    def continued_at(self, project, nonce: str) -> object:
        """The turn count at which forge's reply last kept goal `nonce` going, or None."""


class SandboxPosture(Protocol):
    """The posture a person's `/goal` runs under (sandbox/posture.py)."""

    def for_goal(self, project, codex: dict | None = None) -> str:
        """The posture a `/goal` gets here now; raises the refusal when it may not run."""

    def goal_notice_once(self, project, session_id: str,
                         codex: dict | None = None) -> str | None:
        """The unsandboxed notice, once a session; raises the refusal when it may not run."""
