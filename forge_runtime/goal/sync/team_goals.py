"""Every goal published on a remote, and this clone's, each chain verified before anyone
counts it: what `forge goal report --remote NAME` totals for a team.

The remote is read the way a sync reads it (remote.py, gitrefs.py): one fetch of
`refs/forge/goals/*` into a private namespace of this clone, dropped again, then `ls-tree`
and `cat-file` on what came; forge's git pinned against every hook and program either
repository's config names, only a remote a person configured (never a URL), and nothing
of the remote taken into this clone's ledger. A commit's message is anyone's claim: only
the records are read, and a chain counts only when it verifies whole (`check_chain`,
the full verification of a ledger on disk, held in memory), belongs to the ref it is under,
and still holds the head this clone last saw there (the witness). Any other is listed as
refused, with why, and counted nowhere.

A goal both here and on the remote is counted once, as a sync would join it: the chain that
holds the other, or, when both moved since they parted, the remote's with one join on top
(merge.build, in memory), so no turn counts twice and none is lost.
"""

from __future__ import annotations

from forge_runtime.errors import ForgeError
from forge_runtime.goal.store import merge
from forge_runtime.goal.store.ledger import (
    VERIFY_FIX,
    Ledger,
    check_chain,
    goal_nonces,
    restore_fix,
    rewritten,
    tampered,
)
from forge_runtime.goal.sync.remote import REF_PREFIX, RemoteLedger
from forge_runtime.goal.sync.witness import Witness
from forge_runtime.records import record

REMOTE, HERE, BOTH, JOINED = "remote", "this clone", "both", "joined"


class Counted(record("Counted", "nonce chain where")):
    """A goal's verified chain (oldest first) and where it came from (REMOTE, HERE, BOTH:
    one holds the other, JOINED: both moved, joined here)."""

    __slots__ = ()


class Refused(record("Refused", "nonce where why fix")):
    """A chain that did not verify, where it was (REMOTE, HERE), why, and the way out."""

    __slots__ = ()


def gather(project, remote_name: str) -> tuple[list[Counted], list[Refused]]:
    """Every goal on `remote_name` and in this clone's ledger; GitFailed when the remote
    cannot be read at all."""
    ours, refused = _local_chains(project)
    theirs, refused_there = _remote_chains(project, remote_name,
                                           {*ours, *(found.nonce for found in refused)})
    refused += refused_there
    counted = []
    for nonce in sorted({*theirs, *ours}):
        one, other = theirs.get(nonce), ours.get(nonce)
        if one is None or other is None:
            counted.append(Counted(nonce, one or other, REMOTE if other is None else HERE))
            continue
        try:
            counted.append(_joined(nonce, one, other))
        except ForgeError as exc:
            refused.append(Refused(nonce, BOTH, exc.message, exc.fix))
    return counted, refused


def _joined(nonce: str, theirs: list[dict], ours: list[dict]) -> Counted:
    """The goal as a sync would make it of the remote's chain and this clone's."""
    if theirs[0]["hash"] != ours[0]["hash"]:
        raise tampered(f"goal {nonce}: the remote's chain starts from another genesis record "
                       "than this clone's (replaced)", restore_fix(nonce))
    fork = merge.fork_point(ours, theirs)
    if fork == len(theirs):
        return Counted(nonce, ours, BOTH)
    if fork == len(ours):
        return Counted(nonce, theirs, BOTH)
    return Counted(nonce, [*theirs, merge.build(theirs, ours[fork:])], JOINED)


def _remote_chains(project, remote_name: str,
                   here: set[str]) -> tuple[dict[str, list[dict]], list[Refused]]:
    """The remote's chains that verify, and those that do not; the way out of one is this
    clone's chain published over it when this clone has the goal (`here`), else a look at
    the ref: the clone that ran the goal restores it."""
    remote = RemoteLedger(project, remote_name)
    witness = Witness(project)
    chains, refused = {}, []
    for nonce, (commit, _claimed) in sorted(remote.goals().items()):
        try:
            chain = remote.chain(nonce, commit)
            check_chain(nonce, chain)
            seen = witness.remote_seen(nonce)
            if seen and not merge.holds(chain, seen.get("seq"), seen.get("hash")):
                raise rewritten(nonce, seen)
        except ForgeError as exc:
            fix = restore_fix(nonce) if nonce in here else \
                f"git ls-remote {remote_name} {REF_PREFIX}{nonce}"
            refused.append(Refused(nonce, REMOTE, exc.message, fix))
            continue
        chains[nonce] = chain
    return chains, refused


def _local_chains(project) -> tuple[dict[str, list[dict]], list[Refused]]:
    witness = Witness(project)
    chains, refused = {}, []
    for nonce in goal_nonces(project):
        try:
            chains[nonce] = Ledger(project.ledger_root, nonce, witness=witness).history()
        except ForgeError as exc:
            refused.append(Refused(nonce, HERE, exc.message, exc.fix or VERIFY_FIX))
    return chains, refused
