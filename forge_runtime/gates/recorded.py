"""A goal's final gates as a person's `/goal` found them: the only definitions it is judged by.

`.forge/gates.yaml` is a file in the work tree, where an agent's tools can write (the guard
refuses that while a goal is in progress, but the kernel layer does not bind it). So every
ledger record a person's `/goal` writes (`activate`, `reopen`, `bind`) carries one field,
`final_gates`: the gates file's definitions read from the file itself (never from the
config cache, which the agent can write too), or the problem that kept forge from reading
them. A goal is then judged only against the newest such record: a gate whose definition
changed since, or that was removed from the file, still counts as the recorded one; the
person changes a goal's gates by editing the file and typing the same `/goal` again.

    {"gates": [{"name": "unit-tests", "command": ..., "boundary": [...], "timeout": ...}],
     "digest": "<sha256 of the definitions>"}          (a list: records sort their keys)
    {"gates": [], "problem": "FORGE_GATES_INVALID: ...", "digest": ...}
"""

from __future__ import annotations

from forge_runtime import fastjson
from forge_runtime.digest import sha256_hex
from forge_runtime.errors import ForgeError
from forge_runtime.gates import config, defined
from forge_runtime.records import record

FIELD = "final_gates"
# The kinds of record a person's `/goal` writes (activation.py); each one records the gates.
PERSON_KINDS = ("activate", "reopen", "bind")


class Recorded(record("Recorded", "gates digest problem")):
    """The final gates a goal is judged by (`config.Gate`s), their digest, and the problem
    that kept forge from reading the gates file at the `/goal` (None: read)."""

    __slots__ = ()

    def as_field(self) -> dict:
        field = {"gates": _specs(self.gates), "digest": self.digest}
        if self.problem is not None:
            field["problem"] = self.problem
        return field


def _specs(gates) -> list[dict]:
    return [{"name": gate.name, **gate.spec()} for gate in gates]


def _digest(specs: list, problem: str | None) -> str:
    body = fastjson.dumps({"gates": specs, "problem": problem}, sort_keys=True)
    return sha256_hex(body.encode("utf-8"))


def snapshot(project) -> Recorded | None:
    """The project's final gates now, read from the gates file itself; None without one."""
    if not defined(project):
        return None
    try:
        gates = config.load(project, cached=False)
        problem = None
    except ForgeError as exc:
        gates, problem = [], exc.message
    return Recorded(tuple(gates), _digest(_specs(gates), problem), problem)


def field_for(project) -> dict:
    """The `final_gates` field for a record a person's `/goal` writes (empty: no gates).

    Makes sure the ledger's gates directory and the receipt key exist too: the hooks look
    for the directory (`gates.in_play`) to judge a goal whose gates file was deleted since,
    and in a sandboxed posture the agent's `forge gate run` cannot create the key."""
    from forge_runtime.gates import receipts

    recorded = snapshot(project)
    if recorded is None:
        return {}
    receipts.ensure_key(project)
    return {FIELD: recorded.as_field()}


def of_field(field) -> Recorded:
    """The Recorded a ledger record's field holds (the ledger's chain vouches for it)."""
    specs = field.get("gates") if isinstance(field, dict) else None
    try:
        gates = config.gates_of({spec["name"]: spec for spec in specs})
    except (TypeError, KeyError):
        return Recorded((), "", "the goal's record of its final gates is not forge's")
    problem = field.get("problem")
    return Recorded(tuple(gates), field.get("digest") or "",
                    problem if isinstance(problem, str) else None)


def of_goal(project, nonce: str) -> Recorded | None:
    """The final gates goal `nonce` is judged by: those of the newest record a person's
    `/goal` wrote; None when that record holds none (the project had no gates file then)."""
    from forge_runtime.goal.store.ledger import Ledger

    ledger = Ledger(project.ledger_root, nonce)
    with ledger.lock(shared=True):
        entry = ledger.head().record
        while entry.get("kind") not in PERSON_KINDS and entry["seq"] > 1:
            entry = ledger.previous(entry)
    return of_field(entry[FIELD]) if FIELD in entry else None


def drift(recorded: Recorded, current: list[config.Gate]) -> list[str]:
    """The recorded gates the gates file now defines otherwise, or no longer defines."""
    now = {gate.name: gate.definition_digest for gate in current}
    return [gate.name for gate in recorded.gates
            if now.get(gate.name) != gate.definition_digest]


def changes(before: Recorded | None, after: Recorded | None) -> list[str]:
    """What a person's `/goal` would record differently from `before` (the gates the goal
    last recorded; None: none) when the gates file now reads as `after`: one line per gate
    added, removed or redefined, and the file's appearing, vanishing or breaking. Empty
    when they are the same definitions."""
    if (before.digest if before else None) == (after.digest if after else None):
        return []
    if after is None:
        return ["the gates file is gone: the goal would have no final gates"]
    if before is None:
        before = Recorded((), "", None)
    lines = []
    if after.problem is not None and after.problem != before.problem:
        lines.append(f"the gates file cannot be read now ({after.problem})")
    old = {gate.name: gate.spec() for gate in before.gates}
    new = {gate.name: gate.spec() for gate in after.gates}
    for name in sorted(old.keys() - new.keys()):
        lines.append(f"gate {name} removed (it ran `{old[name]['command']}`)")
    for name in sorted(new.keys() - old.keys()):
        lines.append(f"gate {name} added: runs `{new[name]['command']}`")
    for name in sorted(old.keys() & new.keys()):
        changed = [f"{key} {_shown(old[name][key])} -> {_shown(new[name][key])}"
                   for key in ("command", "boundary", "timeout")
                   if old[name][key] != new[name][key]]
        if changed:
            lines.append(f"gate {name} changed: {'; '.join(changed)}")
    return lines or ["the gates file's definitions changed"]


def _shown(value) -> str:
    return f"`{value}`" if isinstance(value, str) else fastjson.dumps(value)


def last_recorded(project, objective: str) -> tuple[str, Recorded | None] | None:
    """(nonce, the gates it last recorded) for the goal of `objective`; None when the
    objective has no goal yet (its first `/goal` has nothing to compare with)."""
    from forge_runtime.goal.store.objective import objective_hash
    from forge_runtime.goal.store.objective_index import find_nonce

    nonce = find_nonce(project.ledger_root, objective_hash(objective))
    return None if nonce is None else (nonce, of_goal(project, nonce))
