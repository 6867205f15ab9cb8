"""Scenarios of a goal published on the repository's remote (goal: {remote: origin}).

- a Stop charging a 200-turn goal with publishing on, when no push is owed (it reads what the
  remote last took) and when one is (it starts the background publisher and returns);
- `forge goal publish` of a 2,000-turn ledger one turn ahead of the remote: the work the
  background publisher does (fetch, snapshot of every record, compare-and-swap push);
- the Stop confirming a person's `/goal` in a fresh clone whose remote holds that objective's
  2,000-turn ledger: it fetches, verifies and takes in the whole chain before charging.

The remote is a bare repository on the same disk: the numbers are forge's and git's own
cost, not a network's.
"""

from __future__ import annotations

import subprocess
from pathlib import Path

from bench.goal import (
    OBJECTIVE,
    _charged,
    _ledger_present,
    _person_goal,
    build_goal,
)
from bench.scenarios import Plan, Scenario, expect_hint
from bench.session import HostSession, hook_environment
from bench.snapshot import Snapshot
from bench.workspace import Workspace

RULES = "goal: {remote: origin}\n"


def _origin(space: Workspace) -> Path:
    """A bare repository beside the project, as its remote `origin`, and the opt-in line."""
    bare = space.scratch / "origin.git"
    subprocess.run(["git", "init", "-q", "--bare", str(bare)], check=True)
    subprocess.run(["git", "-C", str(space.root), "remote", "add", "origin", str(bare)],
                   check=True)
    (space.root / ".forge").mkdir(exist_ok=True)
    (space.root / ".forge" / "guard.yaml").write_text(RULES)
    return bare


def _published(space: Workspace, turns: int) -> tuple:
    """A goal of `turns` turns, published on `origin`, its session publishing too."""
    from forge_runtime.goal.store import sessions
    from forge_runtime.goal.sync import remote

    built = build_goal(space, turns)
    bare = _origin(space)
    project = space.project()
    with hook_environment(space):
        remote.sync(project, built.nonce, "origin")
    host = built.sessions[0]
    binding = sessions.read_binding(project.ledger_root, host.id)
    sessions.write_binding(project.ledger_root, host.id, {**binding, "remote": "origin"})
    return built, bare


def _owe(space: Workspace, nonce: str, behind: int) -> None:
    """Make what the remote last took `behind` turns older than the ledger's head."""
    from forge_runtime.goal.store.ledger import Ledger
    from forge_runtime.goal.sync import remote

    ledger = Ledger(space.project().ledger_root, nonce)
    mark = remote.read_state(ledger)["published"]
    remote.write_state(ledger, published={**mark, "turn_count": mark["turn_count"] - behind})


def _after_publisher(space: Workspace, nonce: str, restore):
    """`restore`, once no background publisher of the goal runs any more: the hook has
    returned, but the push it started would otherwise race the restore."""
    def wait_then_restore() -> None:
        import os
        import time

        deadline = time.monotonic() + 60
        while time.monotonic() < deadline:
            running = False
            for pid in filter(str.isdigit, os.listdir("/proc")):
                try:
                    with open(f"/proc/{pid}/cmdline", "rb") as handle:
                        words = handle.read().split(b"\0")
                except OSError:
                    continue
                running = running or (nonce.encode() in words and any(
                    b"forge_runtime.goal.sync.publisher" in word for word in words))
            if not running:
                break
            time.sleep(0.05)
        restore()
    return wait_then_restore


def charging_published(due: bool):
    def prepare(space: Workspace) -> Plan:
        _ledger_present()
        built, bare = _published(space, 200)
        if due:
            from forge_runtime.goal.sync.remote import PUBLISH_EVERY

            _owe(space, built.nonce, PUBLISH_EVERY - 1)  # this charge makes a push owed
        host = built.sessions[0]
        host.model_turn(201)
        project = space.project()
        snapshot = Snapshot([project.ledger_root, project.state_path, space.state_home, bare],
                            space.scratch / "snapshot-published")
        note = ("starts the background publisher" if due else "no push owed (4 charges since "
                "the last)")
        return Plan(space.hook(host.stop_event()), _charged(space, 201),
                    _after_publisher(space, built.nonce, snapshot.restore),
                    note=f"charges turn 201; {note}")
    return prepare


def publishing(space: Workspace) -> Plan:
    """`forge goal publish` of a 2,000-turn ledger one turn ahead of the remote."""
    _ledger_present()
    built, bare = _published(space, 2000)
    from forge_runtime.goal.rules import activation

    with hook_environment(space):
        activation.activate(space.project(), OBJECTIVE, built.sessions[0].id)  # a bind record
    project = space.project()
    snapshot = Snapshot([project.ledger_root, space.state_home, bare],
                        space.scratch / "snapshot-publish")

    def expect(run) -> str | None:
        problem = expect_hint(run)
        if problem or run.exit_code:
            return problem or f"publish exited {run.exit_code}: {run.stdout[-300:]!r}"
        return None if b"2000 of 2020 turns" in run.stdout else \
            f"publish did not report 2,000 turns: {run.stdout[-300:]!r}"
    return Plan(space.forge("goal", "publish"), expect, snapshot.restore,
                note="snapshot of 2,002 records, one compare-and-swap push")


def activating_fresh_clone(space: Workspace) -> Plan:
    """The Stop confirming a person's `/goal` in a fresh clone whose remote holds the
    objective's 2,000-turn ledger."""
    _ledger_present()
    source = Workspace.create(space.plugin_root, space.python, space.scratch, "first-clone",
                              space.fixtures)
    built, bare = _published(source, 2000)
    subprocess.run(["git", "-C", str(space.root), "remote", "add", "origin", str(bare)],
                   check=True)
    (space.root / ".forge").mkdir(exist_ok=True)
    (space.root / ".forge" / "guard.yaml").write_text(RULES)
    host = HostSession(space)
    with hook_environment(space):
        _person_goal(host)
    host.model_turn(1)
    project = space.project()
    snapshot = Snapshot([space.root / ".git", project.state_path.parent, space.state_home,
                         bare], space.scratch / "snapshot-fresh")
    nonce = built.nonce
    return Plan(space.hook(host.stop_event()), _charged(space, 2001),
                _after_publisher(space, nonce, snapshot.restore),
                note="fetches, verifies and takes in 2,000 turns, charges turn 2,001, starts "
                     "the push of the binding")


def remote_scenarios() -> list[Scenario]:
    return [Scenario("stop-charge-published-200", "Stop",
                     "Stop charging a published 200-turn goal, no push owed",
                     charging_published(False), True),
            Scenario("stop-charge-publish-due-200", "Stop",
                     "Stop charging a published 200-turn goal, starting a push",
                     charging_published(True), True),
            Scenario("goal-publish-2000", "CLI",
                     "forge goal publish, 2,000 turns, one record owed", publishing),
            Scenario("stop-activate-remote-2000", "Stop",
                     "Stop confirming /goal in a fresh clone, remote ledger of 2,000 turns",
                     activating_fresh_clone, True)]
