"""Main-session guarded modes: a session put into a role's mode gets that role's tools only.

A forge workflow step that must not write (clarify, review) runs in the main thread, where
no `agent_type` names a role. `forge mode enter clarifier --session ID` records the mode in
forge's guard directory (beside the ledger, outside the work tree, and itself a protected
path); the PreToolUse hook reads it on every call of that session.

A mode only restricts: entering one is open to anyone, agents included. Leaving is a
person's act (`forge mode exit`), and the guard refuses it from an agent's Bash, so
nothing an agent writes can loosen the guard. A mode file that exists but cannot be read
keeps the session guarded with no tools at all.
"""

import os

MODES_DIR = "modes"
UNREADABLE = "unreadable"
# A session id that can be a file name as it is (set tests, not `re`: the guard's allow
# path reads the mode file on every tool call).
_ALNUM = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_SAFE_CHARS = _ALNUM | frozenset("._-")
MAX_ID_LENGTH = 128


def _is_safe_id(session_id: str) -> bool:
    return 0 < len(session_id) <= MAX_ID_LENGTH and session_id[0] in _ALNUM and \
        _SAFE_CHARS.issuperset(session_id)


def mode_path(guard_dir: str, session_id: str) -> str:
    """The mode file of a session; odd session ids are hashed so they cannot escape the dir."""
    if _is_safe_id(session_id):
        name = session_id
    else:
        import hashlib

        name = "sha256-" + hashlib.sha256(session_id.encode("utf-8", "surrogatepass")).hexdigest()
    return os.path.join(guard_dir, MODES_DIR, name + ".json")


def read_mode(guard_dir: str, session_id: str) -> str | None:
    """The role the session is restricted to; None when it has no mode.

    Returns UNREADABLE for a mode file that exists but is not a valid mode record, which the
    guard treats as a role that may use nothing but the read tools (fail closed).
    """
    try:
        record = _load(mode_path(guard_dir, session_id))
    except FileNotFoundError:
        return None
    return _role_in(record)


def _load(path: str):
    """The parsed mode file, None when it is not JSON; FileNotFoundError when there is none."""
    try:
        from forge_runtime import fastjson, safeio

        return fastjson.loads(safeio.read_bytes(path))
    except FileNotFoundError:
        raise
    except (OSError, ValueError):
        return None


def _role_in(record) -> str:
    """The role a mode record names, UNREADABLE when it is not a valid mode record."""
    role = record.get("role") if isinstance(record, dict) else None
    return role if isinstance(role, str) and role else UNREADABLE


def enter(guard_dir: str, session_id: str, role: str) -> str:
    """Put the session into `role`'s mode; return the mode file's path.

    A session already in another mode (or with an unreadable mode file) is refused: an
    agent may run `forge mode enter`, and switching would let it trade its role for a
    wider one. A person leaves the mode first.
    """
    import json
    from datetime import UTC, datetime

    current = read_mode(guard_dir, session_id)
    if current is not None and current != role:
        from forge_runtime.errors import EXIT_REFUSED, ForgeError

        raise ForgeError(f"session {session_id} is already in the {current} mode; only a "
                         "person lifts a mode, and then it may enter another",
                         f"forge mode exit --session {session_id}", exit_code=EXIT_REFUSED,
                         rationale="a person runs this from a terminal")
    from forge_runtime import safeio
    from forge_runtime.roots import root_of_forge_path

    path = mode_path(guard_dir, session_id)
    record = {"role": role, "session_id": session_id,
              "entered_at": datetime.now(UTC).isoformat(timespec="seconds")}
    safeio.replace(path, json.dumps(record).encode("utf-8"), root_of_forge_path(path),
                   durable=False, create_dirs=True)
    return path


def leave(guard_dir: str, session_id: str) -> bool:
    """Take the session out of its mode; False when it had none."""
    try:
        os.remove(mode_path(guard_dir, session_id))
    except FileNotFoundError:
        return False
    return True


def all_modes(guard_dir: str) -> list[tuple[str, str]]:
    """(session id, role) of every session in a mode, sorted by session id."""
    directory = os.path.join(guard_dir, MODES_DIR)
    try:
        names = sorted(os.listdir(directory))
    except FileNotFoundError:
        return []
    found = []
    for name in names:
        if not name.endswith(".json"):
            continue
        try:
            record = _load(os.path.join(directory, name))
        except FileNotFoundError:
            continue  # the session left its mode meanwhile
        session_id = record.get("session_id") if isinstance(record, dict) else None
        found.append((session_id if isinstance(session_id, str) else name[:-len(".json")],
                      _role_in(record)))
    return found


def require_session(session_id: str | None) -> str:
    """The session to act on: the argument, else the host's `CLAUDE_CODE_SESSION_ID`."""
    session_id = session_id or os.environ.get("CLAUDE_CODE_SESSION_ID")
    if not session_id:
        from forge_runtime.errors import EXIT_USAGE, ForgeError

        raise ForgeError("no session given and CLAUDE_CODE_SESSION_ID is not set",
                         "forge mode status", exit_code=EXIT_USAGE)
    return session_id
