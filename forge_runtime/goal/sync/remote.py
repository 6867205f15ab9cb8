"""A goal's ledger published on the repository's own remote: `refs/forge/goals/<nonce>`.

The ledger lives in one clone's git directory; a fresh clone (a cloud session, a CI
runner, a teammate's machine) would start the same objective again at 0. With
`goal: {remote: origin}` in `.forge/guard.yaml`, each goal's chain is also kept on that
remote, as a commit whose tree holds the records (`records/00000001.json` ...; its message
names the goal, its objective and its head). The ledger stays local-first: a record is
durable here before any push, and a push is owed until one succeeds (`remote.json` beside
the records says what the remote last took), so the network never loses a record.

A sync (`sync`) reads the remote's chain and joins it with this clone's, under the goal's
lock, before pushing the result with a compare-and-swap (gitrefs.py):
- the remote is behind this clone (its chain is a prefix of ours): push ours;
- this clone is behind (ours is a prefix of the remote's): take the remote's records;
- both moved since they parted: one merge record on top of the remote's head takes in
  this clone's records (merge.py), and that is pushed; the clone that loses a race reads
  the winner and joins again, so every clone converges on one chain.
A chain read from the remote is verified whole, as a local one (ledger.stage), and must
still hold the head this clone last saw there (the witness keeps it outside the work
tree): one that does not was rewritten, and the goal fails closed with the fix. Nothing
read from the remote ever lowers a count: the local chain is always inside the result.
"""

from __future__ import annotations

import os

from forge_runtime import fastjson
from forge_runtime.errors import ForgeError
from forge_runtime.gitrefs import GitFailed, RemoteRefs
from forge_runtime.goal.store import layout, merge, record_file
from forge_runtime.goal.store.ledger import (
    Head,
    Ledger,
    discard,
    restore_fix,
    rewritten,
    stage,
    tampered,
)
from forge_runtime.goal.sync.remote_state import (  # noqa: F401 (the names callers use, here too)
    MERGED,
    PUBLISH_EVERY,
    THE_REMOTE,
    THIS_CLONE,
    UNREACHABLE,
    adopt_repository,
    known_repository,
    published_mark,
    read_state,
    source,
    unreachable,
    write_state,
)

REF_PREFIX = "refs/forge/goals/"
GIT_SECONDS = 20
# All of a person's /goal's reading of the remote (`arrive`), in the Stop that confirms it:
# well inside the host's 30 s for a Stop hook (hooks/hooks.json), which a remote answering
# each git just in time would otherwise outlast, every Stop killed and no turn charged.
ARRIVE_SECONDS = 15
# The most records a chain read from the remote may hold: about 10 s of taking in at the
# bench's pace (bench/goal_remote.py: 2,000 turns in about 1 s), so that a chain padded
# past what a Stop can take in fails closed instead of killing every Stop (no turn charged).
MAX_RECORDS = 20_000
# a snapshot carries beside its records (layout.RECORDS_DIR) the sealed price table the head's
# tranche prices with (layout.PRICES_DIR, as in the ledger), so a clone that continues the
# goal can price its turns
MAX_TABLES = 4
ATTEMPTS = 8


def configured(project) -> str | None:
    """The remote `.forge/guard.yaml` publishes goals on (`goal: {remote: NAME}`), or None."""
    from forge_runtime.protected.guard_file import goal_settings

    name = goal_settings(project).get("remote")
    return name if isinstance(name, str) and name else None


# -- the remote's side ----------------------------------------------------------------------

class RemoteLedger:
    """Goal chains on remote `remote` of `project`'s repository."""

    def __init__(self, project, remote: str, deadline: float | None = None) -> None:
        self.project = project
        self.remote = remote
        self.refs = RemoteRefs(project.root, remote, REF_PREFIX, timeout=GIT_SECONDS)
        self.refs.deadline = deadline

    def goals(self) -> dict[str, tuple[str, dict]]:
        """nonce -> (commit, what its message says) for every goal on the remote."""
        heads = self.refs.fetch("*")
        said = self.refs.messages(sorted(set(heads.values())))
        found = {}
        for nonce, commit in heads.items():
            if len(nonce) != 32 or nonce.strip("0123456789abcdef"):
                continue  # not a nonce forge makes: never a directory name of the ledger
            try:
                about = fastjson.loads(said.get(commit, ""))
            except ValueError:
                about = None
            found[nonce] = (commit, about if isinstance(about, dict) else {})
        return found

    def chain(self, nonce: str, commit: str) -> list[dict]:
        """The records of the snapshot `commit`, oldest first (see `records`)."""
        return list(self.records(nonce, commit))

    def records(self, nonce: str, commit: str):
        """The records of the snapshot `commit`, oldest first, read one at a time, each
        checked against its own hash and name (the chain itself is verified by
        `ledger.stage`). The snapshot is in this clone's store once fetched, so git failing
        to read it (a ref at a blob, a tree entry that is no blob, a record past the size
        limit) says it is not forge's: the tamper error, never `unreachable` (which would
        let a fresh clone start the objective over at 0)."""
        try:
            yield from self._records(nonce, commit)
        except GitFailed as exc:
            raise tampered(f"goal {nonce}: the remote's ledger on {self.remote!r} cannot be "
                           f"read as forge's ({exc.why})", self._fix(nonce)) from None

    def _entries(self, commit: str) -> list[tuple[str, str]]:
        """(path, blob) of every file the snapshot `commit` holds."""
        listed = self.refs.checked("ls-tree", "-r", commit)
        entries = []
        for line in listed.splitlines():
            meta, _, path = line.partition("\t")
            entries.append((path, meta.split()[-1]))
        return entries

    def _records(self, nonce: str, commit: str):
        entries = [(path, sha) for path, sha in self._entries(commit)
                   if not path.startswith(layout.PRICES_DIR + "/")]
        if len(entries) > MAX_RECORDS:
            raise tampered(f"goal {nonce}: the remote's ledger on {self.remote!r} holds "
                           f"{len(entries)} records, more than the {MAX_RECORDS} a hook takes "
                           "in", self._fix(nonce))
        names = [layout.RECORDS_DIR + "/" + record_file.record_name(seq)
                 for seq in range(1, len(entries) + 1)]
        if sorted(path for path, _ in entries) != names:
            raise tampered(f"goal {nonce}: the remote's ledger on {self.remote!r} holds files "
                           "that are not a chain of records", self._fix(nonce))
        for seq, data in enumerate(self.refs.blobs([sha for _, sha in sorted(entries)]), 1):
            try:
                record = fastjson.loads(data)
            except ValueError:
                record = None
            if not isinstance(record, dict) or record.get("seq") != seq or \
                    record_file.seal(record).get("hash") != record.get("hash"):
                raise tampered(f"goal {nonce}: record {seq} of the remote's ledger on "
                               f"{self.remote!r} is not forge's (edited)", self._fix(nonce))
            yield record

    def keep_tables(self, nonce: str, commit: str, ledger_root: str) -> None:
        """Seal beside this clone's ledger the price tables the snapshot `commit` carries
        (`snapshot`): each is kept under its own digest, which the goal's records name and
        `pricing.sealed` checks again at every use, so a table that is not forge's prices
        nothing. One that is not a table at all is the tamper error."""
        from forge_runtime.goal.budget import pricing

        try:
            tables = [sha for path, sha in self._entries(commit)
                      if path.startswith(layout.PRICES_DIR + "/")]
            if len(tables) > MAX_TABLES:
                raise ValueError(f"{len(tables)} price tables")
            for data in self.refs.blobs(tables):
                pricing.seal(ledger_root, data)
        except (GitFailed, ValueError, TypeError, AttributeError) as exc:
            raise tampered(f"goal {nonce}: the price tables of the remote's ledger on "
                           f"{self.remote!r} are not forge's ({exc})", self._fix(nonce)) \
                from None

    def opens_with(self, nonce: str, commit: str, digest: str) -> bool:
        """Is the snapshot's first record goal `nonce` of objective `digest`? A commit's
        message is anyone's claim; a chain whose genesis is another goal is not this
        objective's (its identity never changes along a chain that verifies). One whose
        first record is not forge's is kept, to fail closed where it is taken in."""
        records = self.records(nonce, commit)
        try:
            goal = next(records, {}).get("goal") or {}
        except ForgeError:
            return True
        finally:
            records.close()
        return goal.get("nonce") == nonce and goal.get("objective_hash") == digest

    def _fix(self, nonce: str) -> str:
        return restore_fix(nonce)

    def snapshot(self, ledger: Ledger, head: Head, parent: str | None) -> str:
        """The commit holding this clone's chain up to `head` (caller holds the lock), on
        top of `parent`, what the remote holds now: every push forge makes is a
        fast-forward, so a hosting that refuses force pushes and deletions under
        refs/forge/ lets forge's pushes through and stops a rewrite."""
        paths = [os.path.join(ledger.records_dir, record_file.record_name(seq))
                 for seq in range(1, head.seq + 1)]
        blobs = self.refs.checked("hash-object", "-w", "--no-filters", "--stdin-paths",
                                  stdin="\n".join(paths) + "\n").split()
        inner = self.refs.checked("mktree", stdin="".join(
            f"100644 blob {sha}\t{os.path.basename(path)}\n"
            for sha, path in zip(blobs, paths, strict=True))).strip()
        listing = f"040000 tree {inner}\t{layout.RECORDS_DIR}\n"
        table = _sealed_table(ledger, head.goal)
        if table is not None:
            sha = self.refs.checked("hash-object", "-w", "--no-filters", table).strip()
            prices = self.refs.checked("mktree", stdin=f"100644 blob {sha}\t"
                                                       f"{os.path.basename(table)}\n").strip()
            listing += f"040000 tree {prices}\t{layout.PRICES_DIR}\n"
        tree = self.refs.checked("mktree", stdin=listing).strip()
        goal = head.goal
        return self.refs.commit(fastjson.dumps(
            {"nonce": goal["nonce"], "objective_hash": goal["objective_hash"],
             "seq": head.seq, "hash": head.record["hash"], "turn_count": goal["turn_count"]},
            sort_keys=True), tree, parent)


def _sealed_table(ledger: Ledger, goal: dict) -> str | None:
    """The sealed price table the goal's tranche prices with, when it is beside the ledger."""

    digest = (goal.get("prices") or {}).get("digest") if isinstance(goal.get("prices"),
                                                                     dict) else None
    if not isinstance(digest, str) or len(digest) != 64 or digest.strip("0123456789abcdef"):
        return None
    path = layout.sealed_prices_file(ledger.root, digest)
    return path if os.path.isfile(path) else None


# -- joining ----------------------------------------------------------------------------------

def _take_in(project, ledger: Ledger, head: Head, theirs: list[dict], witness) -> Head:
    """Join the remote's chain `theirs` into this clone's (caller holds the lock)."""
    nonce, fix = ledger.nonce, restore_fix(ledger.nonce)
    seen = witness.remote_seen(nonce)
    if seen and not merge.holds(theirs, seen.get("seq"), seen.get("hash")):
        raise rewritten(nonce, seen)
    ours = ledger.records()
    if theirs[0]["hash"] != ours[0]["hash"]:
        raise tampered(f"goal {nonce}: the remote's ledger starts from another genesis "
                       "record than this clone's (replaced)", fix)
    fork = merge.fork_point(ours, theirs)
    if fork == len(theirs):
        witness.note_remote(nonce, theirs[-1])
        return head  # the remote is behind: ours is pushed as it is
    joined = theirs if fork == len(ours) else [*theirs, merge.build(theirs, ours[fork:])]
    staged = stage(ledger.root, nonce, joined)
    head = ledger.install(staged)
    witness.note_remote(nonce, theirs[-1])
    _mirror(project, head.goal)
    return head


def _mirror(project, goal: dict) -> None:
    """Bring state.md's goal fields up to a joined goal, when state.md follows it."""
    from forge_runtime.goal.store import state_file

    try:
        mirrored = state_file.read(project.state_path).goal or {}
    except ForgeError:
        return
    if mirrored.get("nonce") == goal["nonce"]:
        state_file.write_goal(project.state_path, goal)


def sync(project, nonce: str, remote_name: str, *, push: bool = True,
         deadline: float | None = None) -> Head:
    """Join the remote's chain of goal `nonce` into this clone's and (with `push`) publish
    the result; raise `unreachable` when the remote does not answer, the tamper error when
    what it holds is not forge's."""
    from forge_runtime.goal.sync.witness import Witness

    witness = Witness(project)
    ledger = Ledger(project.ledger_root, nonce, witness=witness)
    remote = RemoteLedger(project, remote_name, deadline)
    try:
        for _ in range(ATTEMPTS):
            commit = remote.refs.fetch(nonce).get(nonce)
            known = read_state(ledger).get("published") or {}
            theirs = None if commit is None or commit == known.get("commit") \
                else remote.chain(nonce, commit)
            if theirs is not None:
                remote.keep_tables(nonce, commit, project.ledger_root)
            with ledger.lock():
                head = ledger.settle()
                if theirs is not None:
                    head = _take_in(project, ledger, head, theirs, witness)
                    at_remote = theirs[-1]["hash"]
                else:
                    at_remote = known.get("hash") if commit else None
                if at_remote == head.record["hash"]:
                    write_state(ledger, published=published_mark(head, commit), failed=None,
                                told=False, rejected=None)
                    return head
                if not push:
                    return head
                new = remote.snapshot(ledger, head, commit)
            if remote.refs.swap(nonce, commit, new):
                write_state(ledger, published=published_mark(head, new), failed=None,
                            told=False, rejected=None)
                witness.note_remote(nonce, head.record)
                return head
    except GitFailed as exc:
        if ledger.exists():
            write_state(ledger, failed=exc.why)
        raise unreachable(remote_name, exc.why) from None
    raise unreachable(remote_name, f"the goal's ref kept moving ({ATTEMPTS} attempts)")


def arrive(project, digest: str) -> str | None:
    """Before a person's `/goal` finds its objective's goal (under the activation lock):
    take in the remote's goal for this objective, so a fresh clone continues its count.
    Returns what git said when the remote did not answer (the goal goes on locally, and
    the session's first Stop says so once: publisher.after_event)."""
    from forge_runtime.goal.store.objective_index import find_nonce, publish_index
    from forge_runtime.goal.sync.witness import Witness

    name = configured(project)
    if name is None:
        return None
    import time

    deadline = time.monotonic() + ARRIVE_SECONDS
    remote = RemoteLedger(project, name, deadline)
    try:
        found = {nonce: commit for nonce, (commit, about) in remote.goals().items()
                 if about.get("objective_hash") == digest and
                 remote.opens_with(nonce, commit, digest)}
        if len(found) > 1:
            raise tampered(f"the remote {name!r} holds {len(found)} goals for this objective "
                           f"({', '.join(sorted(found))})", f"git ls-remote {name} "
                           "'refs/forge/goals/*'")
        if not found:
            return None
        (nonce, commit), = found.items()
        local = find_nonce(project.ledger_root, digest)
        if local is not None and local != nonce:
            raise tampered(f"this clone's goal {local} and the remote's goal {nonce} have the "
                           "same objective", f"forge goal status --nonce {local}")
        if local is None and os.path.isdir(layout.goal_dir(project.ledger_root, nonce)):
            local = _adopt_unindexed(project, nonce, digest)  # taken in, index not yet
        if local is not None:
            sync(project, nonce, name, push=False, deadline=deadline)
            return None
        witness = Witness(project)
        staged = stage(project.ledger_root, nonce, remote.records(nonce, commit),
                       witness.remote_seen(nonce))
        remote.keep_tables(nonce, commit, project.ledger_root)
    except ForgeError as exc:
        if exc.code != UNREACHABLE:
            raise
        return exc.why
    except GitFailed as exc:
        return exc.why
    os.rename(staged.dir, layout.goal_dir(project.ledger_root, nonce))
    discard(staged.root)
    ledger = Ledger(project.ledger_root, nonce, witness=witness)
    with ledger.lock():
        head = ledger.head()
        adopt_repository(project.ledger_root, head.goal["repository"])
        publish_index(project.ledger_root, digest, nonce)
        witness.record(nonce, head.record)
        witness.note_remote(nonce, head.record)
        write_state(ledger, source=THE_REMOTE, published=published_mark(head, commit))
    return None


def _adopt_unindexed(project, nonce: str, digest: str) -> str:
    """A goal this clone took in from the remote whose objective index a killed hook did not
    write yet: index it, when it is this objective's (else the ledger is not forge's)."""
    from forge_runtime.goal.store.objective_index import publish_index

    if Ledger(project.ledger_root, nonce).current().goal.get("objective_hash") != digest:
        raise tampered(f"goal {nonce} of this clone's ledger is not the objective the remote "
                       "says it is", restore_fix(nonce))
    publish_index(project.ledger_root, digest, nonce)
    return nonce


def restore(project, nonce: str, remote_name: str) -> Head:
    """A person's `forge goal publish --restore`: put this clone's verified chain on the
    remote in place of one that is not forge's (edited, rewritten by hand), leased on what
    the remote holds now. Turns only the replaced chain held are not kept: it did not verify,
    or it lost records this clone had seen there."""
    from forge_runtime.goal.sync.witness import Witness

    witness = Witness(project)
    ledger = Ledger(project.ledger_root, nonce, witness=witness)
    remote = RemoteLedger(project, remote_name)
    try:
        commit = remote.refs.fetch(nonce).get(nonce)
        if commit is not None and _is_forges(remote, nonce, commit, witness, ledger):
            raise ForgeError(f"the remote's ledger of goal {nonce} verifies and holds every "
                             "record this clone saw there: there is nothing to restore, and "
                             "replacing it could drop other clones' turns",
                             f"forge goal publish --nonce {nonce}")
        with ledger.lock():
            ledger.verify()
            head = ledger.settle()
            new = remote.snapshot(ledger, head, commit)
        if not remote.refs.swap(nonce, commit, new):
            raise unreachable(remote_name, "the goal's ref moved while it was restored")
    except GitFailed as exc:
        raise unreachable(remote_name, exc.why) from None
    witness.note_remote(nonce, head.record)
    write_state(ledger, published=published_mark(head, new), failed=None, told=False,
                rejected=None)
    return head


def _is_forges(remote: RemoteLedger, nonce: str, commit: str, witness, ledger: Ledger) -> bool:
    """Does the remote's chain verify and hold the head this clone last saw there?"""
    try:
        theirs = remote.chain(nonce, commit)
        discard(stage(ledger.root, nonce, theirs).root)
    except ForgeError:
        return False
    seen = witness.remote_seen(nonce) or {}
    return merge.holds(theirs, seen.get("seq"), seen.get("hash")) if seen else True
