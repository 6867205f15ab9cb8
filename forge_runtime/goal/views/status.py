"""Read-only views of goals for `forge goal ...` and `forge ledger verify`, plus `sync`.

Which goal a command means: the one state.md names; with no goal there, the goal whose
ledger moved last. Every view verifies the whole chain first (the CLI is not a hot path).
"""

from __future__ import annotations

from forge_runtime.errors import EXIT_USAGE, ForgeError
from forge_runtime.goal.rules import consistency
from forge_runtime.goal.store import state_file
from forge_runtime.goal.store.ledger import Ledger, goal_nonces, tampered
from forge_runtime.project import Project
from forge_runtime.records import record


class GoalView(record("GoalView", "goal state_turn_count next_step consistent problem "
                                  "problem_code problem_fix late_turns",
                      defaults=(None, None, 0))):
    """A verified goal and how the state file stands against it: `problem_code` is the
    refusal's code (e.g. FORGE_GOAL_WORKTREE_TAKEN), `late_turns` the turns charged by a
    later event because their own Stop did not. A record, not a dataclass: the confirming
    Stop of a first `/goal` imports this module."""

    __slots__ = ()


def chosen_nonce(project: Project, nonce: str | None = None) -> str | None:
    """The goal a command is about: `nonce`, else state.md's, else the latest one."""
    if nonce:
        if not Ledger(project.ledger_root, nonce).exists():
            raise ForgeError(f"no goal {nonce} in this repository's ledger",
                             "forge goal status", exit_code=EXIT_USAGE)
        return nonce
    try:
        current = state_file.read(project.state_path).goal
    except ForgeError:
        current = None
    if current and isinstance(current.get("nonce"), str) and \
            Ledger(project.ledger_root, current["nonce"]).exists():
        return current["nonce"]
    nonces = goal_nonces(project)
    return nonces[0] if nonces else None


def view(project: Project, nonce: str) -> GoalView:
    """The goal, fully verified, and whether state.md agrees with it."""
    ledger = Ledger(project.ledger_root, nonce)
    with ledger.lock(shared=True):
        goal = ledger.verify()
        late = sum(1 for record in ledger.records() if record.get("late") is True)
        try:
            current = consistency.check(project.state_path, ledger)
        except ForgeError as exc:
            return GoalView(goal, None, None, False, exc.message, exc.code, exc.fix,
                            late_turns=late)
    return GoalView(goal, current.goal.get("turn_count"), current.next_step, True, None,
                    late_turns=late)


def sync(project: Project, nonce: str) -> dict:
    """Rewrite state.md's goal fields from the verified ledger; the body stays untouched."""
    ledger = Ledger(project.ledger_root, nonce)
    with ledger.lock():
        goal = ledger.verify()
        try:
            state_file.write_goal(project.state_path, goal)
        except ForgeError as exc:
            raise tampered(f"state file cannot be synced: {exc.message}",
                           f"forge goal verify --nonce {nonce}") from None
    return goal


def verify_all(project: Project) -> list[dict]:
    """Every goal of the repository, fully verified, each also against its witness (and
    every witnessed goal still there); the first failure raises."""
    # lazy: only `forge goal verify` reads the witness
    from forge_runtime.goal.sync.witness import Witness

    witness = Witness(project)
    witness.check_all(lambda nonce: Ledger(project.ledger_root, nonce))
    return [Ledger(project.ledger_root, nonce, witness=witness).verified()
            for nonce in goal_nonces(project)]
