"""Reading a bound session's transcript where forge left off, and keeping the place.

The binding holds the offset and anchor of the last read: the next event reads only what
the transcript gained since, and refuses a transcript whose read part changed.
"""

from __future__ import annotations

from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.goal.hosts import transcript
from forge_runtime.goal.store import sessions
from forge_runtime.goal.store.ledger import TAMPERED
from forge_runtime.project import Project


def reader(event: dict):
    """The transcript reader of the host that sent `event`: transcript.py for Claude Code,
    codex_transcript.py for Codex (both offer the same functions and chunk)."""
    from forge_runtime.goal.hosts.host_adapter import transcript_reader

    return transcript_reader(event)


def read_bound(event: dict, binding: dict) -> transcript.Chunk:
    """What a bound session's transcript gained since forge last read it, or the tamper
    error when the part forge read is no longer there as it was."""
    read, path = reader(event), event.get("transcript_path") or ""
    mark = binding.get("anchor")
    try:
        chunk = read.read_since(path, binding.get("offset", 0)) if mark is None \
            else read.read_anchored(path, mark)  # None: nothing read yet
    except transcript.Unattributable as exc:
        raise unattributable(exc, binding) from None
    chunk.model_before = binding.get("model")  # the model of the turn the last read ended in
    return chunk


def unattributable(exc: transcript.Unattributable, binding: dict) -> ForgeError:
    """The tamper error for a transcript (or a subagent's) that lost what forge read."""
    from forge_runtime import hints

    objective = hints.sanitize(binding.get("objective") or "")
    return ForgeError(
        f"{exc}, so the turns after the ones goal {binding.get('nonce')} charged cannot be "
        "attributed", f"/goal {objective}", exit_code=EXIT_REFUSED, code=TAMPERED,
        rationale="in a new session: the goal keeps its count; this session's transcript "
                  "can no longer show its turns")


def remember(project: Project, session: str, binding: dict, path: str,
              chunk: transcript.Chunk) -> None:
    """Keep where the next read of this session's transcript starts, and its anchor: the
    bytes from the newest charged turn's entry to that offset; and the transcript and its
    reader, for a later session of the goal to catch up what this one missed
    (`catch_up_sessions`)."""
    if path:
        binding.update(transcript=path, reader=_READERS.get(type(chunk).__module__,
                                                            "transcript"))
    turns = chunk.turns()
    if turns:
        start = chunk.starts[turns[-1].index]
    else:
        start = (binding.get("anchor") or {}).get("start", 0)
    binding.update(offset=chunk.end_offset,
                   last_turn=turns[-1].uuid if turns else binding.get("last_turn"))
    if chunk.model_after is not None:
        binding["model"] = chunk.model_after
    mark = transcript.anchor(path, start, chunk.end_offset) if chunk.end_offset else None
    if mark is not None:
        binding["anchor"] = mark
    sessions.write_binding(project.ledger_root, session, binding)
    from forge_runtime.goal.sync.witness import Witness

    Witness(project).mark_session(session, binding["nonce"])


# the transcript readers a binding may name (goal/hosts/host_adapter.py: each host's reader module)
_READERS = {"forge_runtime.goal.hosts.transcript": "transcript",
            "forge_runtime.goal.hosts.codex_transcript": "codex_transcript"}


class storage_errors:  # noqa: N801 (used as `with storage_errors(project):`)
    """Turn a failed write into the refusal that names its condition (store/unwritable.py). A class,
    not `contextlib.contextmanager`: `contextlib` costs every charging Stop a few ms."""

    def __init__(self, project: Project) -> None:
        self.project = project

    def __enter__(self) -> None:
        return None

    def __exit__(self, kind, exc, traceback) -> bool:
        if isinstance(exc, OSError):
            from forge_runtime.goal.store.unwritable import unwritable

            raise unwritable(exc, self.project.ledger_root) from None
        return False
