"""`forge goal adopt`: a project a person moved or copied keeps its goals, and their counts.

The ledger travels with the project, but the goal witness knows it by where it was
(goal/sync/ledger_location.py), so at the new place every `/goal` stops with
FORGE_GOAL_LEDGER_MOVED until a person adopts it. Adopting never grants budget: every goal
the witness saw at each place the ledger lived must be here at or past the record seen there
(a copy taken before the original went on is refused as rolled back), and only then is the
ledger noted here, each goal at its head, beside the witness's gates and remote notes of the
place it came from.
"""

from __future__ import annotations

import os
import shutil

from forge_runtime.goal.store.layout import (
    WITNESS_GATES_DIR,
    WITNESS_GOALS_DIR,
    WITNESS_REMOTE_DIR,
    places_file,
    repository_witness_dir,
)
from forge_runtime.goal.store.ledger import Ledger, goal_nonces, tampered
from forge_runtime.goal.sync.ledger_location import held_repository_id
from forge_runtime.goal.sync.witness import Witness, compare, read, write


def adopt(project) -> list[dict]:
    """Note the ledger of this work tree, moved or copied from another place, as this
    place's, once every goal in it holds what the witness saw at each place it came from.
    A work tree whose git directory a person set up anew (`git init` over a ledger kept
    under `.forge/local/goals/`) first gets its old ledger's goals carried over. The goals,
    as verified (none when the ledger is witnessed here already)."""
    witness = Witness(project)
    whereabouts = witness.whereabouts
    whereabouts.commondir_agrees()
    seen_tree = whereabouts.seen_tree()
    if seen_tree is not None:
        _carry(str(seen_tree.get("ledger")), witness.ledger_root)
    repository = held_repository_id(witness.ledger_root)
    places = (read(places_file(repository)) or {}).get("places") if repository else None
    places = places if isinstance(places, dict) else {}
    if seen_tree is None and (not places or witness.ledger_root in places):
        return []
    nonces = goal_nonces(project)
    for place, key in places.items():
        if place != witness.ledger_root:
            _holds_what_was_seen(witness.ledger_root, nonces, place, str(key))
    whereabouts.settle_here(repository, {  # a moved one's old place is gone
        place: key for place, key in places.items() if os.path.isdir(place)})
    return [_kept(witness, nonce, [str(key) for key in places.values()]) for nonce in nonces]


def _carry(old: str, new: str) -> None:
    """Copy the goals of the ledger at `old` (this work tree's, as the witness saw it) into
    the ledger at `new`, which must hold none of its own: two ledgers are never merged here."""
    if not os.path.isdir(old):
        raise tampered(f"the ledger the witness saw at {old} is gone, so this work tree's "
                       "goals cannot be carried over")
    if any(len(name) == 32 for name in (os.listdir(new) if os.path.isdir(new) else ())):
        raise tampered(f"the ledger at {new} holds goals of its own, and the witness saw this "
                       f"work tree's at {old}: forge does not merge two ledgers")
    shutil.copytree(old, new, symlinks=True, dirs_exist_ok=True)


def _holds_what_was_seen(ledger_root: str, nonces: list[str], place: str, key: str) -> None:
    """Fail closed unless the ledger at `ledger_root` holds every goal the witness `key`
    saw in the ledger at `place`, at or past the record it saw."""
    seen_dir = os.path.join(repository_witness_dir(key), WITNESS_GOALS_DIR)
    names = sorted(os.listdir(seen_dir)) if os.path.isdir(seen_dir) else []
    for name in names:
        if not name.endswith(".json") or name.startswith("."):
            continue
        nonce = name[:-len(".json")]
        if nonce not in nonces:
            raise tampered(f"goal {nonce}: the witness saw it in the ledger at {place}, "
                           f"and the ledger at {ledger_root} has no such goal")
        ledger = Ledger(ledger_root, nonce)
        with ledger.lock():
            compare(ledger, ledger.head(), read(os.path.join(seen_dir, name)) or {})


def _kept(witness: Witness, nonce: str, keys: list[str]) -> dict:
    """Goal `nonce`, verified and noted at its head in this place's witness, with what the
    witness of the place it came from kept of its gates record and its remote."""
    for kind in (WITNESS_GATES_DIR, WITNESS_REMOTE_DIR):
        mine = os.path.join(witness.dir, kind, f"{nonce}.json")
        for key in keys:
            seen = read(os.path.join(repository_witness_dir(key), kind, f"{nonce}.json"))
            if seen is not None and not os.path.exists(mine):
                write(mine, seen)
    ledger = Ledger(witness.ledger_root, nonce, witness=witness)
    goal = ledger.verified()
    with ledger.lock():
        witness.record(nonce, ledger.head().record)
    return goal
