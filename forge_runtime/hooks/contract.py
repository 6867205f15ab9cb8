"""What an event module under hooks/ offers the dispatcher, declared as Protocols (a module
implements one).

`dispatch.run` reads a module's members by name and never imports this module (`typing` is
an import every hook would pay for): tests/test_hook_contracts.py holds every module in
`dispatch.EVENT_MODULES` to these declarations, and type checkers read them. Every module
is an `EventModule`; each of `OPTIONAL` is offered whole or not at all, and the dispatcher
asks for one only when the module has it. A member the dispatcher does not ask for but
that looks like one it does (`on_wedge`, `handler`) fails that test instead of being
silently ignored.
"""

from typing import Protocol

from forge_runtime.hosts.contract import HostAdapter


class EventModule(Protocol):
    """Every event module."""

    REQUIRED: dict[str, type]
    """The fields the event must carry besides the common ones (session_id,
    hook_event_name), with their types; an event without them is malformed."""

    def handle(self, event: dict) -> dict | None:
        """The JSON reply to the host, or None for the no-op reply."""


class FailsClosed(Protocol):
    """A module whose malformed input or failure is answered; without it the hook answers
    nothing (fails open)."""

    def on_failure(self, problem: str) -> dict | None:
        """The reply when the input is malformed or `handle` raised."""


class Deadlined(Protocol):
    """A module with a hard limit on the whole event: past it the process dies
    (`dispatch.arm_watchdog`) and the launcher answers for it."""

    def deadline_seconds(self) -> float:
        """The limit, in seconds."""


class Watched(Protocol):
    """A module that answers before the host's timeout, whatever its work waits on
    (`dispatch.Watchdog`): past the limit the work is abandoned and `on_wedged` answers,
    so the host never kills the hook."""

    def watchdog_seconds(self, host: HostAdapter) -> float:
        """The limit for the host whose adapter is `host`, below that host's timeout."""

    def on_wedged(self, event: dict | None, seconds: float) -> dict | None:
        """The reply once the limit passed (`event` None when it was not read yet)."""


OPTIONAL = (FailsClosed, Deadlined, Watched)


class StopModule(EventModule, FailsClosed, Watched, Protocol):
    """The Stop module, which the launcher and the host adapters ask for more: a Stop fails
    closed for a session with a goal, whoever notices the failure."""

    def on_killed(self, signal_number: int) -> dict | None:
        """The launcher's reply for a Stop whose interpreter was killed by `signal_number`
        while the launcher lived."""

    def failure_reply(self, problem: str) -> dict:
        """The reply that ends a goal's autonomy because the Stop hook itself failed (an
        adapter that runs the module answers with it)."""


# the events whose module others ask for more than the dispatcher does
ASKED_MORE = {"Stop": StopModule}
