"""A witness of each goal's head, kept outside the work tree, so a lost ledger is noticed.

The ledger's hash chain catches a record edited, reordered or cut from the middle, but not a
ledger deleted whole, rolled back to an older copy, replaced by another, or hidden by
pointing forge elsewhere (a git directory swapped under the work tree, the project moved:
ledger_location.py, which this witness asks first at every check). Each of those would
otherwise let the next `/goal` start again from zero. So every append also notes the goal's
head where the agent's work tree and git directory are not:

    <witness root>/<repository key>/goals/<nonce>.json      {"seq", "hash", "objective_hash",
                                                             "ledger"}: the last head seen
    <witness root>/<repository key>/objectives/<hash>       the goal of that objective
    <witness root>/sessions/<session id>                    {"repository", "nonce"}: bound
    <witness root>/<repository key>/gates/<nonce>.json      {"sha256", "previous"}: the
                                                             goal's gates record as forge
                                                             last wrote it (gates/witnessed.py)
    <witness root>/<repository key>/remote/<nonce>.json     {"seq", "hash"}: the last head
                                                             this clone saw on the remote

The witness root is a per-user state directory, `$XDG_STATE_HOME/forge/witness` (default
`~/.local/state/forge/witness`): the hooks, the agent's Bash tool and a person's terminal all
find the same one, which the plugin's data directory would not give (the host passes
`CLAUDE_PLUGIN_DATA` to hooks only). The repository key is the git directory's own path,
found from the work tree's layout and never from `commondir`, so rewriting that file cannot
change it.

Checks: at every append (so at every Stop that charges; O(1): a few small files, and one
record read when the witness lags), a ledger that is not where the witness vouches for it
(ledger_location.py), a ledger whose head is behind the witness, or whose record at
the witnessed sequence is another one, or that lives somewhere else than it did, fails closed
with FORGE_GOAL_LEDGER_TAMPERED; at every activation and `forge goal verify`, every witnessed
goal of the repository must still be in its ledger. A session the witness knows as bound
whose binding the ledger lost is stopped at its next Stop: with `FORGE_GOAL_UNBUDGETED` and
the way back (`/goal`) when its goal is still in the ledger, fail closed when the goal is
gone too. A ledger joined with another clone's chain (merge.py) keeps the witnessed record
inside its merge record, which counts as holding it. A remote chain that no longer holds
the head this clone last saw there was rewritten (remote.py). A goal with no witness yet (one
from before the witness, or the witness deleted) is adopted: deleting the witness and the
ledger together is what the guard and the kernel sandbox stand against.

Hooks of a session with no goal pay one more stat for this (`session_marker`), only when
neither a binding nor a pending `/goal` exists; this module imports nothing heavy.
"""

from __future__ import annotations

import os

from forge_runtime.goal.store.layout import (
    WITNESS_GATES_DIR,
    WITNESS_GOALS_DIR,
    WITNESS_OBJECTIVES_DIR,
    WITNESS_REMOTE_DIR,
    repository_witness_dir,
    session_marker,
)
from forge_runtime.goal.sync.witness_files import read, write
from forge_runtime.roots import witness_dir

FIX = "forge goal verify"


def witness_root():
    """Where forge keeps goal witnesses for this user (outside every work tree), as a
    `pathlib.Path` (the goal path itself works from `roots.witness_dir()`'s string)."""
    from pathlib import Path

    return Path(witness_dir())


def repository_key(project) -> str:
    """This repository's witness key: its git common dir's real path as the work tree's
    layout gives it (roots.layout_common_dir: a linked worktree's `<git dir>/worktrees/<name>`
    counts as `<git dir>`), never read from `commondir`; outside git, the project root's."""
    from forge_runtime.digest import sha256_hex

    base = project.root if project.git_common_dir is None else project.git_common_dir
    return sha256_hex(os.fsencode(os.path.realpath(base)))[:32]


def _tampered(message: str):
    from forge_runtime.goal.store.ledger import tampered

    return tampered(message, FIX)


class Witness:
    """The witness of one repository's goals."""

    def __init__(self, project) -> None:
        self.repository = repository_key(project)
        self.dir = repository_witness_dir(self.repository)
        self.ledger_root = os.path.realpath(project.ledger_root)
        from forge_runtime.goal.sync.ledger_location import Whereabouts

        self.whereabouts = Whereabouts(self, project)

    # -- what every append notes ------------------------------------------------------------

    def record(self, nonce: str, record: dict) -> None:
        """Note `record` as goal `nonce`'s head (called after it is in the ledger)."""
        self.whereabouts.note()
        goal = record["goal"]
        write(os.path.join(self.dir, WITNESS_GOALS_DIR, f"{nonce}.json"),
               {"seq": record["seq"], "hash": record["hash"],
                "objective_hash": goal.get("objective_hash"), "ledger": self.ledger_root})
        index = os.path.join(self.dir, WITNESS_OBJECTIVES_DIR, str(goal.get("objective_hash")))
        if not os.path.exists(index):
            write(index, {"nonce": nonce})

    def mark_session(self, session_id: str, nonce: str) -> None:
        """Remember that `session_id` is bound (once; a binding is never undone)."""
        marker = session_marker(session_id)
        if not os.path.lexists(marker):
            write(marker, {"repository": self.repository, "nonce": nonce})

    # -- checks -------------------------------------------------------------------------------

    def check(self, ledger, head) -> None:
        """Fail closed unless forge finds the ledger where the witness saw it and `head` is
        at or past what the witness saw of this goal."""
        self.whereabouts.vouch()
        seen = read(os.path.join(self.dir, WITNESS_GOALS_DIR, f"{ledger.nonce}.json"))
        if seen is None:
            return  # not witnessed yet: adopted at its next append
        if seen.get("ledger") != self.ledger_root:
            raise _tampered(f"goal {ledger.nonce}: the witness saw record {seen.get('seq')} "
                            f"in the ledger at {seen.get('ledger')}, and forge now finds the "
                            f"ledger at {self.ledger_root} (moved, or .git/commondir "
                            "rewritten)")
        compare(ledger, head, seen)

    # -- the goal's gates record (gates/witnessed.py) -----------------------------------------

    def gates_record_path(self, nonce: str) -> str:
        return os.path.join(self.dir, WITNESS_GATES_DIR, f"{nonce}.json")

    def gates_record(self, nonce: str) -> dict | None:
        """{"sha256", "previous"}: the digests of forge's last two writes of the record."""
        return read(self.gates_record_path(nonce))

    def note_gates_record(self, nonce: str, seen: dict) -> None:
        write(self.gates_record_path(nonce), seen)

    # -- what this clone saw of the goal on the remote (remote.py) ---------------------------

    def remote_seen(self, nonce: str) -> dict | None:
        """{"seq", "hash"} of the last head this clone pushed to or read from the remote."""
        return read(os.path.join(self.dir, WITNESS_REMOTE_DIR, f"{nonce}.json"))

    def note_remote(self, nonce: str, record: dict) -> None:
        write(os.path.join(self.dir, WITNESS_REMOTE_DIR, f"{nonce}.json"),
               {"seq": record["seq"], "hash": record["hash"]})

    def check_all(self, ledger_for) -> None:
        """Every goal the witness saw must still be in this repository's ledger, at or past
        the head it saw (`ledger_for(nonce)` gives a goal's Ledger); for activations and
        `forge goal verify`."""
        self.whereabouts.vouch()
        goals = os.path.join(self.dir, WITNESS_GOALS_DIR)
        try:
            names = sorted(os.listdir(goals))
        except FileNotFoundError:
            return
        for name in names:
            if not name.endswith(".json") or name.startswith("."):
                continue
            ledger = ledger_for(name[:-len(".json")])
            if not os.path.isdir(ledger.dir):
                seen = read(os.path.join(goals, name)) or {}
                raise _tampered(f"goal {ledger.nonce}: the witness saw record "
                                f"{seen.get('seq')} in the ledger at {seen.get('ledger')}, "
                                f"and the ledger at {self.ledger_root} has no such goal "
                                "(deleted, replaced, or .git/commondir rewritten)")
            with ledger.lock():
                self.check(ledger, ledger.head())

    def goal_of(self, objective_hash: str) -> str | None:
        """The goal the witness saw for this objective, or None."""
        nonce = (read(os.path.join(self.dir, WITNESS_OBJECTIVES_DIR, objective_hash))
                 or {}).get("nonce")
        return nonce if isinstance(nonce, str) else None

    def bound_goal(self, session_id: str) -> str | None:
        """The goal the witness saw `session_id` bound to in this repository, or None."""
        seen = read(session_marker(session_id)) or {}
        nonce = seen.get("nonce")
        return nonce if seen.get("repository") == self.repository and \
            isinstance(nonce, str) else None

    def lost_binding(self, session_id: str, nonce: str):
        """The refusal for a bound session whose goal the ledger no longer has."""
        return _tampered(f"session {session_id} is bound to goal {nonce} (the witness says "
                         f"so), but the ledger at {self.ledger_root} has no such goal "
                         "(deleted, replaced, or .git/commondir rewritten)")


def compare(ledger, head, seen: dict) -> None:
    """Fail closed unless `head` holds the record `seen` (a witness's note of the goal):
    at or past its sequence, with its hash there, or kept inside a merge record."""
    seq = seen.get("seq")
    where = f"goal {ledger.nonce}: the witness saw record {seq}"
    if not isinstance(seq, int):
        raise _tampered(f"{where}, which is not a record")
    if head.seq >= seq:
        held = head.record if head.seq == seq else ledger.record_at(seq)
        if held.get("hash") == seen.get("hash"):
            return
    from forge_runtime.goal.store.merge import holds

    if holds(ledger.records(), seq, seen.get("hash")):
        return  # joined with another clone's chain: the record lives on in a merge
    if head.seq < seq:
        raise _tampered(f"{where}, the ledger's head is record {head.seq} (rolled back)")
    raise _tampered(f"{where}, the ledger holds another record there (replaced)")


def witnessed_ledger(project, nonce: str):
    """Goal `nonce`'s ledger, checked against and noted in this project's witness."""
    from forge_runtime.goal.store.ledger import Ledger

    return Ledger(project.ledger_root, nonce, witness=Witness(project))
