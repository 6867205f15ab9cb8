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
- Verdicts are `attachment` entries of type `goal_status` (native_goal.py names every shape):
  `sentinel: true, met: false` when a goal is set, `sentinel: true, met: true` when it is
  cleared, `met: true` (no sentinel) when the evaluator judged it met, `met: false, failed:
  true` when it judged the goal impossible (the host then clears its goal). A shape forge
  does not know ends forge's goal as UNKNOWN.
- Each prompt that starts a turn is a `user` entry that is no tool result. The host records
  who sent it in fields of the entry (read from the binaries 2.1.332 and 2.1.337): a
  person's prompt has `promptSource: "sdk"` (a `-p` or SDK prompt) or none (a `/goal`
  command in `-p`), or `origin.kind: "human"` and `promptSource` `typed`, `queued` or
  `suggestion_accepted` (the TUI), and 2.1.337's entries carry the host's own summary too,
  `turnOrigin` (`sdk`, `human`); a scheduled wake-up or cron prompt is `isMeta` with
  `promptSource: "system"` and `wakeupSource`, a background task's notice has `origin.kind:
  "task-notification"`, the goal loop's feedback is `isMeta`. A prompt is a person's only
  when every field says so (`prompt_origin`, whose tables classify each field), so anything
  new the host invents is not.
- Each turn ends with an `assistant` entry whose `message.stop_reason` is not `tool_use`
  (`end_turn` here; the entries of a reply that calls a tool say `tool_use`); its `uuid` is
  this module's turn identity. An entry without a stop reason closes a turn unless it calls
  a tool; the host's synthetic entries (`model: "<synthetic>"`: a resumed session's "No
  response requested.", API errors) close none, except a usage limit's (below).
- A subscription's usage limit ends the turn (measured, 2.1.332 on a subscription login: a
  429 whose unified-limiter headers say `rejected` is not retried): the host writes a
  synthetic `assistant` entry (`model: "<synthetic>"`, `isApiErrorMessage: true`,
  `error: "rate_limit"`, `apiError: "usage_limit_reached"`, `quotaLimits` with `status:
  "rejected"`, `resetsAt`, `rateLimitType`) and fires StopFailure instead of Stop. That entry
  closes the turn (`usage_limited`). In the TUI the host then waits for the reset and
  continues by itself with a `user` entry that is `isMeta`, `promptSource: "system"`,
  `origin.kind: "auto-continuation"` under a new `promptId`: a turn the host started.
- A person's interrupt (Esc) during a tool call, or before the model answered, writes no
  reply that closes the turn: the host writes its own note instead, a `user` entry with
  `rowSource: "harness"` whose text is `[Request interrupted by user for tool use]` or
  `[Request interrupted by user]` (2.1.332 and 2.1.337 alike). That note closes the turn
  still open before it (`interruption_note`); it is no prompt. 2.1.337 also fires the
  `Interrupt` hook then (hooks/interrupt.py), before the TUI has written the note.

- The `-p` host writes each entry before it runs the Stop hooks. The interactive TUI
  writes asynchronously: measured, a Stop hook sometimes starts 15-30 ms before its own
  turn's assistant entry (or the `Goal set:` reply) reaches the file. `follow()` waits for
  what a Stop needs, up to FLUSH_WAIT, so a late write is not mistaken for no new turn.

Readers start at a byte offset and return the new one, so a Stop reads only what the host
appended since the last event of that session, however long the session grows. A reader
that resumes at an offset first checks an anchor (`anchor`, `read_anchored`): the hash of the
bytes from the last charged turn's line up to that offset. A transcript that is gone, shorter
than the offset, or rewritten there raises `Unattributable`: the turns after it could no
longer be told from the ones already charged.
"""

from __future__ import annotations

import os
import time

from forge_runtime import fastjson, safeio
from forge_runtime.digest import sha256_hex
from forge_runtime.goal.hosts.native_goal import (
    CLEARED,
    IMPOSSIBLE,
    MET,
    RUNNING,
    UNKNOWN,
    goal_status,
    still_running,
    verdict,
)
from forge_runtime.goal.store.objective import normalise
from forge_runtime.host_contract import claude_code as _contract
from forge_runtime.records import record

TYPE_CHECKING = False
if TYPE_CHECKING:  # annotations only: usage.py is imported where tokens are counted
    from forge_runtime.goal.budget.usage import Tally

TYPE_CHECKING = False
if TYPE_CHECKING:
    from collections.abc import Callable

_ARGS_OPEN, _ARGS_CLOSE = "<command-args>", "</command-args>"
_COMMAND = "<command-name>/goal</command-name>"
_GOAL_SET = "Goal set:"
_INTERESTING = ('"assistant"', "goal_status", _GOAL_SET, _COMMAND.replace("/", "\\/"), _COMMAND,
                "local_command", '"user"')

# the cheap prefilter for the lines that carry tokens (usage.py;
# events/tool_call.py reads only these)
USAGE_TOKENS = ('"usage"',)

# the host's ends of its goal (native_goal.py): MET, CLEARED, IMPOSSIBLE, UNKNOWN
ENDINGS = (MET, CLEARED, IMPOSSIBLE, UNKNOWN)
# who started a turn: a person's prompt, or the host on its own (goal loop, wake-up, cron,
# notification, check-in)
PERSON, HOST = _contract.PERSON, _contract.HOST
# Who sent a prompt, field by field (`prompt_origin`), as the host contract classifies every
# field the host writes on a prompt entry (host_contract/claude_code.py PROMPT_ENTRY and
# PROMPT_ENVELOPE). A field the contract does not name makes the prompt the host's: a new
# host that adds a field turns a person's prompts into the host's until it is classified,
# which fails safe (the drift check names it in CI), where the other way a new marker of
# the host's own prompts would pass as a person's.
PROMPT_ENVELOPE = _contract.PROMPT_ENVELOPE
# the fields that say who sent it: the values a person's prompt has (absent is None)
PROMPT_PERSON_VALUES = {
    field: (None, *(value for value, says in reading.items() if says == _contract.PERSON))
    for field, (reading, _) in _contract.PROMPT_ENTRY.items() if isinstance(reading, dict)}
# `origin` says it by its `kind`: only a person's is PROMPT_PERSON_ORIGIN
PROMPT_PERSON_VALUES.pop("origin")
(PROMPT_PERSON_ORIGIN,) = (kind for kind, says in _contract.ORIGIN_KINDS.items()
                           if says == _contract.PERSON)
# the fields the host writes only on a prompt no person typed (null or false say nothing)
PROMPT_HOST_MARKS = frozenset(field for field, (reading, _) in _contract.PROMPT_ENTRY.items()
                              if reading == _contract.HOST)
TASK_NOTIFICATION = _contract.TASK_NOTIFICATION
# the model the host names on the assistant entries it writes itself (a resumed session's
# "No response requested.", a notice, an API error): no model answered them
SYNTHETIC_MODEL = "<synthetic>"
FLUSH_WAIT = 2.0  # seconds; the longest measured lag is ~30 ms
POLL = 0.01
ANCHOR_SPAN = 1 << 20  # an anchor hashes at most this many bytes before its offset


class Unattributable(Exception):
    """The transcript no longer holds what forge read from it (missing, cut, rewritten)."""


# Records and a plain class, not dataclasses: `dataclasses` imports `inspect`, a lean
# interpreter's bare start over again, and every charging Stop reads a transcript.
class Verdict(record("Verdict", "outcome condition index")):
    """The host's end of its native goal: met, cleared, impossible or unknown (`outcome`), the
    goal's `condition` (or None), and its `index` in its chunk: turns before it were worked
    before the verdict."""

    __slots__ = ()


class Turn(record("Turn", "uuid index")):
    """A finished turn: its identity and where its closing entry is in its chunk."""

    __slots__ = ()


class Chunk:
    """What was appended to a transcript between two offsets.

    `starts[i]` is the byte offset of the line `entries[i]` was read from.
    """

    def __init__(self, entries: list[dict] | None = None, end_offset: int = 0,
                 starts: list[int] | None = None) -> None:
        self.entries = [] if entries is None else entries
        self.end_offset = end_offset
        self.starts = [] if starts is None else starts

    def __eq__(self, other) -> bool:
        return isinstance(other, Chunk) and (self.entries, self.end_offset, self.starts) == \
            (other.entries, other.end_offset, other.starts)

    __hash__ = None

    def __repr__(self) -> str:
        return (f"Chunk(entries={self.entries!r}, end_offset={self.end_offset!r}, "
                f"starts={self.starts!r})")

    # A turn is known by the entry that closes it (Codex's chunk: the one that opens it).
    OPENS_TURNS = False
    # The model in force where the chunk starts, as the read before it left it (a host
    # whose responses do not name their model: Codex names it once per turn); Claude Code's
    # responses each name theirs, so here it stays None.
    model_before: str | None = None

    @property
    def model_after(self) -> str | None:
        """The model in force where the chunk ends, for the next read to start from."""
        return self.model_before

    def responses(self) -> list[tuple[int, str, str, dict]]:
        """(index, response id, model, tokens) of every entry that carries an API
        response's usage (usage.py), in transcript order."""
        from forge_runtime.goal.budget.usage import response

        found = []
        for index, entry in enumerate(self.entries):
            spent = response(entry) if entry.get("type") == "assistant" else None
            if spent is not None and entry.get("isSidechain") is not True:
                found.append((index, *spent))
        return found

    def turns(self) -> list[Turn]:
        """Every turn the chunk shows finished, oldest first."""
        return [Turn(self.entries[index]["uuid"], index) for index in self._closing()]

    def _closing(self) -> list[int]:
        """Where each turn the chunk shows finished is closed: a reply that calls no tool,
        the host's entry for a usage limit, or the host's note that an interrupt ended the
        turn open before it (a prompt or a reply since the last close; at the chunk's start
        none is open, so a note after a turn a reply already closed closes nothing more)."""
        found, running = [], False
        for index, entry in enumerate(self.entries):
            if _closes_turn(entry) or (running and interruption_note(entry)):
                found.append(index)
                running = False
            elif (entry.get("type") == "assistant" and not entry.get("isSidechain")) or \
                    self.prompt_origin(entry) is not None:
                running = True
        return found

    def usage_limited(self) -> list[str]:
        """The turns the chunk shows the host stopped for a usage limit, oldest first."""
        return [entry["uuid"] for entry in self.entries
                if usage_limit_entry(entry) and isinstance(entry.get("uuid"), str)]

    @property
    def last_turn(self) -> str | None:
        """The identity of the newest finished turn, or None."""
        turns = self.turns()
        return turns[-1].uuid if turns else None

    def prompt_origin(self, entry: dict) -> str | None:
        """PERSON or HOST for an entry that starts a turn, None for any other entry."""
        return prompt_origin(entry)

    def turn_origins(self, carried: dict | None = None) -> tuple[dict[str, str], dict]:
        """Who started each finished turn ({turn: PERSON or HOST}), and what the next chunk
        carries on (`carried`: this method's own, None at first).

        A turn is its prompt's: the newest prompt entry since the turn before it closed.
        The host gives every prompt an id (`promptId`) that the continuations it makes for
        it keep (a Stop hook's feedback, the goal loop's), so a continuation is its
        prompt's, a person's or not; a prompt of its own (a wake-up, a notice) starts
        afresh. Once a turn closed, nothing is open: whatever runs before the next prompt
        (a background subagent) was started by none, which counts as the host's."""
        state = dict(carried) if isinstance(carried, dict) else {}
        origins, closing = {}, set(self._closing())
        for index, entry in enumerate(self.entries):
            found = self.prompt_origin(entry)
            if found is not None:
                ident = entry.get("promptId")
                if not (isinstance(ident, str) and ident == state.get("id")):
                    state = {"id": ident if isinstance(ident, str) else None,
                             "origin": found}
                state["open"] = True
            if index in closing:
                origins[entry_turn(self, index)] = \
                    state.get("origin") if state.get("open") else HOST
                state["open"] = False
        return origins, state

    @staticmethod
    def open_origin(state: dict) -> str | None:
        """The origin of the turn open at a chunk's end, from `turn_origins`'s state."""
        return state.get("origin") if state.get("open") else None

    def verdicts(self) -> list[Verdict]:
        """Goal verdicts in transcript order, each with its place among the turns."""
        found: list[Verdict] = []
        for index, entry in enumerate(self.entries):
            attachment = goal_status(entry)
            outcome = verdict(attachment, entry) if attachment is not None else RUNNING
            if outcome != RUNNING:
                condition = attachment.get("condition")
                found.append(Verdict(outcome, condition if isinstance(condition, str)
                                     else None, index))
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
        return type(self)(self.entries[index + 1:], self.end_offset, self.starts[index + 1:])

    def extended(self, more: Chunk) -> Chunk:
        """This chunk followed by `more`, read from where this one ended."""
        return type(self)(self.entries + more.entries, more.end_offset,
                          self.starts + more.starts)


def tool_use_ids(chunk: Chunk) -> set[str]:
    """The ids of the tool calls the chunk's assistant entries ask for."""
    ids = set()
    for entry in chunk.entries:
        message = entry.get("message") if entry.get("type") == "assistant" else None
        content = message.get("content") if isinstance(message, dict) else None
        if isinstance(content, list):
            ids.update(block["id"] for block in content if isinstance(block, dict)
                       and block.get("type") == "tool_use" and isinstance(block.get("id"), str))
    return ids


def entry_turn(chunk: Chunk, index: int) -> str:
    """The identity of the turn the entry at `index` identifies (its `uuid` here)."""
    return chunk.entries[index]["uuid"]


def prompt_origin(entry: dict) -> str | None:
    """PERSON for a prompt whose every field says a person sent it, HOST for any other
    prompt that starts a turn (isMeta, a scheduled or system source, a task notification, a
    plugin's, a peer's, a field forge has not classified), None for an entry that starts no
    turn (tool results, assistant entries, the host's note of an interruption)."""
    if entry.get("type") != "user" or entry.get("isSidechain") or "toolUseResult" in entry or \
            interruption_note(entry):
        return None
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list):
        if any(isinstance(block, dict) and block.get("type") == "tool_result"
               for block in content):
            return None
        content = " ".join(block.get("text") for block in content if isinstance(block, dict)
                           and isinstance(block.get("text"), str))
    if not isinstance(content, str):
        return None
    if content.lstrip().startswith(TASK_NOTIFICATION):
        return HOST
    return PERSON if all(_says_person(key, value) for key, value in entry.items()) else HOST


def _says_person(key: str, value: object) -> bool:
    """Whether one field of a prompt entry is as a person's prompt has it (the tables
    above); a field in none of them is not."""
    if key in PROMPT_ENVELOPE:
        return True
    if key in PROMPT_HOST_MARKS:
        return value is None or value is False
    if key == "origin":
        return value is None or (isinstance(value, dict)
                                 and _same(value.get("kind"), PROMPT_PERSON_ORIGIN))
    allowed = PROMPT_PERSON_VALUES.get(key)
    return allowed is not None and any(_same(value, wanted) for wanted in allowed)


def _same(value: object, wanted: object) -> bool:
    """`value == wanted` with JSON's types kept apart (`0` is not `false`, `1` not `true`)."""
    if wanted is None or isinstance(wanted, bool):
        return value is wanted
    return type(value) is type(wanted) and value == wanted


def usage_limit_entry(entry: dict) -> bool:
    """The host's own record that a usage limit ended the turn: its synthetic API-error
    entry for a 429 its unified limiter refused (`quotaLimits.status: "rejected"`, or
    `apiError: "usage_limit_reached"`). A model's reply, a tool's result or any text cannot
    be one: these are fields of the entry the host writes, not content."""
    if entry.get("type") != "assistant" or entry.get("isSidechain") or \
            entry.get("isApiErrorMessage") is not True or entry.get("error") != "rate_limit":
        return False
    quota = entry.get("quotaLimits")
    return entry.get("apiError") == "usage_limit_reached" or (
        isinstance(quota, dict) and quota.get("status") == "rejected")


# The host's notes that a person's interrupt ended a turn (its own texts, read from the
# binary 2.1.337, and written by 2.1.332 too)
INTERRUPTION_NOTES = ("[Request interrupted by user]", "[Request interrupted by user for tool use]")


def interruption_note(entry: dict) -> bool:
    """The host's note that a person's interrupt ended the turn: a `user` entry the host
    itself wrote (`rowSource: "harness"`; a typed prompt has none) holding only one of its
    notes. A person who types the same words writes a prompt, not this."""
    if entry.get("type") != "user" or entry.get("rowSource") != "harness" or \
            entry.get("isMeta") or entry.get("isSidechain"):
        return False
    message = entry.get("message")
    content = message.get("content") if isinstance(message, dict) else None
    if isinstance(content, list) and len(content) == 1 and isinstance(content[0], dict) and \
            content[0].get("type") == "text":
        content = content[0].get("text")
    return content in INTERRUPTION_NOTES


def _closes_turn(entry: dict) -> bool:
    if entry.get("type") != "assistant" or entry.get("isSidechain") or \
            not isinstance(entry.get("uuid"), str):
        return False
    if entry.get("isApiErrorMessage"):
        return usage_limit_entry(entry)
    message = entry.get("message") or {}
    if isinstance(message, dict) and message.get("model") == SYNTHETIC_MODEL:
        return False  # the host's own words, such as a resumed session's first entry
    reason = message.get("stop_reason") if isinstance(message, dict) else None
    if reason is not None:
        return reason != "tool_use"
    content = message.get("content") if isinstance(message, dict) else None
    return not (isinstance(content, list) and any(
        isinstance(block, dict) and block.get("type") == "tool_use" for block in content))


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
    args = command_args(content)
    return args is not None and normalise(args) == objective


def command_args(content: str) -> str | None:
    """What a command entry's content holds from its first `<command-args>` to its last
    `</command-args>`: the last tag ends it, because the host writes the arguments raw, so
    an objective may itself hold `</command-args>`. None without both tags. (`str.find`
    rather than a regular expression: `re` costs every charging Stop a bare start.)"""
    start = content.find(_ARGS_OPEN)
    if start < 0:
        return None
    start += len(_ARGS_OPEN)
    end = content.rfind(_ARGS_CLOSE, start)
    return content[start:end] if end >= 0 else None


def _parse(data: bytes, offset: int, tokens: tuple[str, ...], chunk_type: type[Chunk]) -> Chunk:
    """The complete lines of `data` (read from `offset`) that hold one of `tokens` (a cheap
    filter before parsing), as a `chunk_type`."""
    complete = data.rfind(b"\n") + 1
    entries, starts, position = [], [], offset
    for raw in data[:complete].split(b"\n")[:-1]:
        start, position = position, position + len(raw) + 1
        line = raw.decode("utf-8", "replace")
        if not any(token in line for token in tokens):
            continue
        try:
            entry = fastjson.loads(line)
        except ValueError:
            continue
        if isinstance(entry, dict):
            entries.append(entry)
            starts.append(start)
    return chunk_type(entries, offset + complete, starts)


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
        with safeio.reader(path, "rb", follow_links=True) as handle:
            size = os.fstat(handle.fileno()).st_size
            if offset > size:  # the file was replaced or truncated: read it all again
                offset = 0
            handle.seek(offset)
            data = handle.read()
    except FileNotFoundError:
        return chunk_type([], offset)
    return _parse(data, offset, tokens, chunk_type)


def anchor(path: str | os.PathLike, start: int, end: int) -> dict | None:
    """What `read_anchored` checks later: the hash of bytes `start`..`end` (at most
    ANCHOR_SPAN of them, the last ones); None when the file is gone (the next read then
    starts where the last anchor ends, and finds out)."""
    start = max(start, end - ANCHOR_SPAN, 0)
    try:
        with safeio.reader(path, "rb", follow_links=True) as handle:
            handle.seek(start)
            data = handle.read(end - start)
    except FileNotFoundError:
        return None
    return {"start": start, "end": end, "sha256": sha256_hex(data)}


def read_anchored(path: str | os.PathLike, mark: dict, tokens: tuple[str, ...] = _INTERESTING,
                  chunk_type: type[Chunk] = Chunk) -> Chunk:
    """What the transcript gained after `mark["end"]`, once the anchored bytes are still
    there unchanged; `Unattributable` when the file is missing, shorter or rewritten.
    `tokens` and `chunk_type` are the host's, as for `read_lines`."""
    start, end = mark.get("start"), mark.get("end")
    if not (isinstance(start, int) and isinstance(end, int) and 0 <= start <= end):
        raise Unattributable("the session's transcript anchor is not forge's")
    try:
        with safeio.reader(path, "rb", follow_links=True) as handle:
            if os.fstat(handle.fileno()).st_size < end:
                raise Unattributable("the transcript is shorter than the part forge read "
                                     "(truncated or replaced)")
            handle.seek(start)
            data = handle.read()
    except FileNotFoundError:
        raise Unattributable("the transcript is missing") from None
    except OSError as exc:
        raise Unattributable(f"the transcript cannot be read ({exc.strerror})") from None
    if sha256_hex(data[:end - start]) != mark.get("sha256"):
        raise Unattributable("the transcript was rewritten where forge last read it")
    return _parse(data[end - start:], end, tokens, chunk_type)


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
    """The condition of the host's native goal if it still runs (native_goal.py's tail scan)."""
    from forge_runtime.goal.hosts.native_goal import running_goal as tail_scan

    return tail_scan(path)


def read_subagents(transcript_path: str, marks: dict) -> tuple[Tally, dict]:
    """The usage (usage.py) the session's subagent transcripts gained since `marks` (file
    name -> anchor, as `anchor` gives), and the new marks.

    A file forge read before must still hold the bytes it read: one that is gone, cut or
    rewritten raises `Unattributable`, as the main transcript does.
    """
    from forge_runtime.goal.budget.usage import (
        SUBAGENT_ANCHOR_SPAN,
        USAGE_TOKEN,
        Tally,
        subagent_dir,
    )

    directory = subagent_dir(transcript_path)
    try:
        names = sorted(name for name in os.listdir(directory) if name.endswith(".jsonl"))
    except FileNotFoundError:
        names = []
    except NotADirectoryError:
        raise Unattributable("the subagent transcripts' directory was replaced") \
            from None
    gone = set(marks) - set(names)
    if gone:
        raise Unattributable(f"subagent transcript {sorted(gone)[0]} is missing")
    tally, fresh = Tally(), {}
    for name in names:
        path = os.path.join(directory, name)
        mark = marks.get(name)
        if mark is None:
            chunk = read_lines(path, 0, (USAGE_TOKEN,), Chunk)
        else:
            try:
                chunk = read_anchored(path, mark, (USAGE_TOKEN,))
            except Unattributable as exc:
                raise Unattributable(f"subagent transcript {name}: {exc}") \
                    from None
        if mark is not None and chunk.end_offset == mark["end"]:
            fresh[name] = mark
            continue
        own = Tally({"last": (mark or {}).get("last")})
        for entry in chunk.entries:
            own.add_entry(entry)
        tally.merge(own)
        anchored = anchor(path, chunk.end_offset - SUBAGENT_ANCHOR_SPAN,
                                     chunk.end_offset) if chunk.end_offset else None
        if anchored is not None:
            fresh[name] = {**anchored, "last": own.last}
    return tally, fresh
