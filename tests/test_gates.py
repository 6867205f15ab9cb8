"""Final gates: a receipt is stale exactly when its boundary's content or its definition
changed, status hints only the gates to run, and unchanged files are not hashed again."""

from __future__ import annotations

import json
import os
import subprocess
import time
from pathlib import Path

import pytest
from goal_support import age, write

from forge_runtime.cli.main import main
from forge_runtime.gates import boundary, config, receipts
from forge_runtime.gates import status as gate_status
from forge_runtime.project import find_project

GATES = """\
gates:
  unit-tests:
    command: echo tests ran
    boundary: ["src/**", "tests/**", pyproject.toml]
  lint:
    command: echo lint ran
    boundary: ["**/*.py"]
  docs:
    command: echo docs ran
    boundary: [docs/]
"""


def forge(*words: str) -> tuple[int, str]:
    import contextlib
    import io

    out = io.StringIO()
    with contextlib.redirect_stdout(out), contextlib.redirect_stderr(out):
        code = main(list(words))
    return code, out.getvalue()


def forge_json(*words: str) -> tuple[int, dict]:
    code, text = forge(*words, "--json")
    return code, json.loads(text[text.index("{"):])


@pytest.fixture
def tree(cli_project) -> Path:
    write(cli_project, "src/app.py", "x = 1\n")
    write(cli_project, "tests/test_app.py", "def test_x(): pass\n")
    write(cli_project, "pyproject.toml", "[project]\nname = 'demo'\n")
    write(cli_project, "docs/index.md", "# demo\n")
    write(cli_project, "notes.txt", "unrelated\n")
    write(cli_project, ".forge/gates.yaml", GATES)
    age(cli_project)
    assert forge("gate", "run")[0] == 0
    return cli_project


def states(root: Path) -> dict[str, str]:
    return {s.gate.name: s.state for s in gate_status.assess(find_project(root))}


def test_a_fresh_run_leaves_every_gate_fresh_with_its_receipt(tree):
    assert states(tree) == {"unit-tests": "fresh", "lint": "fresh", "docs": "fresh"}
    receipt = receipts.read(find_project(tree), "unit-tests")
    assert receipt["command"] == "echo tests ran" and receipt["exit_code"] == 0
    assert receipt["files"] == 3 and len(receipt["boundary_hash"]) == 64
    assert (tree / receipt["log"]).read_text() == "tests ran\n"
    import hashlib
    assert receipt["output_sha256"] == hashlib.sha256(b"tests ran\n").hexdigest()
    assert receipt["duration_s"] >= 0
    code, text = forge("gate", "status")
    assert code == 0 and text.rstrip().endswith("Done.\n  every final gate is fresh and passing"
                                                .rstrip())


@pytest.mark.parametrize("change, stale", [
    (lambda root: write(root, "src/app.py", "x = 2\n"), {"unit-tests", "lint"}),
    (lambda root: write(root, "src/new.py", "y = 1\n"), {"unit-tests", "lint"}),
    (lambda root: (root / "tests/test_app.py").unlink(), {"unit-tests", "lint"}),
    (lambda root: (root / "src/app.py").rename(root / "src/main.py"), {"unit-tests", "lint"}),
    (lambda root: write(root, "pyproject.toml", "[project]\nname = 'x'\n"), {"unit-tests"}),
    (lambda root: write(root, "docs/deep/page.md", "more\n"), {"docs"}),
    (lambda root: write(root, "src/data.json", "{}"), {"unit-tests"}),
], ids=["edited", "new file", "deleted", "renamed", "config", "new file in a dir", "non-py"])
def test_a_receipt_goes_stale_exactly_when_its_boundary_changes(tree, change, stale):
    change(tree)
    now = states(tree)
    assert {name for name, state in now.items() if state == "stale"} == stale
    assert {name for name, state in now.items() if state == "fresh"} == set(now) - stale


@pytest.mark.parametrize("change", [
    lambda root: write(root, "notes.txt", "still unrelated, but changed\n"),
    lambda root: write(root, "README.md", "a new unrelated file\n"),
    lambda root: os.utime(root / "src/app.py"),  # touched: stat changed, content did not
    lambda root: write(root, "src/app.py", "x = 1\n"),  # rewritten with the same content
    lambda root: write(root, ".forge/local/scratch.txt", "forge's own area\n"),
], ids=["unrelated edit", "unrelated new file", "touch", "same content", ".forge/local"])
def test_nothing_outside_a_boundarys_content_makes_it_stale(tree, change):
    change(tree)
    assert set(states(tree).values()) == {"fresh"}


def test_a_changed_definition_makes_only_that_gate_stale(tree):
    write(tree, ".forge/gates.yaml", GATES.replace("echo lint ran", "echo lint ran twice"))
    assert states(tree) == {"unit-tests": "fresh", "lint": "stale", "docs": "fresh"}
    write(tree, ".forge/gates.yaml", GATES.replace('[docs/]', '[docs/, notes.txt]'))
    assert states(tree)["docs"] == "stale"


def test_status_hints_only_the_stale_gates(tree):
    write(tree, "pyproject.toml", "changed\n")
    code, text = forge("gate", "status")
    assert code == 0
    assert "Next: forge gate run unit-tests\n" in text
    code, payload = forge_json("gate", "status")
    assert payload["_next_action"] == "forge gate run unit-tests"
    assert payload["to_run"] == ["unit-tests"]
    assert forge("gate", "run", "unit-tests")[0] == 0
    assert set(states(tree).values()) == {"fresh"}


def test_a_failing_gate_is_failing_until_its_boundary_changes(tree):
    write(tree, ".forge/gates.yaml", GATES.replace("echo docs ran", "echo broken; exit 3"))
    code, text = forge("gate", "run", "docs")
    assert code == 1
    assert "Error: FORGE_GATE_FAILED: gate docs failed\nFix: forge gate run docs" in text
    assert "  broken" in text  # the log's tail is on screen
    assert states(tree)["docs"] == "failing"
    _, payload = forge_json("gate", "status")
    assert payload["_next_action"] == "forge gate run docs"
    write(tree, "docs/index.md", "# fixed\n")
    assert states(tree)["docs"] == "stale"


def test_a_never_run_gate_is_named_with_the_stale_ones(cli_project):
    write(cli_project, ".forge/gates.yaml", GATES)
    _, payload = forge_json("gate", "status")
    assert payload["_next_action"] == "forge gate run unit-tests lint docs"
    assert {g["state"] for g in payload["gates"]} == {"never-run"}


def test_unchanged_files_are_not_hashed_again(tree):
    for index in range(200):
        write(tree, f"src/pkg/m{index}.py", f"v = {index}\n")
    age(tree)
    project = find_project(tree)
    gate_status.assess(project)  # learns the new files
    cold = boundary.Hasher(config.cache_dir(project) / boundary.STAT_CACHE)
    gates = config.load(project)
    tree_view = gate_status.Tree(project, gates)
    tree_view.hasher = cold
    for gate in gates:
        tree_view.boundary_of(gate)
    assert cold.hashed == 0
    write(tree, "src/pkg/m7.py", "v = 'changed'\n")
    again = gate_status.Tree(project, gates)
    for gate in gates:
        again.boundary_of(gate)
    assert again.hasher.hashed == 1  # the one changed file, whatever the tree's size


def test_git_ignored_files_are_outside_every_boundary(tree):
    """Running the tests writes `__pycache__/`: ignored by git, it must not stale them."""
    write(tree, ".gitignore", "__pycache__/\n")
    assert forge("gate", "run")[0] == 0
    write(tree, "src/__pycache__/app.cpython-311.pyc", "bytecode")
    assert set(states(tree).values()) == {"fresh"}


def test_a_receipt_written_by_hand_is_no_receipt(tree):
    project = find_project(tree)
    path = receipts.receipt_path(project, "docs")
    forged = json.loads(path.read_text())
    forged["exit_code"] = 0
    write(tree, ".forge/gates.yaml", GATES.replace("echo docs ran", "exit 1"))
    forge("gate", "run", "docs")
    forged["definition"] = config.load(project)[2].definition_digest
    path.write_text(json.dumps(forged))  # a failing run "repaired" by hand
    assert states(tree)["docs"] == "never-run"


def test_a_gate_past_its_timeout_is_stopped_and_fails(cli_project):
    write(cli_project, ".forge/gates.yaml",
          "gates:\n  slow:\n    command: sleep 30\n    boundary: [src/]\n    timeout: 0.3\n")
    started = time.monotonic()
    code, text = forge("gate", "run")
    assert code == 1 and time.monotonic() - started < 10
    receipt = receipts.read(find_project(cli_project), "slow")
    assert receipt["timed_out"] is True and receipt["exit_code"] == 124
    assert "slow: timed out" in text


@pytest.mark.parametrize("body, line, problem", [
    ("gates:\n  unit-tests:\n    command: pytest\n", 2, "'boundary' is a required property"),
    ("gates:\n  ok:\n    command: x\n    boundary: [a]\n  Bad Name:\n    command: x\n"
     "    boundary: [a]\n", 5, "does not match"),
    ("gates:\n  ok:\n    command: x\n    boundary: [../outside]\n", 4, "should not be valid"),
    ("gates:\n  ok:\n    command: x\n    boundary: [a]\n    timeout: -1\n", 5, "minimum"),
    ("gates: [\n", 2, "is not valid YAML"),
    ("gates:\n  ok:\n    command: x\n    boundary: [a]\n    colour: red\n", 2, "colour"),
], ids=["no boundary", "bad name", "outside the project", "timeout", "yaml", "extra key"])
def test_a_broken_gates_file_is_an_error_naming_its_line(cli_project, body, line, problem):
    write(cli_project, ".forge/gates.yaml", body)
    code, text = forge("gate", "status")
    assert code == 1
    assert f"Error: FORGE_GATES_INVALID: gates file .forge/gates.yaml:{line} " in text
    assert problem in text
    assert "Fix: forge gate status" in text


def test_no_gates_file_says_how_to_start_one(cli_project):
    code, text = forge("gate", "status")
    assert code == 1 and "FORGE_GATES_MISSING" in text and "Fix: forge gate init" in text
    assert forge("gate", "init")[0] == 0
    assert [gate.name for gate in config.load(find_project(cli_project))] == ["tests"]
    assert forge("gate", "init")[1].endswith("Next: forge gate status\n"
                                             "  the gates file exists; it is kept\n")


def test_an_unknown_gate_name_is_an_error(tree):
    code, text = forge("gate", "run", "nope")
    assert code == 1 and "no gate named nope" in text and "Fix: forge gate status" in text


def test_evidence_comes_only_from_a_fresh_passing_receipt(tree, monkeypatch):
    monkeypatch.chdir(tree)  # the artifact engine writes where the command runs
    assert forge("new", "prd", "Export CSV")[0] == 0
    code, text = forge("gate", "evidence", "unit-tests", "--for", "PRD-001")
    assert code == 0, text
    assert "evidence EVIDENCE-001 supports PRD-001" in text
    assert "Next: forge score PRD-001" in text
    (made,) = (tree / ".forge/artifacts").glob("EVIDENCE-001-*.md")
    written = made.read_text()
    assert "verdict: supports" in written and "PRD-001" in written
    assert receipts.read(find_project(tree), "unit-tests")["boundary_hash"] in written
    write(tree, "src/app.py", "x = 3\n")
    code, text = forge("gate", "evidence", "unit-tests", "--for", "PRD-001")
    assert code == 2 and "FORGE_GATE_NOT_FRESH" in text
    assert "Fix: forge gate run unit-tests" in text
    code, text = forge("gate", "evidence", "unit-tests", "--for", "prd 1")
    assert code == 1 and "Fix: forge gate evidence unit-tests --for PRD-001" in text


def test_outside_git_the_tree_is_walked(tmp_path, monkeypatch):
    root = tmp_path / "plain"
    write(root, ".forge/gates.yaml", GATES)
    write(root, "src/app.py", "x = 1\n")
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(root))
    assert forge("gate", "run")[0] == 0
    write(root, "src/other.py", "y = 1\n")
    assert states(root) == {"unit-tests": "stale", "lint": "stale", "docs": "fresh"}


def test_globs_follow_their_documented_meaning():
    cases = {("src/**", "src/a/b.py"): True, ("src/**", "srcx/a.py"): False,
             ("**/*.py", "a.py"): True, ("**/*.py", "a/b/c.py"): True,
             ("*.py", "a/b.py"): False, ("docs", "docs/x/y.md"): True,
             ("tests/test_[ab].py", "tests/test_a.py"): True,
             ("tests/test_[!ab].py", "tests/test_a.py"): False,
             ("src/?.py", "src/ab.py"): False}
    for (glob, path), expected in cases.items():
        assert boundary.Matcher([glob]).matches(path) is expected, (glob, path)


def test_the_git_listing_includes_untracked_and_tracked_files(tree):
    subprocess.run(["git", "-C", str(tree), "add", "src/app.py"], check=True)
    files = boundary.list_files(find_project(tree))
    assert "src/app.py" in files and "notes.txt" in files
    assert not [path for path in files if path.startswith(".forge/local/")]


def test_the_git_listing_runs_no_program_the_repositorys_config_names(tree):
    """forge lists the boundary in its hook processes, outside the agent's sandbox: an
    fsmonitor planted in .git/config (git ls-files runs it) must not run."""
    marker = tree / "ran"
    script = tree / "planted.sh"
    script.write_text(f"#!/bin/sh\ntouch {marker}\n")
    script.chmod(0o755)
    subprocess.run(["git", "-C", str(tree), "config", "core.fsmonitor", str(script)],
                   check=True)
    files = boundary.list_files(find_project(tree))
    assert "src/app.py" in files and not marker.exists()


def test_the_git_listing_is_the_projects_whatever_git_dir_the_caller_left_set(
        tree, tmp_path, monkeypatch):
    other = tmp_path / "other"
    subprocess.run(["git", "init", "-q", str(other)], check=True)
    (other / "other.py").write_text("y = 2\n")
    subprocess.run(["git", "-C", str(other), "add", "other.py"], check=True)
    monkeypatch.setenv("GIT_DIR", str(other / ".git"))
    files = boundary.list_files(find_project(tree))
    assert "src/app.py" in files and "other.py" not in files


def test_a_gate_that_changes_another_gates_files_leaves_that_one_judged_on_the_new_files(
        cli_project):
    """Gates run in file order; each one's boundary is read just before it starts. The
    generator's own receipt is stale at once: it changed a file it covers while it ran."""
    write(cli_project, "src/app.py", "x = 1\n")
    write(cli_project, "docs/index.md", "# old\n")
    write(cli_project, ".forge/gates.yaml",
          "gates:\n  generate:\n    command: echo '# generated' > docs/index.md\n"
          "    boundary: [src/, docs/]\n  docs:\n    command: cat docs/index.md\n"
          "    boundary: [docs/]\n")
    assert forge("gate", "run")[0] == 0
    assert states(cli_project) == {"generate": "stale", "docs": "fresh"}
