"""Storage: write-once hash-chained records; every kind of tampering fails closed."""

from __future__ import annotations

import json
import os

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_runtime.errors import ForgeError
from forge_runtime.goal.store import record_file
from forge_runtime.goal.store.ledger import (
    ACTIVE,
    TAMPERED,
    Ledger,
    check_transition,
    new_nonce,
)


def _goal(nonce: str, turns: int = 0) -> dict:
    return {"nonce": nonce, "objective": "ship it", "objective_hash": "a" * 64,
            "activation_id": "act-1", "activation_count": 1, "turn_count": turns,
            "turn_ceiling": 20, "status": ACTIVE, "repository": "r" * 32}


def _ledger(tmp_path, charges: int = 5) -> Ledger:
    nonce = new_nonce()
    ledger = Ledger(tmp_path, nonce)
    head = ledger.create(_goal(nonce))
    with ledger.lock():
        for turn in range(1, charges + 1):
            head = ledger.append(head, "charge", _goal(nonce, turn), turn=f"turn-{turn}")
    return ledger


def _path(ledger: Ledger, seq: int):
    return ledger.records_dir / record_file.record_name(seq)


def _refused(call) -> str:
    with pytest.raises(ForgeError) as caught:
        call()
    assert caught.value.code == TAMPERED and caught.value.exit_code == 2
    assert caught.value.fix.startswith("forge ")
    return caught.value.message


def test_a_clean_ledger_verifies_and_its_head_is_the_last_record(tmp_path):
    ledger = _ledger(tmp_path)
    assert ledger.verify()["turn_count"] == 5
    assert ledger.head().seq == 6
    assert [r["kind"] for r in ledger.history()] == ["activate"] + ["charge"] * 5


def test_records_are_write_once(tmp_path):
    ledger = _ledger(tmp_path, 1)
    record = record_file.read_record(ledger.records_dir, 2)
    assert record_file.write_record(ledger.records_dir, record) is False


def test_an_edited_record_is_detected(tmp_path):
    ledger = _ledger(tmp_path)
    record = json.loads(_path(ledger, 3).read_text())
    record["goal"]["turn_count"] = 0
    _path(ledger, 3).write_text(json.dumps(record))
    assert "own hash" in _refused(ledger.verify)


def test_an_edited_record_resealed_is_detected_by_the_chain(tmp_path):
    ledger = _ledger(tmp_path)
    record = json.loads(_path(ledger, 6).read_text())
    record["goal"]["turn_count"] = 1
    _path(ledger, 6).write_text(json.dumps(record_file.seal(record)))
    _refused(ledger.head)  # the head pointer names the old hash


def test_a_deleted_middle_record_is_detected(tmp_path):
    ledger = _ledger(tmp_path)
    _path(ledger, 3).unlink()
    assert "missing" in _refused(ledger.verify)


def test_a_deleted_last_record_is_detected_on_every_charge(tmp_path):
    ledger = _ledger(tmp_path)
    _path(ledger, 6).unlink()
    _refused(ledger.head)


def test_reordered_records_are_detected(tmp_path):
    ledger = _ledger(tmp_path)
    a, b = _path(ledger, 3).read_bytes(), _path(ledger, 4).read_bytes()
    _path(ledger, 3).write_bytes(b)
    _path(ledger, 4).write_bytes(a)
    _refused(ledger.verify)


def test_a_record_replaced_by_a_symlink_is_detected(tmp_path):
    ledger = _ledger(tmp_path)
    copy = tmp_path / "copy.json"
    copy.write_bytes(_path(ledger, 6).read_bytes())
    _path(ledger, 6).unlink()
    os.symlink(copy, _path(ledger, 6))
    assert "00000006.json cannot be opened" in _refused(ledger.head)
    _refused(ledger.verify)


def test_a_records_directory_replaced_by_a_symlink_is_detected(tmp_path):
    import shutil

    ledger = _ledger(tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(ledger.records_dir, copy)
    shutil.rmtree(ledger.records_dir)
    os.symlink(copy, ledger.records_dir)
    assert "symlink" in _refused(ledger.head)


def test_a_record_appended_out_of_sequence_is_detected(tmp_path):
    ledger = _ledger(tmp_path)
    forged = record_file.seal({"seq": 8, "prev": "0" * 64, "kind": "charge",
                           "goal": _goal(ledger.nonce, 7)})
    record_file.write_record(ledger.records_dir, forged)
    _refused(ledger.verify)


def test_a_rewound_head_pointer_is_detected(tmp_path):
    ledger = _ledger(tmp_path)
    third = record_file.read_record(ledger.records_dir, 3)
    ledger.head_path.write_text(json.dumps({"seq": 3, "hash": third["hash"]}))
    assert "out of sequence" in _refused(ledger.head)


def test_a_crash_between_record_and_pointer_is_adopted(tmp_path):
    ledger = _ledger(tmp_path)
    fifth = record_file.read_record(ledger.records_dir, 5)
    ledger.head_path.write_text(json.dumps({"seq": 5, "hash": fifth["hash"]}))
    head = ledger.head()
    assert head.seq == 6 and head.stale_pointer
    with ledger.lock():
        assert ledger.settle().stale_pointer is False
    assert json.loads(ledger.head_path.read_text())["seq"] == 6


def test_a_forged_record_that_does_not_follow_the_head_is_not_adopted(tmp_path):
    ledger = _ledger(tmp_path)
    forged = record_file.seal({"seq": 7, "prev": "f" * 64, "kind": "charge",
                           "goal": _goal(ledger.nonce, 6), "turn": "x"})
    record_file.write_record(ledger.records_dir, forged)
    _refused(ledger.head)


def test_the_rolling_audit_checks_a_link_deep_in_the_chain_on_a_plain_head_read(tmp_path):
    ledger = _ledger(tmp_path, 15)
    last = record_file.read_record(ledger.records_dir, 16)
    audited = 2 + int(last["hash"][:12], 16) % (16 - 2)  # the link this head audits
    record = record_file.read_record(ledger.records_dir, audited)
    _path(ledger, audited).write_text(json.dumps(record_file.seal({**record, "prev": "e" * 64})))
    assert "does not follow" in _refused(ledger.head)  # without a full read of the chain


transitions = st.sampled_from(["charge", "activate", "reopen", "bind", "exhaust",
                               "complete", "cancel", "checkpoint"])


@given(kind=transitions, turns=st.integers(-2, 25), activations=st.integers(0, 3),
       status=st.sampled_from(["active", "exhausted", "complete", "cancelled", "lost"]))
def test_no_transition_can_raise_a_ceiling_or_lower_a_count(kind, turns, activations, status):
    before = {"seq": 5, "hash": "h", "goal": {**_goal("n", 7)}}
    goal = {**_goal("n", turns), "activation_count": activations,
            "turn_ceiling": 20 * activations, "status": status}
    if kind == "activate":
        goal["activation_id"] = "act-2"
    record = {"seq": 6, "kind": kind, "goal": goal, "turn": "t"}
    try:
        check_transition(before, record, "n")
    except ForgeError:
        return
    assert goal["turn_count"] in (7, 8)
    assert goal["turn_ceiling"] == 20  # a tranche needs an exhausted goal; this one is at 7
    if goal["turn_count"] == 8:
        assert kind == "charge"


@pytest.mark.parametrize("published", [True, False], ids=["pointer moved", "pointer left"])
def test_a_sealed_record_that_breaks_the_rules_is_refused_on_every_charge(tmp_path, published):
    """A record with a correct hash and link (anyone can compute a sha256) that raises the
    ceiling or lowers the count must not become the head a Stop charges against."""
    ledger = _ledger(tmp_path)
    last = record_file.read_record(ledger.records_dir, 6)
    forged = record_file.seal({"seq": 7, "prev": last["hash"], "kind": "bind", "at": "now",
                           "goal": {**_goal(ledger.nonce, 0), "turn_ceiling": 200,
                                    "activation_count": 10}})
    record_file.write_record(ledger.records_dir, forged)
    if published:
        ledger.head_path.write_text(json.dumps({"seq": 7, "hash": forged["hash"]}))
    assert "is not a valid step" in _refused(ledger.head)


def test_records_cut_from_the_end_with_the_pointer_rewound_are_detected_by_verify(tmp_path):
    """Every charged turn leaves a marker: a chain that lost its last charges (and had its
    head pointer moved back to match) still has their markers."""
    ledger = _ledger(tmp_path)
    for seq in (5, 6):
        _path(ledger, seq).unlink()
    fourth = record_file.read_record(ledger.records_dir, 4)
    ledger.head_path.write_text(json.dumps({"seq": 4, "hash": fourth["hash"]}))
    assert "turn markers" in _refused(ledger.verify)


def test_a_reader_lock_neither_creates_nor_needs_write_access_to_the_lock_file(tmp_path):
    from forge_runtime.goal.store.layout import LOCK_NAME
    from forge_runtime.goal.store.lock import locked

    with locked(tmp_path, shared=True):
        assert not (tmp_path / LOCK_NAME).exists()
    with locked(tmp_path):
        pass
    (tmp_path / LOCK_NAME).chmod(0o400)
    with locked(tmp_path, shared=True), locked(tmp_path, shared=True):
        pass  # two readers at once
