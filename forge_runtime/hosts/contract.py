"""What forge asks of a host adapter, declared as Protocols (a module implements one).

`hooks/dispatch.py` and the event modules ask every adapter for `HostAdapter`; the goal
core asks an adapter that hands itself over on the event (under
goal/hosts/host_adapter.py's KEY) for `HandedHost` as well, and finds none on an event of
Claude Code's, whose shape is forge's own. Both read members by name and never import this
module (`typing` is an import every hook would pay for): tests/test_hook_contracts.py holds
every adapter in `hosts.NAMES` to these declarations, and type checkers read them.
"""

from pathlib import Path
from types import ModuleType
from typing import Protocol


class HostAdapter(Protocol):
    """Every adapter, as the dispatcher and the event modules ask it."""

    NAME: str
    """Its name in `hosts.NAMES`, which a hook command's `--host` gives."""

    SESSION_END_WATCHDOG_SECONDS: float
    """How long a SessionEnd hook may take before its watchdog answers: below the host's
    own limit for the hook."""

    def shape_problem(self, event_name: str, event: dict) -> str | None:
        """Why `event` cannot be this host's, or None: a hook wired for the wrong host."""

    def handle(self, event_name: str, module: ModuleType, event: dict) -> dict | None:
        """Run the event module for this host's `event`; its reply in the host's terms."""

    def wedged_reply(self, event_name: str, event: dict, reply: dict | None) -> dict | None:
        """The reply of an event module whose watchdog fired, in the host's terms."""


class HandedHost(HostAdapter, Protocol):
    """An adapter that hands itself over on the event: what the goal core asks of it."""

    SESSION_END_BUDGET_SECONDS: float
    """What forge's own run of the recorded gates may take in a SessionEnd hook."""

    def transcript_reader(self) -> ModuleType:
        """The module that reads this host's transcripts (read_since, follow,
        running_goal, as goal/hosts/transcript.py)."""

    def sandbox_posture(self, project_root: Path, rollout: str | None) -> dict:
        """The host's own sandbox for the session: what it protects, and where that was
        read."""

    def continuing(self, reply: dict) -> dict:
        """The Stop reply that keeps a goal going, in the host's terms."""
