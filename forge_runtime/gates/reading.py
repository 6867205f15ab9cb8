"""A goal's final gates as they stand: its recorded gates, their receipts, forge's own run.

gates/goal.py reads them at each Stop and tells the model; held.py (the held `met`
verdict) and streak.py (the stuck warning) are handed the same reading. They sit below
gates/goal.py and this module below them all, so none of them needs gates/goal.py back.
"""

from __future__ import annotations

from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.gates import config
from forge_runtime.project import paths_of

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: `hints` is imported where a reply is written
    from forge_runtime import hints

NOT_FRESH = "FORGE_GATES_NOT_FRESH"
ALL_FRESH = "FORGE_GATES_FRESH"
UNRECORDED = "FORGE_GATES_UNRECORDED"
CHANGED = "FORGE_GATES_CHANGED"
NOT_CONFIRMED = "FORGE_GATES_NOT_CONFIRMED"
VERIFY = "forge goal verify-gates"


def unrecorded(goal: dict) -> ForgeError:
    from forge_runtime import hints

    return ForgeError(f"{UNRECORDED}: goal {goal['nonce']} recorded no final gates at its "
                      "/goal (the project had no .forge/gates.yaml then, or forge did not record "
                      "gates yet)",
                      f"/goal {hints.sanitize(goal['objective'])}", exit_code=EXIT_REFUSED,
                      rationale="a person types this to record the gates file's gates for "
                                "the goal")


def _changed(goal: dict, names: list[str]) -> ForgeError:
    from forge_runtime import hints

    return ForgeError(f"{CHANGED}: .forge/gates.yaml no longer defines {', '.join(names)} as "
                      f"goal {goal['nonce']} recorded at its /goal; the goal is judged by the "
                      "recorded definitions", f"/goal {hints.sanitize(goal['objective'])}",
                      exit_code=EXIT_REFUSED,
                      rationale="a person types this after changing the gates on purpose, to "
                                "record them for the goal; otherwise restore the file")


class Reading:
    """A goal's recorded gates and their receipts as they stand, or the error that keeps
    forge from reading them, and (`unconfirmed`) forge's own run when it did not pass.

    `gates.status` (and its subprocess import) loads here, not with this module: a bound
    goal's Stop imports this module even in a project without gates."""

    def __init__(self, project, goal: dict) -> None:
        from forge_runtime.gates import recorded as recorded_gates
        from forge_runtime.gates import status

        self.status = status
        self.states, self.error, self.unconfirmed = [], None, None
        self.goal_nonce = goal["nonce"]
        project = paths_of(project)
        self.recorded = recorded_gates.of_goal(project, goal["nonce"])
        try:
            if self.recorded is None:
                raise unrecorded(goal)
            if self.recorded.problem is not None:
                raise ForgeError(self.recorded.problem, "forge gate status",
                                 exit_code=EXIT_REFUSED)
            self.states = status.assess(project, list(self.recorded.gates))
            drifted = recorded_gates.drift(self.recorded, _file_gates(project))
            if drifted:
                raise _changed(goal, drifted)
        except ForgeError as exc:
            self.error = exc

    @property
    def receipts_fresh(self) -> bool:
        """Every recorded gate's receipt says fresh and passing: the model is done."""
        return self.error is None and all(s.state == self.status.FRESH for s in self.states)

    @property
    def verified(self) -> bool:
        return self.receipts_fresh and self.unconfirmed is None

    def signature(self) -> list:
        """What the model was told, to tell it again only when this changes."""
        if self.error is not None:
            return [["error", self.error.message]]
        if self.unconfirmed is not None:
            from forge_runtime.gates.confirm import describe

            return [["confirmed", describe(self.unconfirmed)]]
        return [[s.gate.name, s.state] for s in self.states if s.state != self.status.FRESH]

    def hint(self, project) -> hints.Hint:
        from forge_runtime import hints

        if self.error is not None:
            return self.error.hint()
        if self.unconfirmed is not None:
            import os

            from forge_runtime.gates.confirm import log_path, not_passing

            failing = not_passing(self.unconfirmed)
            log = os.path.relpath(log_path(paths_of(project), self.goal_nonce, failing[0]),
                                  paths_of(project).root)
            return hints.next_(self.status.run_command(failing),
                               f"after fixing what {log} shows: forge's own run of the "
                               "recorded gate did not pass")
        if self.verified:
            return hints.next_(VERIFY, "confirms the goal's final gates once it is met")
        return self.status.way_on(self.states, paths_of(project))

    def summary(self) -> str:
        if self.error is not None:
            return self.error.message
        if self.unconfirmed is not None:
            from forge_runtime.gates.confirm import describe

            return describe(self.unconfirmed)
        return self.status.summary(self.states)

    def body(self, nonce: str) -> str:
        if self.error is not None:
            return f"{NOT_FRESH}: goal {nonce}: forge cannot judge its final gates."
        if self.unconfirmed is not None:
            return (f"{NOT_CONFIRMED}: goal {nonce}: every receipt says fresh and passing, "
                    f"but {self.summary()}. The goal is complete only when forge's own run "
                    "of every recorded final gate passes.")
        if self.verified:
            return f"{ALL_FRESH}: goal {nonce}: every final gate is fresh and passing."
        return (f"{NOT_FRESH}: goal {nonce}: final gates not fresh and passing: "
                f"{self.summary()}. The goal is complete only when every "
                "final gate is fresh and passing.")


def _file_gates(project) -> list:
    """The gates file's gates now (what `forge gate run` runs); none when it is gone."""
    try:
        return config.load(project)
    except ForgeError as exc:
        if exc.message.startswith(config.MISSING):
            return []
        raise
