"""Gates that cannot be bought: each way an agent could fake "every final gate fresh and
passing" is tried for real, past the guard (by a program the agent runs), and none verifies
the goal. Only forge's own run of the gates the `/goal` recorded does."""

from __future__ import annotations

import hashlib
import hmac
import json
import subprocess
import sys

import pytest
from goal_support import Session, gates_project, running_goal, stop_turn, two_gates
from test_gates import age, forge, write

from forge_runtime.gates import receipts
from forge_runtime.gates import status as gate_status
from forge_runtime.hooks import session_end

OBJECTIVE = "the parser passes its tests"
GATES = two_gates("grep -q good src/parser.py")


@pytest.fixture
def project(tmp_path, monkeypatch):
    return gates_project(tmp_path, monkeypatch, GATES, "parse = None  # broken\n")


def met(session: Session) -> dict | None:
    reply = stop_turn(session)
    session.verdict(met=True, condition=OBJECTIVE)
    session_end.handle(session.event("SessionEnd", reason="other"))
    return reply


def assert_not_verified(project) -> None:
    code, text = forge("goal", "status")
    assert code == 0 and "status      complete" in text
    assert "gates       met but unverified: forge ran the recorded final gates itself: " \
           "unit-tests failed (exit 1)" in text, text
    code, text = forge("goal", "verify-gates")
    assert code == 2 and "FORGE_GOAL_UNVERIFIED" in text and "unit-tests failed" in text


def passing_receipt(project, name: str) -> dict:
    """A receipt that says gate `name` passed on the tree as it is now."""
    gate = next(g for g in gate_status.config.load(project) if g.name == name)
    digest, files = gate_status.Tree(project, [gate]).boundary_of(gate)
    return {"gate": name, "command": gate.command, "definition": gate.definition_digest,
            "exit_code": 0, "timed_out": False, "duration_s": 0.1,
            "started_at": "2026-12-01T00:00:00Z", "finished_at": "2026-12-01T00:00:01Z",
            "output_sha256": "0" * 64, "log": f".forge/local/gates/{name}.log",
            "boundary_hash": digest, "files": files}


def test_a_receipt_written_by_hand_does_not_verify_a_goal(project):
    assert forge("gate", "run", "docs")[0] == 0
    session = running_goal(project, OBJECTIVE)
    write(project.root, ".forge/local/gates/receipts/unit-tests.json",
          json.dumps({**passing_receipt(project, "unit-tests"), "seal": "f" * 64}))
    assert receipts.read(project, "unit-tests") is None  # no seal forge made
    met(session)
    assert_not_verified(project)


SEAL_WITH_STOLEN_KEY = """\
import hashlib, hmac, json, sys
key = open(sys.argv[1], "rb").read()
receipt = json.loads(sys.argv[2])
body = json.dumps(receipt, sort_keys=True)
receipt["seal"] = hmac.new(key, body.encode(), hashlib.sha256).hexdigest()
open(sys.argv[3], "w").write(json.dumps(receipt))
"""


def test_a_receipt_sealed_with_a_key_a_script_read_does_not_verify_a_goal(project):
    assert forge("gate", "run", "docs")[0] == 0  # makes the key
    session = running_goal(project, OBJECTIVE)
    target = receipts.receipt_path(project, "unit-tests")
    subprocess.run([sys.executable, "-c", SEAL_WITH_STOLEN_KEY,
                    str(project.ledger_root / "gates" / "receipt.key"),
                    json.dumps(passing_receipt(project, "unit-tests")), str(target)],
                   check=True, timeout=30)
    code, text = forge("gate", "status")
    assert "unit-tests" in text and "never-run" not in text  # the forged receipt reads fresh
    reply = stop_turn(session)  # every receipt says fresh: forge runs the gates itself
    told = reply["hookSpecificOutput"]["additionalContext"]
    assert "FORGE_GATES_NOT_CONFIRMED" in told and "unit-tests failed (exit 1)" in told
    assert "Next: forge gate run unit-tests\n  after fixing what .git/forge-goals/" \
           "gate-runs/" in told and "/unit-tests.log shows" in told
    met(session)
    assert_not_verified(project)


def test_a_gates_file_rewritten_to_true_does_not_verify_a_goal(project):
    session = running_goal(project, OBJECTIVE)
    write(project.root, ".forge/gates.yaml", GATES.replace("grep -q good src/parser.py",
                                                           '"true"'))
    code, out = forge("gate", "run")
    assert code == 0, out  # receipts of the rewritten gates: all "pass"
    reply = stop_turn(session)
    told = reply["hookSpecificOutput"]["additionalContext"]
    assert "FORGE_GATES_CHANGED" in told and "unit-tests" in told
    assert f"Fix: /goal {OBJECTIVE}" in told
    met(session)
    assert_not_verified(project)


@pytest.mark.parametrize("what", ["the gate", "the whole file"])
def test_a_gate_removed_during_the_goal_still_counts(project, what):
    session = running_goal(project, OBJECTIVE)
    if what == "the gate":
        write(project.root, ".forge/gates.yaml", GATES.split("  docs:")[0].replace(
            "unit-tests", "docs").replace("grep -q good src/parser.py", "echo docs")
            .replace("src/**", "docs/**"))
        assert forge("gate", "run")[0] == 0
    else:
        (project.root / ".forge" / "gates.yaml").unlink()
    met(session)
    assert_not_verified(project)


def test_a_planted_config_cache_is_not_what_the_goal_records(project):
    """The validated-config cache lives in the agent's local area: a `/goal` records the
    gates file itself, never the cache."""
    from forge_runtime.digest import sha256_hex

    raw = (project.root / ".forge" / "gates.yaml").read_bytes()
    planted = json.dumps({"sha256": sha256_hex(raw), "document": {"gates": {
        "unit-tests": {"command": "true", "boundary": ["src/**"]},
        "docs": {"command": "true", "boundary": ["docs/**"]}}}})
    write(project.root, ".forge/local/gates/config-cache.json", planted)
    # before the model's first turn: the file is recorded
    session = running_goal(project, OBJECTIVE)
    write(project.root, ".forge/local/gates/config-cache.json", planted)  # and after it
    assert forge("gate", "run")[0] == 0  # runs the cache's `true`
    met(session)
    assert_not_verified(project)


def test_a_planted_stat_cache_does_not_make_a_changed_tree_read_as_the_confirmed_one(project):
    """forge's own run is reused while the boundary hash is unchanged; the hashes come from a
    stat cache of forge's own, not the local area's."""
    write(project.root, "src/parser.py", "parse = 'good'\n")
    age(project.root)
    assert forge("gate", "run")[0] == 0
    session = running_goal(project, OBJECTIVE)
    stop_turn(session)  # receipts fresh: forge runs the gates itself, and they pass
    good = (project.root / "src" / "parser.py").stat()
    cache_path = project.root / ".forge" / "local" / "gates" / "stat-cache.json"
    cached = json.loads(cache_path.read_text())
    write(project.root, "src/parser.py", "parse = 'bad!'\n")  # same size, breaks the gate
    bad = (project.root / "src" / "parser.py").stat()
    digest = cached["src/parser.py"].rsplit(":", 1)[1]
    assert good.st_size == bad.st_size
    cached["src/parser.py"] = \
        f"{bad.st_size}:{bad.st_mtime_ns}:{bad.st_ino}:{bad.st_ctime_ns}:{digest}"
    cache_path.write_text(json.dumps(cached))
    met(session)
    assert_not_verified(project)


def test_the_honest_way_verifies_the_goal(project):
    session = running_goal(project, OBJECTIVE)
    assert "unit-tests never-run" in stop_turn(session)["systemMessage"]
    write(project.root, "src/parser.py", "parse = 'good'\n")
    assert forge("gate", "run")[0] == 0
    reply = stop_turn(session)
    assert "FORGE_GATES_FRESH" in reply["systemMessage"]
    met(session)
    code, text = forge("goal", "status")
    assert "gates       verified at" in text and "forge ran every recorded final gate" in text


def test_the_forged_seal_is_the_real_algorithm(project):
    """The stolen-key script above seals as forge does: without this the forgery test would
    pass for the wrong reason."""
    assert forge("gate", "run", "docs")[0] == 0
    receipt = json.loads(receipts.receipt_path(project, "docs").read_text())
    key = (project.ledger_root / "gates" / "receipt.key").read_bytes()
    body = json.dumps({k: v for k, v in receipt.items() if k != "seal"}, sort_keys=True)
    assert hmac.new(key, body.encode(), hashlib.sha256).hexdigest() == receipt["seal"]


def test_a_symlink_planted_for_forges_log_is_not_written_through(project, tmp_path):
    """forge's hook writes the output of its own run unsandboxed: never where the agent's
    tools write (a link there could aim it at the host's settings)."""
    target = tmp_path / "settings.json"
    target.write_text('{"keep": true}\n')
    planted = project.root / ".forge" / "local" / "gates" / "forge-run"
    planted.mkdir(parents=True)
    for name in ("unit-tests", "docs"):
        (planted / f"{name}.log").symlink_to(target)
    write(project.root, "src/parser.py", "parse = 'good'\n")
    session = running_goal(project, OBJECTIVE)
    assert forge("gate", "run")[0] == 0
    stop_turn(session)
    met(session)
    assert target.read_text() == '{"keep": true}\n'
    code, text = forge("goal", "status")
    assert "gates       verified at" in text


def test_a_persons_gate_run_does_not_write_through_a_planted_log_link(project, tmp_path):
    target = tmp_path / "settings.json"
    target.write_text('{"keep": true}\n')
    log = project.root / ".forge" / "local" / "gates" / "docs.log"
    log.parent.mkdir(parents=True)
    log.symlink_to(target)
    code, text = forge("gate", "run", "docs")
    assert code != 0 and target.read_text() == '{"keep": true}\n'
    assert "symbolic link" in text and "Fix: forge doctor" in text


def test_a_link_planted_at_a_cache_temporary_is_not_written_through(project, tmp_path):
    """The Stop hook writes the gates' caches in the local area, unsandboxed."""
    import os

    from forge_runtime.gates import files

    target = tmp_path / "settings.json"
    target.write_text('{"keep": true}\n')
    cache = project.root / ".forge" / "local" / "gates" / "stat-cache.json"
    cache.parent.mkdir(parents=True)
    (cache.parent / f".stat-cache.json.{os.getpid()}.tmp").symlink_to(target)
    files.write_json(cache, {"a": 1})
    assert target.read_text() == '{"keep": true}\n'
    assert json.loads(cache.read_text()) == {"a": 1}
