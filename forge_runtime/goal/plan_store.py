"""Where the plan's readings are kept and found (goal/plan.py): Claude Code's status line
stores each reading under the ledger root, mirrored in the witness root outside the work
tree; both are out of the agent's reach (the guard, the kernel layer), and a copy its
mirror contradicts fails closed. Codex's readings stay in its rollout, which the hooks read.
"""

import os

from forge_runtime.goal.plan import from_codex, valid

MIRROR_DIR = "plan"


def _paths(root: str, session: str) -> tuple[str, str] | None:
    from forge_runtime.goal.sessions import session_file
    from forge_runtime.roots import witness_dir

    stored = session_file(root, session, ".plan.json")
    if stored is None:
        return None
    return stored, os.path.join(witness_dir(), MIRROR_DIR, session + ".json")


def record(root: str, session: str, reading: dict) -> None:
    """Keep the newest reading of a Claude Code session: its mirror in the witness root
    first, then the copy under the ledger root (a crash between them leaves one, which
    `latest` takes)."""
    from forge_runtime import fastjson, safeio

    paths = _paths(root, session)
    if paths is None or not valid(reading):
        return
    data = fastjson.dumps(reading).encode("utf-8")
    safeio.replace(paths[1], data, durable=False, create_dirs=True)
    safeio.replace(paths[0], data, root, durable=False, create_dirs=True)


def _read(path: str, below: str | None):
    from forge_runtime import fastjson, safeio

    try:
        return fastjson.loads(safeio.read_bytes(path, below))
    except FileNotFoundError:
        return None
    except (OSError, ValueError):
        return False


def latest(root: str, session: str) -> dict | None:
    """The stored reading of a Claude Code session, None when there is none; a copy that is
    not forge's, or one its mirror contradicts, fails closed."""
    paths = _paths(root, session)
    if paths is None:
        return None
    stored, mirror = _read(paths[0], root), _read(paths[1], None)
    if stored is False or mirror is False or (stored is not None and not valid(stored)) \
            or (mirror is not None and not valid(mirror)) \
            or (stored is not None and mirror is not None and stored != mirror):
        from forge_runtime.goal.ledger import tampered

        raise tampered(f"the plan figures forge keeps for session {session} were changed "
                       "outside forge (its copy and the witness's disagree)")
    return stored if stored is not None else mirror


def current(event: dict, root: str) -> dict | None:
    """The newest reading for the event's session: Codex's rollout, through its adapter's
    transcript reader (`plan_reading`), or Claude Code's store."""
    from forge_runtime.goal.host import adapter, transcript_reader

    if adapter(event) is not None:
        read = getattr(transcript_reader(event), "plan_reading", None)
        rate_limits = read(event.get("transcript_path") or "") if read else None
        if rate_limits is None:
            return None
        import time

        return from_codex(rate_limits, int(time.time()))
    return latest(root, event["session_id"])
