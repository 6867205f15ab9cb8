"""Where each final gate stands: fresh, stale, failing or never run, and the hint after it.

A receipt is stale exactly when its gate's definition changed or the content hash of its
boundary did; nothing else (an unrelated file, a `touch`, another gate's files) matters.
Stale and never-run gates are the ones to run; a failing gate whose boundary did not change
would fail again, so it is named only once nothing else is left to run.
"""

from __future__ import annotations

from collections import namedtuple

from forge_runtime import hints
from forge_runtime.gates import boundary, config, receipts

FRESH, STALE, FAILING, NEVER_RUN = "fresh", "stale", "failing", "never-run"


class GateState(namedtuple("GateState", "gate state why receipt boundary_hash files")):
    """One gate, what its receipt says about the tree as it is now, and why."""

    __slots__ = ()

    def as_json(self) -> dict:
        receipt = self.receipt or {}
        return {"name": self.gate.name, "state": self.state, "why": self.why,
                "command": self.gate.command, "boundary": list(self.gate.boundary),
                "files": self.files, "exit_code": receipt.get("exit_code"),
                "ran_at": receipt.get("finished_at"), "duration_s": receipt.get("duration_s"),
                "log": receipt.get("log")}


def classify(gate: config.Gate, receipt: dict | None, boundary_hash: str) -> tuple[str, str]:
    if receipt is None:
        return NEVER_RUN, "no receipt forge sealed (never run, or written by hand)"
    if receipt.get("definition") != gate.definition_digest:
        return STALE, "its definition in .forge/gates.yaml changed since it ran"
    if receipt.get("boundary_hash") != boundary_hash:
        return STALE, "a file in its boundary changed since it ran"
    if receipt.get("exit_code") != 0:
        code = "timed out" if receipt.get("timed_out") else f"exit {receipt.get('exit_code')}"
        return FAILING, f"its last run failed ({code}) and nothing it covers changed since"
    return FRESH, "passed, and nothing it covers changed since"


class Tree:
    """The work tree's files and their digests, read once for any number of gates."""

    def __init__(self, project, gates: list[config.Gate], stat_cache=None,
                 witness=None) -> None:
        """`stat_cache`: where the file digests are cached (default: the local area's), and
        `witness`: what vouches for that file (boundary.Hasher)."""
        self.project = project
        self._roots = set().union(*(boundary.Matcher(gate.boundary).roots() for gate in gates))
        self.files = boundary.list_files(project, self._roots)
        self.hasher = boundary.Hasher(stat_cache or
                                      config.cache_dir(project) / boundary.STAT_CACHE, witness)

    def refresh(self) -> None:
        """Read the tree again: a gate that just ran may have added, removed or changed
        files another gate covers."""
        self.files = boundary.list_files(self.project, self._roots)
        self.hasher.forget()

    def boundary_of(self, gate: config.Gate) -> tuple[str, int]:
        covered = boundary.Matcher(gate.boundary).select(self.files)
        return boundary.boundary_hash(self.project.root, covered, self.hasher)

    def save(self) -> None:
        self.hasher.save()


def assess(project, gates: list[config.Gate] | None = None) -> list[GateState]:
    """Every gate's state against the tree as it is on disk now."""
    gates = config.load(project) if gates is None else gates
    tree = Tree(project, gates)
    states = []
    for gate in gates:
        digest, count = tree.boundary_of(gate)
        receipt = receipts.read(project, gate.name)
        state, why = classify(gate, receipt, digest)
        states.append(GateState(gate, state, why, receipt, digest, count))
    tree.save()
    return states


def to_run(states: list[GateState]) -> list[str]:
    """The gates whose receipt says nothing about the tree as it is: run these next."""
    return [s.gate.name for s in states if s.state in (STALE, NEVER_RUN)]


def failing(states: list[GateState]) -> list[str]:
    return [s.gate.name for s in states if s.state == FAILING]


def run_command(names: list[str]) -> str:
    return "forge gate run " + " ".join(names)


def way_on(states: list[GateState], project) -> hints.Hint:
    """The one hint after a status: run the stale gates, else fix a failing one, else done."""
    stale = to_run(states)
    broken = failing(states)
    if stale:
        also = f"; also failing: {', '.join(broken)}" if broken else ""
        return hints.next_(run_command(stale),
                           f"only these gates' receipts are out of date{also}")
    if broken:
        log = receipts.shown(project, receipts.log_path(project, broken[0]))
        return hints.next_(run_command(broken),
                           f"after fixing what {log} shows: nothing it covers changed since it "
                           "failed")
    return hints.done("every final gate is fresh and passing")


def summary(states: list[GateState]) -> str:
    """One line a model or person reads: which gates need what."""
    parts = [f"{s.gate.name} {s.state}" for s in states if s.state != FRESH]
    return ", ".join(parts) if parts else "all fresh and passing"
