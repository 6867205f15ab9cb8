"""A goal's ledger on the repository's own remote: a real bare repository and several clones.

Each clone is a real `git clone` of one bare repository with `goal: {remote: origin}` in its
`.forge/guard.yaml`; a clone's witness is its own (its git directory is its key). Charges go
through `charging.charge` as a Stop's do, publishing through `remote.sync` as the
background publisher runs it.
"""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import threading
from pathlib import Path

import pytest

from forge_runtime.errors import ForgeError
from forge_runtime.goal.rules import activation
from forge_runtime.goal.rules.charging import charge
from forge_runtime.goal.store import layout, state_file
from forge_runtime.goal.store.ledger import TAMPERED, Ledger
from forge_runtime.goal.sync import publisher, remote
from forge_runtime.project import find_project
from tests.artifact_support import bare_repository
from tests.artifact_support import git as _git

OBJECTIVE = "ship the parser"
RULES = "goal: {require_sandbox: false, remote: origin}\n"


@pytest.fixture
def origin(tmp_path):
    return bare_repository(tmp_path / "shared.git")


def clone(origin: Path, name: str):
    """A fresh clone of `origin` set up as a forge project publishing on it."""
    root = origin.parent / name
    _git("clone", "-q", str(origin), str(root), cwd=origin.parent)
    (root / ".forge" / "local").mkdir(parents=True)
    (root / ".forge" / "guard.yaml").write_text(RULES)
    return find_project(root)


def _shared_goal(origin: Path):
    """Clone A starts the goal and publishes it; fresh clone B's /goal takes it in."""
    a = clone(origin, "machine-a")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    remote.sync(a, nonce, "origin")
    b = clone(origin, "machine-b")
    activation.activate(b, OBJECTIVE, "sess-b")
    return a, b, nonce


def _charge(project, nonce: str, turns: list[str], tokens: int = 0) -> list:
    """Charge each of `turns`, each spending `tokens` (priced at 1,000 picodollars each)."""
    ledger = Ledger(project.ledger_root, nonce, witness=_witness(project))
    return [charge(ledger, project.state_path, [turn], "sess", turn,
                   usage=_spent(turn, tokens)) for turn in turns]


def _spent(turn: str, tokens: int) -> dict | None:
    from forge_runtime.goal.budget.usage import usage_record

    return {turn: usage_record({"m": {"input": tokens, "picousd": tokens * 1000}})} \
        if tokens else None


def _witness(project):
    from forge_runtime.goal.sync.witness import Witness

    return Witness(project)


def _remote_refs(origin: Path) -> dict[str, str]:
    listed = _git("for-each-ref", "--format=%(refname) %(objectname)", "refs/forge",
                  cwd=origin)
    return dict(line.split() for line in listed.splitlines())


def _goal(project, nonce):
    return Ledger(project.ledger_root, nonce, witness=_witness(project)).verified()


def test_a_fresh_clone_continues_the_count_and_stops_at_the_same_ceiling(origin):
    a = clone(origin, "machine-a")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    _charge(a, nonce, [f"a-{n}" for n in range(12)])
    remote.sync(a, nonce, "origin")
    assert f"refs/forge/goals/{nonce}" in _remote_refs(origin)

    b = clone(origin, "machine-b")
    started = activation.activate(b, OBJECTIVE, "sess-b")
    assert (started.outcome, started.goal["nonce"]) == (activation.BOUND, nonce)
    assert (started.goal["turn_count"], started.goal["turn_ceiling"]) == (12, 20)
    assert state_file.read(b.state_path).goal["turn_count"] == 12
    outcomes = _charge(b, nonce, [f"b-{n}" for n in range(10)])
    assert [o.outcome for o in outcomes].count("charged") == 8  # 12 + 8 = the ceiling
    assert _goal(b, nonce)["status"] == "exhausted"

    # the person's next tranche in B publishes; A learns it at its next sync
    remote.sync(b, nonce, "origin")
    again = activation.activate(b, OBJECTIVE, "sess-b2")
    assert (again.outcome, again.goal["turn_ceiling"]) == (activation.TRANCHE_ADDED, 40)
    remote.sync(b, nonce, "origin")
    goal = remote.sync(a, nonce, "origin").goal
    assert (goal["turn_count"], goal["turn_ceiling"], goal["status"]) == (20, 40, "active")
    assert state_file.read(a.state_path).goal["turn_count"] == 20  # state.md follows the join


def _charge_and_publish(project, nonce, turns, charged, failures, barrier):
    barrier.wait()
    for index, turn in enumerate(turns, 1):
        outcome = _charge(project, nonce, [turn])[0]
        if outcome.outcome == "charged":
            charged.append(turn)
        if index % remote.PUBLISH_EVERY == 0:
            try:
                remote.sync(project, nonce, "origin")
            except ForgeError as exc:  # lost every race this time: owed, as the publisher
                failures.append(exc.code)  # leaves it for the next event


def test_two_clones_charging_at_once_count_every_turn_once_and_hold_the_ceiling(origin):
    a, b, nonce = _shared_goal(origin)
    charged, failures = {"a": [], "b": []}, []
    barrier = threading.Barrier(2)
    threads = [threading.Thread(target=_charge_and_publish, args=(
        project, nonce, [f"{name}-{n}" for n in range(20)], charged[name], failures,
        barrier))
        for name, project in (("a", a), ("b", b))]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert set(failures) <= {remote.UNREACHABLE}
    for project in (a, b, a):
        remote.sync(project, nonce, "origin")
    heads = [Ledger(p.ledger_root, nonce).current().record["hash"] for p in (a, b)]
    assert heads[0] == heads[1]  # both clones converge on one chain
    every = charged["a"] + charged["b"]
    goal = _goal(a, nonce)
    assert _goal(b, nonce) == goal
    assert goal["turn_count"] == len(every) == len(set(every))  # each turn once, none lost
    assert 20 <= goal["turn_count"] <= 20 + 2 * remote.PUBLISH_EVERY  # in flight, no more
    assert goal["status"] == "exhausted"
    history = Ledger(a.ledger_root, nonce).history()
    assert any(record["kind"] == "merge" for record in history)


def _rewrite(origin: Path, nonce: str, keep: int) -> None:
    """Point the remote's ref at a snapshot of its own first `keep` records, by hand."""
    work = origin.parent / "by-hand"
    if not work.exists():
        _git("clone", "-q", str(origin), str(work), cwd=origin.parent)
    ref = f"refs/forge/goals/{nonce}"
    _git("fetch", "-q", "origin", f"+{ref}:{ref}", cwd=work)
    names = _git("ls-tree", "--name-only", f"{ref}:records", cwd=work).split()
    entries = [line for line in _git("ls-tree", f"{ref}:records", cwd=work).splitlines()
               if line.split("\t")[1] in names[:keep]]
    inner = subprocess.run(["git", "mktree"], cwd=work, input="\n".join(entries) + "\n",
                           capture_output=True, text=True, check=True).stdout.strip()
    tree = subprocess.run(["git", "mktree"], cwd=work, input=f"040000 tree {inner}\trecords\n",
                          capture_output=True, text=True, check=True).stdout.strip()
    commit = _git("-c", "user.name=x", "-c", "user.email=x@x", "commit-tree", tree, "-m",
                  "{}", cwd=work).strip()
    _git("push", "-q", "--force", "origin", f"{commit}:{ref}", cwd=work)


def test_a_remote_rewritten_by_hand_fails_closed_in_both_clones(origin):
    a = clone(origin, "machine-a")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    _charge(a, nonce, [f"a-{n}" for n in range(6)])
    remote.sync(a, nonce, "origin")
    b = clone(origin, "machine-b")
    activation.activate(b, OBJECTIVE, "sess-b")
    _rewrite(origin, nonce, keep=4)  # fewer turns than both clones saw there
    for project in (a, b):
        with pytest.raises(ForgeError) as refused:
            remote.sync(project, nonce, "origin")
        assert refused.value.code == TAMPERED
        assert "rewritten" in refused.value.message
        assert refused.value.fix == f"forge goal publish --nonce {nonce} --restore"
    assert _goal(a, nonce)["turn_count"] == 6  # the local ledger stands as it was
    remote.restore(a, nonce, "origin")  # the fix: this clone's chain back on the remote
    with pytest.raises(ForgeError) as refused:  # and only while the remote is not forge's
        remote.restore(a, nonce, "origin")
    assert refused.value.fix == f"forge goal publish --nonce {nonce}"
    assert remote.sync(b, nonce, "origin").goal["turn_count"] == 6


def test_an_edited_record_on_the_remote_fails_closed_and_the_next_hook_stops(origin):
    a = clone(origin, "machine-a")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    _charge(a, nonce, ["a-1"])
    remote.sync(a, nonce, "origin")
    work = origin.parent / "by-hand"
    _git("clone", "-q", str(origin), str(work), cwd=origin.parent)
    ref = f"refs/forge/goals/{nonce}"
    _git("fetch", "-q", "origin", f"+{ref}:{ref}", cwd=work)
    _git("checkout", "-q", ref, cwd=work)
    record = work / "records" / "00000002.json"
    record.write_text(record.read_text().replace('"turn_count":1', '"turn_count":0'))
    _git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qam", "edit", cwd=work)
    _git("push", "-q", "--force", "origin", f"HEAD:{ref}", cwd=work)
    publisher.publish(str(a.root), nonce)  # what the background publisher finds
    assert signal.alarm(0) == 0  # the child's alarm is the child's: none left in this process
    binding = {"nonce": nonce, "remote": "origin"}
    with pytest.raises(ForgeError) as refused:
        publisher.after_event(a, binding, _goal(a, nonce))
    assert refused.value.code == TAMPERED and "edited" in refused.value.message


def test_the_network_down_during_charges_loses_nothing(origin):
    a = clone(origin, "machine-a")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    remote.sync(a, nonce, "origin")
    hidden = origin.with_name("away.git")
    origin.rename(hidden)  # the remote stops answering
    _charge(a, nonce, [f"a-{n}" for n in range(7)])
    with pytest.raises(ForgeError) as refused:
        remote.sync(a, nonce, "origin")
    assert refused.value.code == remote.UNREACHABLE
    binding = {"nonce": nonce, "remote": "origin"}
    ledger = Ledger(a.ledger_root, nonce)
    assert publisher.owed(ledger, binding, _goal(a, nonce), False)[0]
    said = [publisher.after_event(a, binding, _goal(a, nonce)) for _ in range(2)]
    assert said[0] is not None and remote.UNREACHABLE in said[0] and said[1] is None
    hidden.rename(origin)  # back: the next publish takes every record
    remote.sync(a, nonce, "origin")
    assert not publisher.owed(ledger, binding, _goal(a, nonce), False)[0]
    b = clone(origin, "machine-b")
    assert activation.activate(b, OBJECTIVE, "sess-b").goal["turn_count"] == 7


def test_a_fresh_clone_with_no_network_says_so_and_goes_on_locally(origin):
    a = clone(origin, "machine-a")
    origin.rename(origin.with_name("away.git"))
    started = activation.activate(a, OBJECTIVE, "sess-a")
    assert started.outcome == activation.NEW and started.notice  # what git said
    ledger = Ledger(a.ledger_root, started.goal["nonce"])
    remote.write_state(ledger, failed=started.notice)  # as the confirming Stop keeps it
    binding = {"nonce": started.goal["nonce"], "remote": "origin"}
    said = [publisher.after_event(a, binding, started.goal) for _ in range(2)]
    assert said[1] is None and said[0].count("Error:") == 1 and said[0].count("Fix:") == 1
    assert said[0].startswith(f"Error: {remote.UNREACHABLE}: the goal ledger on remote")


def test_a_project_without_remote_never_publishes(tmp_path, origin):
    a = clone(origin, "machine-a")
    (a.root / ".forge" / "guard.yaml").write_text("goal: {require_sandbox: false}\n")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    assert remote.configured(a) is None
    assert publisher.after_event(a, {"nonce": nonce}, _goal(a, nonce), now=True) is None
    assert not os.path.exists(os.path.join(Ledger(a.ledger_root, nonce).dir, layout.REMOTE_STATE))
    assert _remote_refs(origin) == {}


def test_tokens_dollars_and_over_budget_turns_of_both_clones_join_on_the_remote(origin):
    from forge_runtime.goal.rules.charging import overrun

    a, b, nonce = _shared_goal(origin)
    _charge(a, nonce, ["a-1"], tokens=7)
    _charge(b, nonce, [f"b-{n}" for n in range(20)], tokens=10)  # B's tranche ends
    ledger = Ledger(b.ledger_root, nonce, witness=_witness(b))
    overrun(ledger, b.state_path, ["wake-up"], "sess", _spent("wake-up", 5))
    remote.sync(a, nonce, "origin")
    head = remote.sync(b, nonce, "origin")  # B joins its side onto A's chain
    assert head.record["kind"] == "merge" and head.record["overruns"] == ["wake-up"]
    remote.sync(a, nonce, "origin")
    for project in (a, b):
        goal = _goal(project, nonce)  # verified whole, turn markers and all
        assert (goal["turn_count"], goal["overrun_count"], goal["status"]) == \
            (21, 1, "exhausted")
        assert (goal["token_count"], goal["picousd"]) == (207 + 5, 212_000)


def test_turns_one_clone_owed_past_the_ceiling_are_charged_by_a_goal_in_the_other(origin):
    a, b, nonce = _shared_goal(origin)
    _charge(b, nonce, [f"b-{n}" for n in range(19)])
    ledger = Ledger(b.ledger_root, nonce, witness=_witness(b))
    ended = charge(ledger, b.state_path, ["b-19", "past-the-ceiling"], "sess", "b-19",
                   usage=_spent("past-the-ceiling", 9))
    assert (ended.goal["status"], ended.owed) == ("exhausted", 1)
    _charge(a, nonce, ["a-1"])
    remote.sync(a, nonce, "origin")
    remote.sync(b, nonce, "origin")  # B's end, owing one turn, joins A's chain
    remote.sync(a, nonce, "origin")
    again = activation.activate(a, OBJECTIVE, "sess-a2")  # a person's /goal, in A
    assert again.outcome == activation.TRANCHE_ADDED
    goal = _goal(a, nonce)
    assert (goal["turn_count"], goal["token_count"], goal["turn_ceiling"]) == (22, 9, 40)


def test_a_merge_record_that_lies_about_the_join_fails_verification(origin):
    a, b, nonce = _shared_goal(origin)
    _charge(a, nonce, ["a-1", "a-2"])
    _charge(b, nonce, ["b-1", "shared"])
    _charge(a, nonce, ["shared"])  # one turn both clones charged: counted once
    remote.sync(a, nonce, "origin")
    head = remote.sync(b, nonce, "origin")
    assert head.record["kind"] == "merge" and head.goal["turn_count"] == 4
    assert sorted(head.record["turns"]) == ["b-1"]
    ledger = Ledger(b.ledger_root, nonce)
    ledger.current()  # the records directory head.json names (a join makes a new one)
    path = Path(ledger.records_dir) / f"{head.seq:08d}.json"
    forged = json.loads(path.read_text())
    forged["side"][0]["turn"] = "b-forged"  # a side record changed: its own hash breaks
    from forge_runtime.goal.store.record_file import canonical, seal

    path.chmod(0o644)
    path.write_bytes(canonical(seal(forged)))
    pointer = json.loads((Path(ledger.dir) / "head.json").read_text())
    pointer["hash"] = seal(forged)["hash"]
    (Path(ledger.dir) / "head.json").write_text(json.dumps(pointer))
    with pytest.raises(ForgeError) as refused:
        Ledger(b.ledger_root, nonce).verified()
    assert refused.value.code == TAMPERED


def _cli(capsys, monkeypatch, project, *argv):
    from forge_runtime.cli.main import main

    monkeypatch.chdir(project.root)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project.root))
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_goal_status_says_where_the_count_comes_from(origin, capsys, monkeypatch):
    a = clone(origin, "machine-a")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    _charge(a, nonce, ["a-1", "a-2"])
    code, shown = _cli(capsys, monkeypatch, a, "goal", "status")
    assert code == 0 and shown["remote"]["source"] == remote.THIS_CLONE
    assert shown["remote"]["published_turns"] is None  # nothing pushed yet
    code, shown = _cli(capsys, monkeypatch, a, "goal", "publish")
    assert code == 0 and shown["goal"]["turn_count"] == 2
    b = clone(origin, "machine-b")
    activation.activate(b, OBJECTIVE, "sess-b")
    _charge(b, nonce, ["b-1"])
    _charge(a, nonce, ["a-3"])
    remote.sync(a, nonce, "origin")
    code, shown = _cli(capsys, monkeypatch, b, "goal", "status")
    assert shown["remote"]["source"] == remote.MERGED  # status joined A's turn in
    assert shown["goal"]["turn_count"] == 4 and shown["remote"]["owed"] is True


def test_history_report_and_verify_read_a_merged_ledger(origin, capsys, monkeypatch):
    a, b, nonce = _shared_goal(origin)
    _charge(a, nonce, ["a-1"])
    _charge(b, nonce, ["b-1"])
    remote.sync(a, nonce, "origin")
    assert remote.sync(b, nonce, "origin").record["kind"] == "merge"
    for action in ("history", "report", "verify"):
        code, shown = _cli(capsys, monkeypatch, b, "goal", action)
        assert code == 0, (action, shown)


def test_the_documented_server_hook_takes_forges_pushes_and_stops_a_rewrite(origin):
    hook = origin / "hooks" / "pre-receive"  # docs/remote-ledger.md's recipe, as documented
    shutil.copy2(Path(__file__).parents[1] / "docs" / "pre-receive-forge-refs.sh", hook)
    a = clone(origin, "machine-a")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    _charge(a, nonce, ["a-1", "a-2"])
    remote.sync(a, nonce, "origin")
    b = clone(origin, "machine-b")
    activation.activate(b, OBJECTIVE, "sess-b")
    _charge(a, nonce, ["a-3"])
    _charge(b, nonce, ["b-1"])
    remote.sync(a, nonce, "origin")
    assert remote.sync(b, nonce, "origin").goal["turn_count"] == 4  # a join, fast-forward
    assert remote.sync(a, nonce, "origin").goal["turn_count"] == 4
    with pytest.raises(subprocess.CalledProcessError):
        _rewrite(origin, nonce, keep=2)
    with pytest.raises(subprocess.CalledProcessError):
        _git("push", "-q", "origin", f":refs/forge/goals/{nonce}", cwd=a.root)
    assert remote.sync(b, nonce, "origin").goal["turn_count"] == 4


def test_a_fresh_clone_killed_after_taking_the_goal_in_continues_at_its_next_goal(origin):
    a = clone(origin, "machine-a")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    _charge(a, nonce, ["a-1", "a-2", "a-3"])
    remote.sync(a, nonce, "origin")
    b = clone(origin, "machine-b")
    activation.activate(b, OBJECTIVE, "sess-b")
    os.unlink(os.path.join(b.ledger_root, "objectives", _goal(b, nonce)["objective_hash"]))
    again = activation.activate(b, OBJECTIVE, "sess-b2")  # the hook died before the index
    assert (again.goal["nonce"], again.goal["turn_count"]) == (nonce, 3)


def test_goal_status_with_the_remote_down_shows_this_clones_count(origin, capsys, monkeypatch):
    a = clone(origin, "machine-a")
    nonce = activation.activate(a, OBJECTIVE, "sess-a").goal["nonce"]
    _charge(a, nonce, ["a-1"])
    origin.rename(origin.with_name("away.git"))
    code, shown = _cli(capsys, monkeypatch, a, "goal", "status")
    assert code == 0 and shown["goal"]["turn_count"] == 1
    assert "cannot be read or written" in shown["remote"]["unreachable"]


def test_another_work_tree_of_the_clone_goes_on_after_a_join(origin):
    a, b, nonce = _shared_goal(origin)
    _git("-c", "user.name=t", "-c", "user.email=t@t", "commit", "-q", "--allow-empty", "-m",
         "start", cwd=b.root)
    _git("worktree", "add", "-q", str(origin.parent / "b-second"), cwd=b.root)
    second = find_project(origin.parent / "b-second")
    (Path(second.root) / ".forge" / "local").mkdir(parents=True)
    (Path(second.root) / ".forge" / "guard.yaml").write_text(RULES)
    activation.activate(second, OBJECTIVE, "sess-b-second")
    _charge(second, nonce, ["w-1", "w-2", "w-3"])  # its state.md: 3, a count only B had
    _charge(a, nonce, ["a-1", "a-2"])
    remote.sync(a, nonce, "origin")
    assert remote.sync(b, nonce, "origin").goal["turn_count"] == 5  # joined in B's work tree
    outcome = _charge(second, nonce, ["w-4"])[0]  # state.md two behind, across the join
    assert (outcome.outcome, outcome.goal["turn_count"]) == ("charged", 6)


def test_a_fresh_clone_prices_its_turns_with_the_table_the_goal_sealed(origin, monkeypatch):
    """The remote carries the sealed price table beside the records: a clone continuing a
    goal (its own /goal only binds, sealing nothing) prices its turns with the same table,
    even when its own compiled table is another one (another machine, another day)."""
    from forge_runtime.goal.budget import price_table, pricing

    a = clone(origin, "machine-a")
    goal = activation.activate(a, OBJECTIVE, "sess-a").goal
    digest = goal["prices"]["digest"]
    remote.sync(a, goal["nonce"], "origin")
    other = origin.parent / "other-prices.json"
    table = json.loads(Path(layout.sealed_prices_file(a.ledger_root, digest)).read_text())
    other.write_text(json.dumps({**table, "compiled": "another day"}))
    monkeypatch.setattr(price_table, "compiled_path", lambda: other)
    monkeypatch.setattr(price_table, "compile_table",
                        lambda: {**table, "compiled": "another day"})
    b = clone(origin, "machine-b")
    started = activation.activate(b, OBJECTIVE, "sess-b")
    assert started.outcome == activation.BOUND and started.goal["prices"]["digest"] == digest
    pricing._loaded.clear()  # this process read A's copy: read B's own from disk
    assert pricing.sealed(b.ledger_root, started.goal["prices"]).digest == digest
    outcome = _charge(b, goal["nonce"], ["b-1"], tokens=100)[0]
    assert outcome.outcome == "charged"
    remote.sync(b, goal["nonce"], "origin")
    assert _goal(b, goal["nonce"])["prices"]["digest"] == digest


def test_a_remote_price_table_that_is_not_a_table_fails_closed(origin):
    a = clone(origin, "machine-a")
    goal = activation.activate(a, OBJECTIVE, "sess-a").goal
    sealed = pricing_path(a, goal)
    sealed.write_bytes(b"not json")  # what a.s snapshot will carry
    remote.sync(a, goal["nonce"], "origin")
    b = clone(origin, "machine-b")
    with pytest.raises(ForgeError) as raised:
        activation.activate(b, OBJECTIVE, "sess-b")
    assert raised.value.code == TAMPERED and "price tables" in str(raised.value)


def pricing_path(project, goal):

    return Path(layout.sealed_prices_file(project.ledger_root, goal["prices"]["digest"]))
