"""Where the plan's readings are kept and found (goal/budget/plan.py): Claude Code's status line
stores each reading under the ledger root, mirrored in the witness root outside the work
tree; both are out of the agent's reach (the guard, the kernel layer), and a copy its
mirror contradicts fails closed. Codex's readings stay in its rollout, which the hooks read;
what forge read there is kept the same way, so a rollout rewritten after forge read it lowers
nothing (`_kept`).

Beside a reading, in the same two files, forge keeps notes the hooks read and no charge
carries into the ledger (`current` and `latest` leave them out):

- `ANSWER`, the usage of the newest answer the status line's input held, and `TAKEN`, when
  (epoch s, to the microsecond) the status line kept it: a tool call waits for the figures
  of the answer that asked for it (goal/hosts/plan_freshness.py);
- `REPORTED`, every window the session's readings have shown: a window the host never
  reported is not one it left out because its reset time passed (goal/hosts/unreported_windows.py).
"""

import time

from forge_runtime.goal.budget.plan import (
    CLAUDE,
    CODEX,
    WINDOWS,
    from_codex,
    from_future,
    merged,
    valid,
)

# how long a copy and its mirror of the same date may disagree before that is tampering:
# only two writers racing leave that (a copy behind its mirror is a writer between its
# writes, however long a loaded machine parks it there: `_behind`); it is well inside
# PreToolUse's deadline, which a hook reading the store more than once must keep
TORN_WRITE_SECONDS = 0.1
TORN_WRITE_POLL = 0.02
ANSWER, TAKEN, REPORTED = "answer", "taken", "reported"
_BESIDE = (ANSWER, TAKEN, REPORTED)


def _paths(root: str, session: str) -> tuple[str, str] | None:
    from forge_runtime.goal.store.layout import PLAN_SUFFIX, plan_mirror_file
    from forge_runtime.goal.store.sessions import session_file

    stored = session_file(root, session, PLAN_SUFFIX)
    if stored is None:
        return None
    return stored, plan_mirror_file(session)


def bare(kept: dict | None) -> dict | None:
    """A kept reading without what forge keeps beside it: the reading a charge carries."""
    if not isinstance(kept, dict) or not any(key in kept for key in _BESIDE):
        return kept
    return {key: value for key, value in kept.items() if key not in _BESIDE}


def record(root: str, session: str, reading: dict, answer: list[int] | None = None) -> None:
    """Keep the newest reading of a session: its mirror in the witness root first, then the
    copy under the ledger root, with its notes: `answer` (the usage of the newest answer
    the host's input held) and now, and the windows the session's readings have shown.
    Each reading kept is dated after the one before it (one whose figures differ in the
    same second is moved a second on), so a copy dated before its mirror is the earlier
    reading a writer has not replaced yet, or that a crash between the two writes left
    (`latest` takes the mirror)."""
    from forge_runtime import fastjson, safeio

    paths = _paths(root, session)
    if paths is None or not valid(reading):
        return
    reading, before = bare(reading), _read(paths[1], None)
    if valid(before) and bare(before) != reading and reading["at"] <= before["at"]:
        reading = {**reading, "at": before["at"] + 1}
    shown = set(reading["windows"])
    if valid(before) and before["host"] == reading["host"] and \
            isinstance(before.get(REPORTED), list):
        shown.update(name for name in before[REPORTED] if name in WINDOWS)
    reading = {**reading, REPORTED: sorted(shown)}
    if answer is not None:
        reading[ANSWER], reading[TAKEN] = list(answer), time.time()
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


def _behind(stored, mirror) -> bool:
    """A copy that is the same host's reading dated before its mirror's, or the same
    reading with other notes beside it: `record` has written the mirror and not yet the
    copy (or a crash stopped it there)."""
    return valid(stored) and valid(mirror) and stored["host"] == mirror["host"] \
        and (stored["at"] < mirror["at"] or bare(stored) == bare(mirror))


def latest(root: str, session: str) -> dict | None:
    """The stored reading of a session (`with_notes`, without what forge keeps beside it)."""
    return bare(with_notes(root, session))


def with_notes(root: str, session: str) -> dict | None:
    """The stored reading of a session with what forge keeps beside it, None when there is
    none; a copy that is not forge's, or one its mirror contradicts, fails closed. `record`
    writes the mirror first, so a copy without its mirror is not forge's either (a crash
    leaves the mirror alone), nor is a reading taken after now. What is returned is always
    the mirror's."""
    paths = _paths(root, session)
    if paths is None:
        return None
    stored, mirror = _read(paths[0], root), _read(paths[1], None)
    deadline = time.monotonic() + TORN_WRITE_SECONDS
    while stored != mirror and stored is not None and mirror is not None \
            and not _behind(stored, mirror) and time.monotonic() < deadline:
        # two writers of one date racing (the status line and a hook, or Codex's
        # PreToolUse hooks of parallel tool calls): a moment later they agree
        time.sleep(TORN_WRITE_POLL)
        stored, mirror = _read(paths[0], root), _read(paths[1], None)
    if _behind(stored, mirror):
        stored = mirror
    if stored is None and mirror is None:
        return None
    if stored is False or not valid(mirror) or (stored is not None and stored != mirror) \
            or from_future(mirror, time.time()):
        from forge_runtime.goal.store.ledger import tampered

        raise tampered(f"the plan figures forge keeps for session {session} were changed "
                       "outside forge (its copy and the witness's disagree, or neither is "
                       "a reading forge's status line took)")
    return mirror


def current(event: dict, root: str) -> dict | None:
    """The newest reading for the event's session: Codex's rollout, through its adapter's
    transcript reader (`plan_reading`), or Claude Code's store."""
    from forge_runtime.goal.hosts.host_adapter import adapter, transcript_reader

    if adapter(event) is not None:
        read = getattr(transcript_reader(event), "plan_reading", None)
        rate_limits = read(event.get("transcript_path") or "") if read else None
        reading = _kept(root, event["session_id"], from_codex(rate_limits, int(time.time())),
                        (rate_limits or {}).get("reported_at"))
        # no figure in the rollout's tail (no reply yet, or one pushed out of it) and none
        # kept: nothing read
        return reading if rate_limits is not None or reading["windows"] else None
    return bare(claude_with_notes(root, event["session_id"]))


def claude_with_notes(root: str, session: str) -> dict | None:
    """A Claude Code session's stored reading with what forge keeps beside it
    (`with_notes`); another host's fails closed."""
    reading = with_notes(root, session)
    if reading is not None and reading["host"] != CLAUDE:  # Claude Code's status line's
        from forge_runtime.goal.store.ledger import tampered

        raise tampered(f"the plan figures forge keeps for session {session} are another "
                       "host's")
    return reading


def _kept(root: str, session: str, reading: dict, reported_at) -> dict:
    """A Codex session's newest reading, each window no lower than forge last read it
    until that window's reset time passes, and kept so (store and mirror, as Claude Code's):
    the rollout is the agent's to rewrite where a person opted out of the sandbox, and a
    figure forge once read stays read (a denied tool call's figure holds at the Stop that
    follows). A stored copy that is not forge's fails closed (`latest`). The copy is dated
    when Codex wrote the figures (`reported_at`), so hooks of parallel tool calls that read
    the same rollout write the same bytes.

    The ledger's rule (`plan.merged`), with two differences. No slack: forge's clock alone
    says when a window it read has ended, so no reset is taken early. And a kept window
    whose reset time has passed is dropped, not kept: this copy is what the host shows now,
    and a window that has ended says nothing of the one running (codex_plan leaves it out
    of its reading too); the ledger keeps the goal's last figures to count a new week from."""
    kept = latest(root, session) or {}
    before = {name: window for name, window in (kept.get("windows") or {}).items()
              if kept.get("host") == CODEX and window["resets_at"] > reading["at"]}
    windows = merged(before, reading, slack=0)
    reading = {**reading, "windows": windows}
    if windows != (kept.get("windows") or {}):
        dated = isinstance(reported_at, int) and not isinstance(reported_at, bool)
        record(root, session, {**reading, "at": reported_at} if dated else reading)
    return reading
