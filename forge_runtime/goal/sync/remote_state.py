"""What this clone knows of a goal's ledger on the remote: `<goal dir>/remote.json`.

    {"published": {"seq", "hash", "commit", "turn_count", "activation_id", "status"},
     "failed": why the last attempt did not reach the remote (or null), "told": said so,
     "rejected": {"message", "fix"} when the remote's chain was not forge's,
     "source": "the remote" for a goal this clone took in from it}

The ledger is local-first: a push is owed while the head is past `published`. Every hook of
a published goal reads this one small file (publisher.after_event), so it imports nothing
that talks to git (remote.py does). Beside it, `<ledger root>/remote-repositories` lists the
repository ids of the clones whose goals this clone took in (a goal keeps the id of the
clone that started it, which every Stop of its sessions compares).
"""

from __future__ import annotations

from forge_runtime import fastjson
from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.goal.store import layout, record_file

PUBLISH_EVERY = 5  # charges between pushes while a goal runs (bench/goal_remote.py)
UNREACHABLE = "FORGE_GOAL_REMOTE_UNREACHABLE"
THIS_CLONE, THE_REMOTE, MERGED = "this clone", "the remote", "merged"


def read_state(ledger) -> dict:
    try:
        return record_file.read_json_file(layout.remote_state_file(ledger.dir))
    except record_file.RecordError:
        return {}


def write_state(ledger, **changes) -> dict:
    data = {**read_state(ledger), **changes}
    record_file.replace_atomically(layout.remote_state_file(ledger.dir), fastjson.dumps(
        data, sort_keys=True).encode("utf-8"))
    return data


def published_mark(head, commit: str) -> dict:
    goal = head.goal
    return {"seq": head.seq, "hash": head.record["hash"], "commit": commit,
            "turn_count": goal["turn_count"], "activation_id": goal["activation_id"],
            "status": goal["status"]}


def source(chain: list[dict], state: dict) -> str:
    """Where a goal's count comes from: this clone, the remote, or both merged."""
    if any(record.get("kind") == "merge" for record in chain):
        return MERGED
    return THE_REMOTE if state.get("source") == THE_REMOTE else THIS_CLONE


def unreachable(remote: str, why: str) -> ForgeError:
    """The refusal for a remote that did not answer; `why` (what git said) rides along."""
    error = ForgeError(f"the goal ledger on remote {remote!r} cannot be read or written: "
                       f"{why}", f"git ls-remote {remote} 'refs/forge/goals/*'",
                       exit_code=EXIT_REFUSED, code=UNREACHABLE,
                       rationale="the goal goes on in this clone's ledger; the next event "
                                 "that reaches the remote publishes and joins it")
    error.why = why
    return error


# -- repositories: a goal keeps the id of the clone that started it ---------------------------

def adopt_repository(ledger_root, repository: str) -> None:
    """Accept goals started in another clone of this remote (their `repository` field)."""
    from forge_runtime.goal.store.ledger import repository_id

    if repository == repository_id(ledger_root) or known_repository(ledger_root, repository):
        return
    from forge_runtime import safeio

    safeio.append(layout.known_repositories_file(ledger_root),
                  (repository + "\n").encode("ascii"))


def known_repository(ledger_root, repository) -> bool:
    """Is `repository` a clone of this one whose goals came here through the remote?"""
    from forge_runtime import safeio

    try:  # bytes: a text-mode file costs every Stop of such a goal a codec import
        known = safeio.read_bytes(layout.known_repositories_file(ledger_root))
        return isinstance(repository, str) and \
            repository.encode("ascii", "replace") in known.split()
    except OSError:
        return False
