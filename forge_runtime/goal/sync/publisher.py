"""Publishing a goal's ledger without making a charge wait on the network.

A hook of a session whose goal is published (`binding["remote"]`, set at activation from
`.forge/guard.yaml`) asks `after_event` once it has charged: when a push is owed (nothing
published yet, the activation or status changed, PUBLISH_EVERY more charges, the last
attempt failed, the Stop confirms an activation, or the session is ending), it starts a
child process that runs `remote.sync` (`main`) and returns at once. The child:
- is detached (its own session, no inherited pipes), so the host neither waits for it nor
  kills it with the hook's process group;
- holds a per-goal publish lock (non-blocking: a publisher already running takes the new
  records too, since it loops until the remote has the head; one appended as it exits
  waits for the next event), and gives up after PUBLISH_SECONDS (git times out sooner);
- never loses a record: the ledger is durable before it starts, and a push that fails
  stays owed (`remote.json`) until the next event retries it.
A remote whose chain does not verify (edited, rewritten by hand) is noted as `rejected`,
and the goal's next hook fails closed with the fix, as for a local ledger. A session without
a goal, or a goal of a project without `remote:`, never gets here.
"""

from __future__ import annotations

import os
import sys

from forge_runtime.goal.store import layout

PUBLISH_SECONDS = 45
ROUNDS = 5


def owed(ledger, binding: dict, goal: dict | None, now: bool) -> tuple[bool, dict]:
    """(is a push owed now, what remote.json says); `now`: any record not yet published is
    owed at once (the Stop that confirms an activation, the session's end)."""
    from forge_runtime.goal.sync.remote_state import PUBLISH_EVERY, read_state

    state = read_state(ledger)
    mark = state.get("published") or {}
    if ledger.pointer() == mark.get("seq") and not state.get("failed"):
        return False, state
    if now or not mark or state.get("failed") or goal is None:
        return True, state
    return (goal["activation_id"] != mark.get("activation_id")
            or goal["status"] != mark.get("status")
            or goal["turn_count"] - mark.get("turn_count", 0) >= PUBLISH_EVERY), state


def after_event(project, binding: dict, goal: dict | None, now: bool = False,
                can_tell: bool = True) -> str | None:
    """Start a publish when one is owed; the notice for a remote that did not answer, said
    once until a publish succeeds again, at the first event whose reply has room for it
    (`can_tell`), else None."""
    if not binding.get("remote"):
        return None
    from forge_runtime.goal.store.ledger import Ledger

    ledger = Ledger(project.ledger_root, binding["nonce"])
    due, state = owed(ledger, binding, goal, now)
    rejected = state.get("rejected")
    if isinstance(rejected, dict):  # the remote's chain did not verify: fail closed
        from forge_runtime.goal.store.ledger import tampered

        raise tampered(str(rejected.get("message")), str(rejected.get("fix")))
    if due:
        spawn(project.root, binding["nonce"])
    if state.get("failed") and not state.get("told") and can_tell:
        from forge_runtime.goal.sync.remote_state import unreachable, write_state

        write_state(ledger, told=True)
        return unreachable(binding["remote"], state["failed"]).hint().render()
    return None


def spawn(root: str, nonce: str) -> None:
    """Run `main(root, nonce)` in a detached child with this interpreter, isolated (-I)
    with forge's own package first on its path, so nothing of the project is imported."""
    import subprocess

    package_parent = os.path.dirname(os.path.dirname(os.path.dirname(os.path.dirname(
        os.path.realpath(__file__)))))
    code = ("import sys; sys.path.insert(0, sys.argv[1]); "
            "from forge_runtime.goal.sync.publisher import main; main(sys.argv[2], sys.argv[3])")
    subprocess.Popen([sys.executable, "-I", "-c", code, package_parent, os.fspath(root), nonce],
                     stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                     stderr=subprocess.DEVNULL, close_fds=True, start_new_session=True,
                     cwd=os.sep)


def main(root: str, nonce: str) -> None:
    """The detached child's entry: `publish`, with an alarm that ends this process after
    PUBLISH_SECONDS whatever git does (only here: in any other process the alarm would
    outlive the call)."""
    import signal

    signal.alarm(PUBLISH_SECONDS)
    publish(root, nonce)


def publish(root: str, nonce: str) -> None:
    """Publish goal `nonce` of the project at `root` until the remote holds its head."""
    from pathlib import Path

    from forge_runtime.errors import ForgeError
    from forge_runtime.goal.store.ledger import Ledger
    from forge_runtime.goal.sync.remote import UNREACHABLE, configured, sync, write_state
    from forge_runtime.project import find_project

    project = find_project(Path(root))
    name = configured(project)
    ledger = Ledger(project.ledger_root, nonce)
    if name is None or not os.path.isdir(ledger.dir):
        return
    import fcntl

    fd = os.open(os.path.join(ledger.dir, layout.PUBLISH_LOCK),
                 os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        return  # another publisher runs; it loops until the remote has the head
    try:
        for _ in range(ROUNDS):
            try:
                head = sync(project, nonce, name)
            except ForgeError as exc:
                if exc.code != UNREACHABLE:  # not forge's: the goal's next hook fails closed
                    write_state(ledger, rejected={"message": exc.message, "fix": exc.fix})
                return  # unreachable: remote.json keeps it owed, the next event retries
            if ledger.pointer() == head.seq:
                return
    finally:
        os.close(fd)
