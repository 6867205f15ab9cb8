"""What a fresh clone may take from the remote: counts, never autonomy (docs/remote-ledger.md).

The remote's `refs/forge/goals/*` is writable by anyone with push access, an agent in
another, unguarded clone included, and a chain that obeys forge's transition rules can be
written without any person: a tranche whose time ceiling is already spent may be followed
by one more activation, and so on. Such a chain verifies; what it must not do is give the
session of a person's `/goal` in THIS clone more than the one tranche that `/goal` grants.
"""

from __future__ import annotations

import json
import subprocess

import pytest
from goal_support import Session

from forge_runtime import gitrefs
from forge_runtime.errors import ForgeError
from forge_runtime.goal.rules import activation
from forge_runtime.goal.store import record_file
from forge_runtime.goal.store.ledger import TAMPERED, Ledger
from forge_runtime.goal.store.objective import objective_hash
from forge_runtime.goal.sync import publisher, remote
from tests.artifact_support import bare_repository
from tests.test_goal_remote import OBJECTIVE, _charge, _goal, _witness, clone


def _forge_tranches(project, nonce: str, extra: int) -> dict:
    """What an agent in an unguarded clone can write without a person, once a tranche is
    spent: `extra` activations, each after a tranche whose time ceiling it set spent."""
    ledger = Ledger(project.ledger_root, nonce, witness=_witness(project))
    with ledger.lock():
        head = ledger.settle()
        for number in range(extra):
            goal = dict(head.goal)
            last = number == extra - 1
            goal.update(activation_id=f"forged-{number}", status="active",
                        activation_count=goal["activation_count"] + 1,
                        minute_ceiling=None if last else 0,
                        tranche_started="2000-01-01T00:00:00Z")
            goal["turn_ceiling"] = 20 * goal["activation_count"]
            head = ledger.append(head, "activate", goal, session="agent")
    return head.goal


@pytest.fixture
def origin(tmp_path):
    return bare_repository(tmp_path / "shared.git")


@pytest.fixture
def quiet_publisher(monkeypatch):
    monkeypatch.setattr(publisher, "spawn", lambda root, nonce: None)
    monkeypatch.setattr("forge_runtime.goal.hosts.transcript.FLUSH_WAIT", 0.05)
    monkeypatch.delenv("CLAUDE_PLUGIN_ROOT", raising=False)
    monkeypatch.delenv("CLAUDE_PROJECT_DIR", raising=False)


def test_a_remote_holding_tranches_no_person_granted_gives_a_fresh_clone_one_tranche(
        origin, quiet_publisher):
    a = clone(origin, "unguarded")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    _charge(a, nonce, [f"a-{n}" for n in range(20)])
    forged = _forge_tranches(a, nonce, 30)
    assert (forged["turn_count"], forged["turn_ceiling"]) == (20, 620)  # and it verifies
    remote.sync(a, nonce, "origin")

    b = clone(origin, "fresh")
    session = Session(b)
    session.person_goal(OBJECTIVE)
    replies = [session.turn() for _ in range(21)]
    stopped = [index for index, reply in enumerate(replies, 1)
               if reply and reply.get("continue") is False]
    assert stopped == [20, 21], stopped  # and every Stop after, until a person's /goal
    assert "the rest of the ceiling came from the remote" in replies[19]["stopReason"]
    assert _goal(b, nonce)["turn_count"] == 41  # every turn that ran is charged

    session.person_goal(OBJECTIVE)  # the person's next /goal grants one more tranche
    replies = [session.turn() for _ in range(20)]
    assert [index for index, reply in enumerate(replies, 1)
            if reply and reply.get("continue") is False] == [20]


# -- what a remote's snapshot says about itself is a claim ------------------------------------

def _git(*args, cwd, stdin: str | None = None) -> str:
    return subprocess.run(["git", *args], cwd=cwd, input=stdin, check=True,
                          capture_output=True, text=True).stdout


def _rewrite_snapshot(shared, nonce: str, message=None, entry=None) -> None:
    """Push (as a fast-forward, which a protected namespace lets through) a commit on top of
    goal `nonce`'s snapshot with its message changed by `message`, or `entry` (a tree line)
    added to its records/ tree."""
    ref = f"refs/forge/goals/{nonce}"
    head = _git("rev-parse", ref, cwd=shared).strip()
    tree = _git("rev-parse", f"{head}^{{tree}}", cwd=shared).strip()
    if entry is not None:
        inner = _git("ls-tree", f"{tree}:records", cwd=shared) + entry
        inner = _git("mktree", cwd=shared, stdin=inner).strip()
        tree = _git("mktree", cwd=shared, stdin=f"040000 tree {inner}\trecords\n").strip()
    said = json.loads(_git("log", "-1", "--format=%B", head, cwd=shared))
    text = json.dumps(message(said) if message else said)
    commit = _git("commit-tree", tree, "-p", head, "-m", text, cwd=shared).strip()
    _git("update-ref", ref, commit, cwd=shared)


def test_another_goal_whose_message_claims_our_objective_is_not_taken_in(
        origin, quiet_publisher):
    a = clone(origin, "other-goal")
    other = activation.activate(a, "some other objective", "sess-a").goal["nonce"]
    remote.sync(a, other, "origin")
    _rewrite_snapshot(origin, other, message=lambda said: {
        **said, "objective_hash": objective_hash(OBJECTIVE)})

    b = clone(origin, "fresh")
    started = activation.activate(b, OBJECTIVE, "sess-b")
    assert started.outcome == activation.NEW and started.goal["nonce"] != other
    remote.sync(b, started.goal["nonce"], "origin")
    again = activation.activate(clone(origin, "fresh-2"), OBJECTIVE, "sess-c")  # one goal
    assert (again.outcome, again.goal["nonce"]) == (activation.BOUND, started.goal["nonce"])


def test_a_blob_whose_text_names_our_goals_commit_hides_nothing(origin, quiet_publisher):
    a = clone(origin, "machine-a")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    _charge(a, nonce, ["a-1", "a-2"])
    remote.sync(a, nonce, "origin")
    real = _git("rev-parse", f"refs/forge/goals/{nonce}", cwd=origin).strip()
    for salt in range(8):  # sorted after our commit or before: both orders are tried
        blob = _git("hash-object", "-w", "--stdin", cwd=origin,
                    stdin=f"{real}\n{{}}\0 {salt}").strip()
        _git("update-ref", f"refs/forge/goals/{salt:032x}", blob, cwd=origin)
    started = activation.activate(clone(origin, "fresh"), OBJECTIVE, "sess-b")
    assert (started.goal["nonce"], started.goal["turn_count"]) == (nonce, 2)


@pytest.mark.parametrize("entry", [
    "160000 commit {commit}\t{name}\n",  # a gitlink: no blob in this clone's store
    "040000 tree {tree}\t{name}\n",
])
def test_a_snapshot_git_cannot_read_as_records_fails_closed_in_a_fresh_clone(
        origin, quiet_publisher, entry):
    a = clone(origin, "machine-a")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    _charge(a, nonce, ["a-1", "a-2"])
    remote.sync(a, nonce, "origin")
    head = _git("rev-parse", f"refs/forge/goals/{nonce}", cwd=origin).strip()
    tree = _git("rev-parse", f"{head}^{{tree}}", cwd=origin).strip()
    _rewrite_snapshot(origin, nonce, entry=entry.format(commit=head, tree=tree,
                                                        name="00000004.json"))
    with pytest.raises(ForgeError) as refused:
        activation.activate(clone(origin, "fresh"), OBJECTIVE, "sess-b")
    assert refused.value.code == TAMPERED  # not "unreachable", which would start at 0
    assert refused.value.fix == f"forge goal publish --nonce {nonce} --restore"


def test_a_record_past_the_size_limit_is_never_read_and_fails_closed(
        origin, quiet_publisher, monkeypatch):
    a = clone(origin, "machine-a")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    _charge(a, nonce, ["a-1"])
    remote.sync(a, nonce, "origin")
    monkeypatch.setattr(gitrefs, "RECORD_BYTES_LIMIT", 64)
    with pytest.raises(ForgeError, match="larger than 64 bytes") as refused:
        activation.activate(clone(origin, "fresh"), OBJECTIVE, "sess-b")
    assert refused.value.code == TAMPERED


@pytest.mark.parametrize("name", ["sessions", "objectives", "a/b", "x" * 32])
def test_a_goal_ref_whose_name_is_no_nonce_is_never_taken_in(origin, quiet_publisher, name):
    """The name becomes a directory of the ledger: `sessions`, `a/b` are not goals'."""
    a = clone(origin, "machine-a")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    remote.sync(a, nonce, "origin")
    ref = f"refs/forge/goals/{nonce}"
    head = _git("rev-parse", ref, cwd=origin).strip()
    tree = _git("rev-parse", f"{head}^{{tree}}", cwd=origin).strip()
    genesis = json.loads(_git("cat-file", "-p", f"{tree}:records/00000001.json", cwd=origin))
    genesis["goal"]["nonce"] = name
    forged = record_file.canonical(record_file.seal(genesis)).decode()
    blob = _git("hash-object", "-w", "--stdin", cwd=origin, stdin=forged).strip()
    inner = _git("mktree", cwd=origin, stdin=f"100644 blob {blob}\t00000001.json\n").strip()
    tree = _git("mktree", cwd=origin, stdin=f"040000 tree {inner}\trecords\n").strip()
    said = json.loads(_git("log", "-1", "--format=%B", head, cwd=origin))
    commit = _git("commit-tree", tree, "-m", json.dumps({**said, "nonce": name}),
                  cwd=origin).strip()
    _git("update-ref", "-d", ref, cwd=origin)
    _git("update-ref", f"refs/forge/goals/{name}", commit, cwd=origin)
    b = clone(origin, "fresh")
    started = activation.activate(b, OBJECTIVE, "sess-b")
    assert started.outcome == activation.NEW
    assert activation.activate(b, OBJECTIVE, "sess-b2").outcome == activation.BOUND


def test_a_remote_that_never_answers_holds_a_persons_goal_only_as_long_as_a_hook_has(
        origin, quiet_publisher, monkeypatch):
    """The Stop that confirms a /goal reads the remote first; one that answers each git
    just in time must not outlast the host's 30 s for a Stop (killed, every time, no turn
    would be charged): the whole reading has ARRIVE_SECONDS, then the goal goes on here."""
    import socket
    import threading

    listener = socket.create_server(("127.0.0.1", 0))  # loopback: accepts, says nothing
    held = []
    threading.Thread(target=lambda: held.append(listener.accept()), daemon=True).start()
    project = clone(origin, "fresh")
    _git("remote", "set-url", "origin", f"git://127.0.0.1:{listener.getsockname()[1]}/r",
         cwd=project.root)
    monkeypatch.setattr(remote, "ARRIVE_SECONDS", 1)
    try:
        started = activation.activate(project, OBJECTIVE, "sess-b")
    finally:
        listener.close()
    assert started.outcome == activation.NEW
    assert "timed out after 0." in started.notice  # not GIT_SECONDS: the deadline's rest


def test_tranches_taken_in_grant_nothing_after_the_remote_is_taken_out_of_the_rules(
        origin, quiet_publisher):
    a = clone(origin, "unguarded")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    _charge(a, nonce, [f"a-{n}" for n in range(20)])
    _forge_tranches(a, nonce, 30)
    remote.sync(a, nonce, "origin")
    b = clone(origin, "fresh")
    activation.activate(b, OBJECTIVE, "sess-b")  # taken in, with its 600 turns to go
    (b.root / ".forge" / "guard.yaml").write_text("goal: {require_sandbox: false}\n")
    session = Session(b)
    session.person_goal(OBJECTIVE)
    replies = [session.turn() for _ in range(20)]
    assert [index for index, reply in enumerate(replies, 1)
            if reply and reply.get("continue") is False] == [20]


def test_a_chain_longer_than_a_hook_takes_in_fails_closed(origin, quiet_publisher,
                                                          monkeypatch):
    """Padded past what the confirming Stop can take in within its time, a chain would get
    that Stop killed every time, and no turn charged."""
    a = clone(origin, "machine-a")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    _charge(a, nonce, ["a-1", "a-2", "a-3"])
    remote.sync(a, nonce, "origin")
    monkeypatch.setattr(remote, "MAX_RECORDS", 3)
    with pytest.raises(ForgeError, match="holds 4 records, more than the 3") as refused:
        activation.activate(clone(origin, "fresh"), OBJECTIVE, "sess-b")
    assert refused.value.code == TAMPERED
