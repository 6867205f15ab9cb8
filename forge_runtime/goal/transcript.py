"""What the host's session transcript (JSON lines) says about goals and turns.

Measured against Claude Code 2.1.332 (see HOST.md and tests/host/test_goal_*.py):
- A person's `/goal X` leaves a `user` entry (not `isMeta`) whose `promptId` is the prompt's
  id and whose content holds `<command-name>/goal</command-name>` and
  `<command-args>X</command-args>`, then the host's reply, whose parent is that entry and
  whose content holds `Goal set: X`: in `-p` mode a `system` entry (subtype
  `local_command`), in the interactive TUI a `user` entry holding
  `<local-command-stdout>Goal set: X</local-command-stdout>`. Neither exists yet when
  UserPromptSubmit runs (in `-p` mode the transcript file does not exist at all then); both
  exist at the prompt's first Stop.
- A prompt a model caused (a scheduled wake-up whose text is `/goal X`) reaches the
  transcript as a `user` entry with `isMeta: true, promptSource: "system"` and no `Goal set`.
- Verdicts are `attachment` entries of type `goal_status`: `sentinel: true, met: false` when a
  goal is set, `sentinel: true, met: true` when it is cleared, `met: true` (no sentinel) when
  the evaluator judged it met, `impossible: true` when judged impossible.
- Each turn ends with an `assistant` entry; its `uuid` is this module's turn identity.

- The `-p` host writes each entry before it runs the Stop hooks. The interactive TUI
  writes asynchronously: measured, a Stop hook sometimes starts 15-30 ms before its own
  turn's assistant entry (or the `Goal set:` reply) reaches the file. `follow()` waits for
  what a Stop needs, up to FLUSH_WAIT, so a late write is not mistaken for no new turn.

Readers start at a byte offset and return the new one, so a Stop reads only what the host
appended since the last event of that session, however long the session grows.
"""

from __future__ import annotations

import json
import os
import re
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from forge_runtime.goal.native import goal_status, still_running
from forge_runtime.goal.objective import normalise

# Greedy: the arguments are the last tag and the host writes them raw, so an objective may
# itself hold `</command-args>`.
_ARGS = re.compile(r"<command-args>(.*)</command-args>", re.S)
_COMMAND = "<command-name>/goal</command-name>"
_GOAL_SET = "Goal set:"
_INTERESTING = ('"assistant"', "goal_status", _GOAL_SET, _COMMAND.replace("/", "\\/"), _COMMAND,
                "local_command")

MET, CLEARED, IMPOSSIBLE = "met", "cleared", "impossible"
FLUSH_WAIT = 2.0  # seconds; the longest measured lag is ~30 ms
POLL = 0.01


@dataclass(frozen=True)
class Verdict:
    """The host's judgement of its native goal: met, cleared or impossible."""

    outcome: str
    condition: str | None
    after_last_turn: bool  # written after the newest assistant entry (judges that turn)


@dataclass
class Chunk:
    """What was appended to a transcript between two offsets."""

    entries: list[dict] = field(default_factory=list)
    end_offset: int = 0

    @property
    def last_turn(self) -> str | None:
        """The identity of the newest turn: the uuid of its closing assistant entry."""
        for entry in reversed(self.entries):
            if entry.get("type") == "assistant" and not entry.get("isSidechain"):
                return entry.get("uuid")
        return None

    def verdicts(self) -> list[Verdict]:
        """Goal verdicts in order, each marked as before or after the newest turn."""
        found: list[Verdict] = []
        seen_last_turn = self.last_turn is None
        last = self.last_turn
        for entry in self.entries:
            if entry.get("type") == "assistant" and entry.get("uuid") == last:
                seen_last_turn = True
                continue
            attachment = goal_status(entry)
            if attachment is None:
                continue
            outcome = _outcome(attachment)
            if outcome:
                found.append(Verdict(outcome, attachment.get("condition"),
                                     seen_last_turn and last is not None))
        return found

    def running_condition(self) -> str | None:
        """The condition of the newest verdict in the chunk if it says the host's native
        goal still runs (set, or judged not met); None when there is none or it ended."""
        for entry in reversed(self.entries):
            attachment = goal_status(entry)
            if attachment is not None:
                return still_running(attachment)
        return None

    def person_set_goal(self, prompt_id: str, objective: str | None) -> int | None:
        """Where the host confirmed it set `objective` for the person's prompt, or None.

        The answer is the index of the `Goal set:` entry: only what follows it belongs
        to the goal (earlier verdicts and turns in the session were about something else).
        `objective` None matches whatever objective the host set for that prompt.
        """
        wanted = None if objective is None else normalise(objective)
        command_uuids = set()
        for index, entry in enumerate(self.entries):
            if entry.get("type") == "user" and \
                    _is_person_goal_command(entry, prompt_id, wanted):
                command_uuids.add(entry.get("uuid"))
            elif entry.get("parentUuid") in command_uuids and _is_goal_set_reply(entry):
                return index
        return None

    def after(self, index: int) -> Chunk:
        """The entries after `index`, ending at the same offset."""
        return type(self)(self.entries[index + 1:], self.end_offset)

    def extended(self, more: Chunk) -> Chunk:
        """This chunk followed by `more`, read from where this one ended."""
        return type(self)(self.entries + more.entries, more.end_offset)


def _outcome(attachment: dict) -> str | None:
    if attachment.get("impossible"):
        return IMPOSSIBLE
    if attachment.get("met") is True:
        return CLEARED if attachment.get("sentinel") else MET
    return None


def _is_goal_set_reply(entry: dict) -> bool:
    """The host's `Goal set:` reply: a `system` local_command entry (-p) or a `user` one (TUI)."""
    kind = entry.get("type")
    if kind == "system" and entry.get("subtype") == "local_command":
        content = entry.get("content")
    elif kind == "user" and not entry.get("isMeta"):
        content = (entry.get("message") or {}).get("content")
    else:
        return False
    return isinstance(content, str) and _GOAL_SET in content


def _is_person_goal_command(entry: dict, prompt_id: str, objective: str | None) -> bool:
    if entry.get("isMeta") or entry.get("promptSource") == "system" or \
            entry.get("isSidechain") or entry.get("promptId") != prompt_id:
        return False
    content = (entry.get("message") or {}).get("content")
    if not isinstance(content, str) or _COMMAND not in content:
        return False
    if objective is None:
        return True
    args = _ARGS.search(content)
    return args is not None and normalise(args.group(1)) == objective


def read_since(path: str | os.PathLike, offset: int = 0) -> Chunk:
    """The complete lines appended after `offset`, parsed where they can matter to goals.

    A missing file reads as empty (the transcript does not exist before the first Stop). A
    line still being written (no newline yet) is left for the next read.
    """
    return read_lines(path, offset, _INTERESTING, Chunk)


def read_lines(path: str | os.PathLike, offset: int, tokens: tuple[str, ...],
               chunk_type: type[Chunk]) -> Chunk:
    """`read_since` for any host's JSON-lines transcript: the complete lines after `offset`
    that hold one of `tokens` (a cheap filter before parsing), as a `chunk_type`."""
    try:
        with open(path, "rb") as handle:
            size = os.fstat(handle.fileno()).st_size
            if offset > size:  # the file was replaced or truncated: read it all again
                offset = 0
            handle.seek(offset)
            data = handle.read()
    except FileNotFoundError:
        return chunk_type([], offset)
    complete = data.rfind(b"\n") + 1
    entries = []
    for raw in data[:complete].split(b"\n"):
        line = raw.decode("utf-8", "replace")
        if not any(token in line for token in tokens):
            continue
        try:
            entry = json.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
    return chunk_type(entries, offset + complete)


def follow(path: str | os.PathLike, chunk: Chunk, wanted: Callable[[Chunk], object],
           timeout: float | None = None,
           read: Callable[[str | os.PathLike, int], Chunk] = read_since) -> Chunk:
    """`chunk` extended with what the host appends until `wanted(chunk)` holds or time is up.

    Only a Stop that finds nothing new pays the wait: a repeated Stop for the same turn,
    or a model-caused `/goal` that the host never confirms. `read` is the host's reader.
    """
    deadline = time.monotonic() + (FLUSH_WAIT if timeout is None else timeout)
    while not wanted(chunk) and time.monotonic() < deadline:
        time.sleep(POLL)
        chunk = chunk.extended(read(path, chunk.end_offset))
    return chunk


def running_goal(path: str | os.PathLike) -> str | None:
    """The condition of the host's native goal if it still runs (native.py's tail scan)."""
    from forge_runtime.goal.native import running_goal as tail_scan

    return tail_scan(path)
