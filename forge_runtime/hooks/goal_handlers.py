"""The goal's event handlers (goal/events/), handed what they need of the packages beside
the goal: the final gates (gates/for_goal.py) and the sandbox posture (sandbox/posture.py).
goal/ imports neither; the hooks, `forge ledger charge` and the tests call the handlers
through here. Each import waits for its first use: a Stop that only charges loads no
sandbox module.
"""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only
    from forge_runtime.goal.events.stop import StopOutcome
    from forge_runtime.project import Project


def on_prompt(event: dict) -> dict | None:
    """UserPromptSubmit's goal reply (goal/events/prompt.py)."""
    from forge_runtime.gates import for_goal
    from forge_runtime.goal.events.prompt import on_prompt as handle

    return handle(event, for_goal, POSTURE)


def charge_stop(event: dict, confirm_pending: bool = True) -> StopOutcome:
    """The Stop's one charge and its outcome (goal/events/stop.py)."""
    from forge_runtime.gates import for_goal
    from forge_runtime.goal.events.stop import charge_stop as charge

    return charge(event, for_goal, POSTURE, confirm_pending)


def on_stop(event: dict, confirm_pending: bool = True) -> dict | None:
    """The reply of the Stop's charge, for the callers that need nothing else of it."""
    return charge_stop(event, confirm_pending).reply


def on_session_end(event: dict) -> tuple[Project, dict]:
    """SessionEnd's catch-up (goal/events/session_end.py): the project and the binding."""
    from forge_runtime.gates import for_goal
    from forge_runtime.goal.events.session_end import on_session_end as handle

    return handle(event, for_goal)


def confirm_at_end(event: dict) -> None:
    """A `/goal` whose first turn finished with no Stop, confirmed at SessionEnd."""
    from forge_runtime.gates import for_goal
    from forge_runtime.goal.events.session_end import confirm_at_end as confirm

    confirm(event, for_goal, POSTURE)


class SandboxPosture:
    """sandbox/posture.py as goal/events/handed_in.py's `SandboxPosture`, imported only when
    a `/goal` asks for its posture."""

    @staticmethod
    def for_goal(project, codex: dict | None = None) -> str:
        from forge_runtime.sandbox import posture

        return posture.for_goal(project, codex)

    @staticmethod
    def goal_notice_once(project, session_id: str, codex: dict | None = None) -> str | None:
        from forge_runtime.sandbox import posture

        return posture.goal_notice_once(project, session_id, codex)


POSTURE = SandboxPosture()
