"""Every file and directory forge keeps under a ledger root and under the goal witness's
root, named once: the rest of forge asks this module for a path and spells none itself.

The ledger root (`Project.ledger_root`, roots.py) is one for every work tree of a
repository:

    repository-id                         this repository's ledger identity (random, once)
    remote-repositories                   remotes this clone has published goals to
    killed-stops.json                     Stop hooks killed by someone else's signal
    objectives/<objective hash>           the goal's nonce: one objective, one goal, forever
    prices/<digest>.json                  a price table a goal's activation sealed
    <nonce>/records/00000001.json ...     write-once records, each sealing the one before
    <nonce>/records.<n>/                  the records after a join with another clone's chain
    <nonce>/head.json                     {"seq", "hash"} of the last record: a fast pointer
    <nonce>/turns/<turn key>              one empty file per charged turn (idempotency)
    <nonce>/lock                          the writers' lock
    <nonce>/publish.lock                  one publisher at a time
    <nonce>/remote.json                   what the goal's remote last took
    sessions/<session id>.json            which goal a session is bound to
    sessions/<session id>.pending.json    a `/goal` prompt awaiting the Stop that confirms it
    sessions/<session id>[.first].midturn.json  how far PreToolUse counted the running turn
    sessions/<session id>.plan.json       the plan's readings the session's host reported
    sessions/goals/<nonce>/<session id>   an empty file: the session is bound to that goal
    gates/receipt.key                     the key that seals gate receipts
    gates/<nonce>.json                    the final gates a goal's `/goal` recorded
    gates/<nonce>.stat-cache.json         what the gates' boundary looked like when they ran
    gate-runs/<nonce>/<gate>.log          a gate's output when forge ran it
    notify/<key>.json, <key>.claim        the outbox of messages about goals
    notify/sender.log                     what a detached sender said before it died
    .staging-<pid>-<hex>/                 a chain being checked before it enters the ledger

The witness root (`roots.witness_dir()`) is per user, outside every work tree:

    sessions/<session id>                 {"repository", "nonce"}: the session was bound
    plan/<session id>.json                the mirror of the session's plan readings
    prompts/<session id>.json             what a `/goal` prompt found, until its Stop
    trees/<hash of a work tree>.json      where that work tree's ledger is
    ledgers/<repository id>.json          every place a ledger of that repository lives
    <repository key>/goals/<nonce>.json   the last head of the goal forge saw
    <repository key>/objectives/<hash>    the goal of that objective
    <repository key>/gates/<nonce>.json   the goal's gates record as forge last wrote it
    <repository key>/remote/<nonce>.json  the last head this clone saw on the remote

Only `os` and `roots` (both loaded before any hook asks): the hooks of a session without
a goal import this module and pay nothing more for it.
"""

import os

from forge_runtime.roots import witness_dir

# -- under the ledger root ---------------------------------------------------------------
REPOSITORY_ID = "repository-id"
KNOWN_REPOSITORIES = "remote-repositories"
KILLED_STOPS = "killed-stops.json"
OBJECTIVES_DIR = "objectives"
PRICES_DIR = "prices"
SESSIONS_DIR = "sessions"
GOAL_INDEX = "goals"  # sessions/goals/<nonce>/<session id>
GATES_DIR = "gates"
RECEIPT_KEY = "receipt.key"
GATE_RUNS_DIR = "gate-runs"
OUTBOX_DIR = "notify"
SENDER_LOG = "sender.log"
STAGING_PREFIX = ".staging-"

# -- under a goal's directory (<ledger root>/<nonce>) -------------------------------------
RECORDS_DIR = "records"
HEAD_NAME = "head.json"
TURNS_DIR = "turns"
LOCK_NAME = "lock"
PUBLISH_LOCK = "publish.lock"
REMOTE_STATE = "remote.json"

# -- a session's files: sessions/<session id><suffix> -------------------------------------
BINDING_SUFFIX = ".json"
PENDING_SUFFIX = ".pending.json"
CURSOR_SUFFIX = ".midturn.json"
PLAN_SUFFIX = ".plan.json"
STAT_CACHE_SUFFIX = ".stat-cache.json"  # gates/<nonce><suffix>

# -- under the witness root ---------------------------------------------------------------
WITNESS_SESSIONS_DIR = "sessions"
PLAN_MIRROR_DIR = "plan"
PROMPT_NOTES_DIR = "prompts"
TREES_DIR = "trees"
LEDGERS_DIR = "ledgers"
# under <witness root>/<repository key>
WITNESS_GOALS_DIR = "goals"
WITNESS_OBJECTIVES_DIR = "objectives"
WITNESS_REMOTE_DIR = "remote"
WITNESS_GATES_DIR = "gates"


def repository_id_file(ledger_root: str | os.PathLike) -> str:
    return os.path.join(ledger_root, REPOSITORY_ID)


def known_repositories_file(ledger_root: str | os.PathLike) -> str:
    return os.path.join(ledger_root, KNOWN_REPOSITORIES)


def killed_stops_file(ledger_root: str | os.PathLike) -> str:
    return os.path.join(ledger_root, KILLED_STOPS)


def objectives_dir(ledger_root: str | os.PathLike) -> str:
    return os.path.join(ledger_root, OBJECTIVES_DIR)


def sealed_prices_file(ledger_root: str | os.PathLike, digest: str) -> str:
    return os.path.join(ledger_root, PRICES_DIR, f"{digest}.json")


def goal_dir(ledger_root: str | os.PathLike, nonce: str) -> str:
    return os.path.join(ledger_root, nonce)


def head_file(ledger_root: str | os.PathLike, nonce: str) -> str:
    return os.path.join(ledger_root, nonce, HEAD_NAME)



def goal_dir_names(ledger_root: str | os.PathLike) -> list[str]:
    """The goals under `ledger_root`, by the names of their directories (each a nonce of 32
    characters, with a head pointer), in listing order; os.listdir's errors as they are."""
    return [name for name in os.listdir(ledger_root)
            if len(name) == 32 and os.path.lexists(head_file(ledger_root, name))]

def remote_state_file(goal_directory: str | os.PathLike) -> str:
    return os.path.join(goal_directory, REMOTE_STATE)


def sessions_dir(ledger_root: str | os.PathLike) -> str:
    return os.path.join(ledger_root, SESSIONS_DIR)


def session_base(ledger_root: str | os.PathLike, session_id: str) -> str:
    """`sessions/<session id>`, to which each of a session's files adds its suffix (the
    caller checks that the id names a file of its own)."""
    return os.path.join(ledger_root, SESSIONS_DIR, session_id)


def goal_sessions_dir(ledger_root: str | os.PathLike, nonce: str) -> str:
    return os.path.join(ledger_root, SESSIONS_DIR, GOAL_INDEX, nonce)


def gates_dir(ledger_root: str | os.PathLike) -> str:
    return os.path.join(ledger_root, GATES_DIR)


def receipt_key(ledger_root: str | os.PathLike) -> str:
    """The key that seals gate receipts (gates/receipts.py), beside the recorded gates."""
    return os.path.join(ledger_root, GATES_DIR, RECEIPT_KEY)


def stat_cache_file(ledger_root: str | os.PathLike, nonce: str) -> str:
    return os.path.join(ledger_root, GATES_DIR, nonce + STAT_CACHE_SUFFIX)


def gate_log(ledger_root: str | os.PathLike, nonce: str, gate: str) -> str:
    return os.path.join(ledger_root, GATE_RUNS_DIR, nonce, f"{gate}.log")


def outbox_dir(ledger_root: str | os.PathLike) -> str:
    return os.path.join(ledger_root, OUTBOX_DIR)


def staging_dir_name(token: str) -> str:
    return STAGING_PREFIX + token


def session_marker(session_id: str) -> str:
    """The witness's file that says `session_id` was bound to a goal (its name is checked
    by callers)."""
    return os.path.join(witness_dir(), WITNESS_SESSIONS_DIR, session_id)


def plan_mirror_file(session_id: str) -> str:
    return os.path.join(witness_dir(), PLAN_MIRROR_DIR, session_id + ".json")


def prompt_note_file(session_id: str) -> str:
    return os.path.join(witness_dir(), PROMPT_NOTES_DIR, session_id + ".json")


def tree_file(key: str) -> str:
    return os.path.join(witness_dir(), TREES_DIR, f"{key}.json")


def places_file(repository_id: str) -> str:
    return os.path.join(witness_dir(), LEDGERS_DIR, f"{repository_id}.json")


def repository_witness_dir(key: str) -> str:
    return os.path.join(witness_dir(), key)
