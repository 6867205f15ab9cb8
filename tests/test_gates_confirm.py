"""forge's own run of a goal's recorded final gates: kept in the ledger, reused while nothing it
speaks for changed, bounded in a hook, and in a sandboxed posture confined as the agent's
Bash is (run for real under bubblewrap, with a hostile gate command)."""

from __future__ import annotations

import json
import os
import time
from pathlib import Path

import pytest
from goal_support import activate_with_gates, goal_project
from test_gates import age, forge, write

from forge_runtime.gates import confined, confirm, recorded
from forge_runtime.sandbox import layer
from forge_runtime.sandbox.posture import OPTED_OUT, SANDBOXED, ledger_protected
from forge_runtime.sandbox.scopes import PROJECT

OBJECTIVE = "the parser passes its tests"


def gates_file(*commands: str) -> str:
    lines = ["gates:"]
    for index, command in enumerate(commands):
        lines += [f"  g{index}:", f"    command: {json.dumps(command)}",
                  '    boundary: ["src/**"]']
    return "\n".join(lines) + "\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    project = goal_project(tmp_path, monkeypatch, cli=True)
    write(project.root, "src/parser.py", "parse = 'good'\n")
    age(project.root)
    return project


def goal_with(project, *commands: str, sandbox: str | None = OPTED_OUT
              ) -> tuple[str, recorded.Recorded]:
    """A goal recording gates running `commands`, typed in the posture `sandbox` (the
    project's opt-out unless told; None: a goal from before forge recorded a posture)."""
    write(project.root, ".forge/gates.yaml", gates_file(*commands))
    nonce = activate_with_gates(project, OBJECTIVE, sandbox=sandbox).goal["nonce"]
    return nonce, recorded.of_goal(project, nonce)


def test_the_run_is_kept_in_the_ledger_and_reused_while_nothing_changed(project):
    nonce, gates = goal_with(project, "echo one >> ran.txt")
    first = confirm.confirm(project, nonce, gates, 10)
    assert first["passed"] and first["confinement"] == confined.NONE
    stored = json.loads((project.ledger_root / "gates" / f"{nonce}.json").read_text())
    assert stored["confirmed"] == first
    again = confirm.confirm(project, nonce, gates, 10)
    assert again["passed"] and again["results"] == first["results"]  # nothing ran again
    assert (project.root / "ran.txt").read_text() == "one\n"
    write(project.root, "src/parser.py", "parse = 'better'\n")
    assert confirm.confirm(project, nonce, gates, 10)["passed"]
    assert (project.root / "ran.txt").read_text() == "one\none\n"
    assert os.path.exists(confirm.log_path(project, nonce, "g0"))


def test_only_the_gate_whose_boundary_changed_runs_again(project):
    write(project.root, "docs/index.md", "# docs\n")
    write(project.root, ".forge/gates.yaml", 'gates:\n'
          '  code:\n    command: echo code >> ran.txt\n    boundary: ["src/**"]\n'
          '  docs:\n    command: echo docs >> ran.txt\n    boundary: ["docs/**"]\n')
    nonce = activate_with_gates(project, OBJECTIVE).goal["nonce"]
    gates = recorded.of_goal(project, nonce)
    assert confirm.confirm(project, nonce, gates, 10)["passed"]
    write(project.root, "docs/index.md", "# docs, edited\n")
    assert confirm.confirm(project, nonce, gates, 10)["passed"]
    assert (project.root / "ran.txt").read_text() == "code\ndocs\ndocs\n"


def test_a_hook_does_not_run_again_what_failed_on_this_tree_but_a_person_does(project):
    nonce, gates = goal_with(project, "echo x >> ran.txt; exit 3")
    assert confirm.confirm(project, nonce, gates, 10)["results"]["g0"]["verdict"] == \
        "failed (exit 3)"
    confirm.confirm(project, nonce, gates, 10)
    assert (project.root / "ran.txt").read_text() == "x\n"
    confirm.confirm(project, nonce, gates, None)  # `forge goal verify-gates`
    assert (project.root / "ran.txt").read_text() == "x\nx\n"


def test_a_hook_budget_stops_a_long_gate_and_leaves_the_goal_unverified(project):
    nonce, gates = goal_with(project, "sleep 30", "echo never")
    started = time.monotonic()
    result = confirm.confirm(project, nonce, gates, 1.0)
    assert time.monotonic() - started < 10
    assert [(r["verdict"], r.get("exit_code")) for r in result["results"].values()] == \
        [(confirm.NOT_RUN, 124), (confirm.NOT_RUN, None)]
    assert not result["passed"] and not result["complete"]
    assert "g0 not run, g1 not run" in confirm.describe(result)
    # a hook with no more time does not try again; one with more would, and a person does
    started = time.monotonic()
    assert confirm.confirm(project, nonce, gates, 1.0)["results"]["g0"]["verdict"] == \
        confirm.NOT_RUN
    assert time.monotonic() - started < 0.9


def test_a_gate_timing_out_on_its_own_timeout_fails(project):
    write(project.root, ".forge/gates.yaml",
          'gates:\n  slow:\n    command: sleep 30\n    boundary: ["src/**"]\n'
          '    timeout: 0.5\n')
    nonce = activate_with_gates(project, OBJECTIVE).goal["nonce"]
    result = confirm.confirm(project, nonce, recorded.of_goal(project, nonce), 20)
    assert result["complete"] and result["results"]["slow"]["verdict"] == "timed out"


# -- the sandboxed posture: under bubblewrap -----------------------------------------------

@pytest.fixture
def sandboxed(project):
    layer.enable(project, PROJECT)
    assert ledger_protected(project)
    return project


HOSTILE = """\
set +e
echo gate-wrote > src/allowed.txt
echo forged > {ledger}/gates/{nonce}.json
echo forged > {ledger}/gates/receipt.key
echo '{{"disableAllHooks": true}}' > .claude/settings.local.json
echo 'roles: {{}}' > .forge/guard.yaml
echo '#!/bin/sh' > .git/hooks/pre-commit
echo forged >> .forge/local/state.md
echo forged > .forge/gates.yaml
mkdir -p ~/.claude/plugins && echo planted > ~/.claude/plugins/planted
ls /proc | grep -c '^[0-9]' > src/pids.txt
setsid sh -c 'sleep 2; echo survived > src/late.txt' &
exit 0
"""


def test_a_hostile_gate_under_the_sandboxed_posture_writes_only_the_project(sandboxed,
                                                                            monkeypatch):
    project = sandboxed
    home = project.root.parent / "home"
    home.mkdir()
    monkeypatch.setenv("HOME", str(home))
    write(project.root, ".forge/guard.yaml", "protected: [secrets]\n")
    nonce, gates = goal_with(project, "true", sandbox=SANDBOXED)
    state_before = (project.root / ".forge/local/state.md").read_bytes()
    settings_before = (project.root / ".claude/settings.json").read_bytes()
    hostile = HOSTILE.format(ledger=project.ledger_root, nonce=nonce)
    write(project.root, ".forge/gates.yaml", gates_file(hostile))
    gates_before = (project.root / ".forge/gates.yaml").read_bytes()
    key = project.ledger_root / "gates" / "receipt.key"
    key_before = key.read_bytes()  # made by the /goal
    nonce_record = project.ledger_root / "gates" / f"{nonce}.json"
    hostile_gates = recorded.snapshot(project)
    result = confirm.run(project, nonce, hostile_gates,
                         confirm.boundaries(project, nonce, hostile_gates), {}, 15)
    assert result["confinement"] == confined.BWRAP, result
    assert result["results"]["g0"]["verdict"] == "passed", \
        Path(confirm.log_path(project, nonce, "g0")).read_text()
    assert (project.root / "src/allowed.txt").read_text() == "gate-wrote\n"
    assert not nonce_record.exists() or "forged" not in nonce_record.read_text()
    assert key.read_bytes() == key_before
    assert not (project.root / ".claude/settings.local.json").exists()  # mount point removed
    assert (project.root / ".claude/settings.json").read_bytes() == settings_before
    assert (project.root / ".forge/guard.yaml").read_text() == "protected: [secrets]\n"
    assert not (project.root / ".git/hooks/pre-commit").exists()
    assert (project.root / ".forge/local/state.md").read_bytes() == state_before
    assert (project.root / ".forge/gates.yaml").read_bytes() == gates_before
    assert not (home / ".claude" / "plugins" / "planted").exists()
    assert int((project.root / "src/pids.txt").read_text()) <= 4  # its own PID namespace
    time.sleep(3)
    assert not (project.root / "src/late.txt").exists()  # nothing outlives the run


def test_the_sandboxed_posture_without_bubblewrap_verifies_nothing(sandboxed, monkeypatch,
                                                                   tmp_path):
    nonce, gates = goal_with(sandboxed, "true", sandbox=SANDBOXED)
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    result = confirm.confirm(sandboxed, nonce, gates, 10)
    assert not result["passed"] and "bubblewrap (bwrap) is not installed" in result["problem"]
    assert confirm.describe(result).startswith("forge could not run the recorded gates")


def test_verify_gates_in_the_sandboxed_posture_runs_confined(sandboxed):
    goal_with(sandboxed, "test -f src/parser.py", sandbox=SANDBOXED)
    code, text = forge("goal", "verify-gates")
    assert code == 0, text
    assert "g0  passed in" in text and "confinement: bwrap" in text


def test_a_file_changed_back_to_its_size_and_mtime_is_judged_again(project):
    """An agent breaks a file that passed, keeping its size, and sets its mtime (and so the
    stat cache's key) back with `touch -d`: forge's run must not reuse the pass. The change
    time (ctime) is the kernel's to set."""
    nonce, gates = goal_with(project, "grep -q good src/parser.py")
    assert confirm.confirm(project, nonce, gates, 10)["passed"]
    path = project.root / "src" / "parser.py"
    before = os.stat(path)
    path.write_text("parse = 'bad!'\n")  # same size
    os.utime(path, ns=(before.st_atime_ns, before.st_mtime_ns))
    after = os.stat(path)
    assert (after.st_size, after.st_mtime_ns, after.st_ino) == \
        (before.st_size, before.st_mtime_ns, before.st_ino)
    again = confirm.confirm(project, nonce, gates, 10)
    assert not again["passed"] and again["results"]["g0"]["verdict"] == "failed (exit 1)"


def test_a_planted_entry_in_forges_own_stat_cache_is_not_read(project):
    """Where the posture is unsandboxed a script reaches the ledger's directory: an entry
    with a broken file's stat and the digest it had when it passed must not make forge's
    run reuse that pass (the witness does not vouch for the rewritten cache)."""
    nonce, gates = goal_with(project, "grep -q good src/parser.py")
    assert confirm.confirm(project, nonce, gates, 10)["passed"]
    cache_path = project.ledger_root / "gates" / f"{nonce}.stat-cache.json"
    cached = json.loads(cache_path.read_text())
    digest = cached["src/parser.py"].rsplit(":", 1)[1]
    path = project.root / "src" / "parser.py"
    path.write_text("parse = 'bad!'\n")  # same size, breaks the gate
    bad = os.stat(path)
    cached["src/parser.py"] = \
        f"{bad.st_size}:{bad.st_mtime_ns}:{bad.st_ino}:{bad.st_ctime_ns}:{digest}"
    cache_path.write_text(json.dumps(cached))
    again = confirm.confirm(project, nonce, gates, 10)
    assert not again["passed"] and again["results"]["g0"]["verdict"] == "failed (exit 1)"
    assert confirm.confirm(project, nonce, gates, 10)["results"]["g0"]["verdict"] == \
        "failed (exit 1)"  # the rebuilt cache is forge's again


def test_forges_own_stat_cache_is_read_while_the_witness_vouches_for_it(project):
    from forge_runtime.gates import status
    from forge_runtime.gates.witnessed import CacheWitness

    nonce, gates = goal_with(project, "true")
    confirm.boundaries(project, nonce, gates)
    cache = project.ledger_root / "gates" / f"{nonce}.stat-cache.json"
    tree = status.Tree(project, list(gates.gates), stat_cache=cache,
                       witness=CacheWitness(project, nonce))
    tree.boundary_of(gates.gates[0])
    assert tree.hasher.hashed == 0  # every digest from the cache


def test_hashing_the_boundaries_counts_against_a_hooks_budget(project, monkeypatch):
    """A tree the agent made huge takes the hook's time to hash: what is left for the gates
    is the budget less that, so the hook still answers within the host's limit."""
    nonce, gates = goal_with(project, "true")
    hashing = confirm.boundaries

    def slow(*args):
        time.sleep(1.0)
        return hashing(*args)

    monkeypatch.setattr(confirm, "boundaries", slow)
    cut = confirm.confirm(project, nonce, gates, 1.2)
    assert cut["results"]["g0"]["verdict"] == confirm.NOT_RUN and not cut["complete"]
    assert confirm.confirm(project, nonce, gates, 5)["passed"]
