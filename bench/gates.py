"""`forge gate status` over a 10,000-file tree: nothing changed, one file changed, 100 changed;
and the Stop of a running goal in that tree, which reads its gates every turn.

The tree's gates have run once and a first status has filled the stat cache, and every file
is older than the cache's racy window. The
rows show that hashing grows with the files that changed, not with the tree, and what the
gates add to a goal's Stop (compare `stop-charge-20`).
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import time

from bench.scenarios import Plan, Scenario, require_command
from bench.workspace import Workspace

FILES = 10_000
GATES = """\
gates:
  unit-tests:
    command: "true"
    boundary: ["src/**", "tests/**"]
  docs:
    command: "true"
    boundary: ["docs/**"]
"""


def _tree(space: Workspace) -> None:
    """The 10,000-file tree in the workspace: built once per bench run under the fixtures
    directory, copied in with its (old) mtimes, then its gates run and a first status fills
    the stat cache. The files are untracked: git lists them with the same call."""
    require_command("forge gate status")
    template = space.fixtures / "gate-tree"
    if not template.is_dir():
        for index in range(FILES):
            path = template / "src" / f"pkg{index // 100:03d}" / f"mod{index % 100:03d}.py"
            path.parent.mkdir(parents=True, exist_ok=True)
            path.write_text(f"VALUE = {index}\n")
        (template / "docs").mkdir()
        (template / "docs" / "index.md").write_text("# docs\n")
        (template / ".forge").mkdir()
        (template / ".forge" / "gates.yaml").write_text(GATES)
        past = time.time() - 60
        for directory, _, names in os.walk(template):
            for name in names:
                os.utime(os.path.join(directory, name), (past, past))
    shutil.copytree(template, space.root, dirs_exist_ok=True)
    env = space.cli_env()
    for words in (["gate", "run"], ["gate", "status"]):
        subprocess.run(space.forge(*words).argv, env=env, cwd=space.root, check=True,
                       capture_output=True)


def _expect(stale: set[str]):
    def expect(run) -> str | None:
        try:
            payload = json.loads(run.stdout)
        except ValueError:
            return f"not JSON (exit {run.exit_code}): {run.stdout[:200]!r}"
        found = {gate["name"] for gate in payload["gates"] if gate["state"] == "stale"}
        if found != stale:
            return f"expected stale {sorted(stale)}, got {sorted(found)}"
        return None
    return expect


def _changing(space: Workspace, count: int):
    """Before each run, give `count` files content they never had (always stale, hashed)."""
    runs = iter(range(10**9))

    def change() -> None:
        turn = next(runs)
        for index in range(count):
            path = space.root / "src" / f"pkg{index:03d}" / "mod000.py"
            path.write_text(f"VALUE = 'changed {turn}'\n")
    return change


def unchanged(space: Workspace) -> Plan:
    _tree(space)
    return Plan(space.forge("gate", "status", "--json"), _expect(set()),
                note=f"{FILES:,} files, two gates, all fresh")


def changed(count: int):
    def prepare(space: Workspace) -> Plan:
        _tree(space)
        return Plan(space.forge("gate", "status", "--json"), _expect({"unit-tests"}),
                    before_each=_changing(space, count),
                    note=f"{count} of {FILES:,} files rewritten before each run")
    return prepare


def stop_with_gates(space: Workspace) -> Plan:
    from bench.goal import _charged, _ledger_present, build_goal

    _ledger_present()
    built = build_goal(space, 20)
    _tree(space)
    host = built.sessions[0]
    host.model_turn(21)
    snapshot = built.snapshot("charge-gates")
    return Plan(space.hook(host.stop_event()), _charged(space, 21), snapshot.restore,
                note=f"charges turn 21; its two gates cover {FILES:,} unchanged files")


ACTIVATE = ("import sys; from forge_runtime.goal.rules import activation; "
            "from forge_runtime.gates.recorded import field_for; "
            "from forge_runtime.project import find_project; project = find_project('.'); "
            "activation.activate(project, 'the gate passes', recorded=field_for(project), "
            "sandbox=sys.argv[1])")


def verify_gates(posture: str):
    """`forge goal verify-gates` for a goal whose /goal recorded `posture`, its one gate
    (`true` over src/) made to run again by a changed file before each run: what forge's
    own run of a final gate costs, confined under bubblewrap with its seccomp filter
    ("sandboxed") or not ("unsandboxed")."""
    def prepare(space: Workspace) -> Plan:
        require_command("forge goal verify-gates")
        (space.root / "src").mkdir()
        (space.root / ".forge").mkdir(exist_ok=True)
        (space.root / ".forge" / "gates.yaml").write_text(
            'gates:\n  unit-tests:\n    command: "true"\n    boundary: ["src/**"]\n')
        subprocess.run([space.python, "-c", ACTIVATE, posture], env=space.cli_env(),
                       cwd=space.root, check=True, capture_output=True)
        runs = iter(range(10**9))

        def change() -> None:
            (space.root / "src" / "changed.py").write_text(f"VALUE = {next(runs)}\n")

        def expect(run) -> str | None:
            wanted = "confinement: " + ("bwrap" if posture == "sandboxed" else "none")
            text = run.stdout.decode("utf-8", "replace")
            if "unit-tests  passed in" not in text or wanted not in text:
                return f"expected a passing run, {wanted}: {text[-300:]!r}"
            return None
        return Plan(space.forge("goal", "verify-gates"), expect, before_each=change,
                    note=f"one gate, `true`, run again each time; the goal {posture}")
    return prepare


def gate_scenarios() -> list[Scenario]:
    return [
        Scenario("gate-status-10000-unchanged", "CLI",
                 "forge gate status --json, 10,000 files, nothing changed", unchanged),
        Scenario("gate-status-10000-one-changed", "CLI",
                 "forge gate status --json, 10,000 files, one changed", changed(1)),
        Scenario("gate-status-10000-100-changed", "CLI",
                 "forge gate status --json, 10,000 files, 100 changed", changed(100)),
        Scenario("gate-stop-charge-20", "Stop",
                 "Stop charging a 20-turn goal whose gates cover 10,000 files",
                 stop_with_gates),  # not in the lean pass: one more 10,000-file tree
        Scenario("gate-verify-confined", "CLI",
                 "forge goal verify-gates, one gate run confined (bubblewrap, seccomp)",
                 verify_gates("sandboxed")),
        Scenario("gate-verify-unconfined", "CLI",
                 "forge goal verify-gates, one gate run unconfined (the goal opted out)",
                 verify_gates("unsandboxed")),
    ]
