"""What Codex CLI's rollout file (`transcript_path`, JSON lines) says about goals and turns.

The same reader interface as transcript.py (Claude Code): `read_since`, `read_anchored`,
`follow`, a chunk with `turns()`, `last_turn`, `verdicts()`, `running_condition()`,
`person_set_goal()` and `after()`, and `running_goal(path)` for a tail scan, so the goal
core runs unchanged on either host.

Measured against Codex CLI 0.171.0 (tests/host/test_codex_*.py):
- Every line is `{"timestamp", "ordinal", "type", "payload"}`. Each turn starts with an
  `event_msg` of payload type `task_started` carrying its `turn_id` (the Stop hook's input
  carries the same `turn_id`) and `turn_attribution.turn_trigger`: `"goal"` for a turn the
  native goal started by itself.
- A person's `/goal X` in the TUI fires no hook. The host writes a `response_item` user
  message whose only text is `<codex_internal_context source="user_goal">` with
  `User set the goal: "X"`, tagged `content_item_kinds: ["user.goal"]` and provenance
  `harness`, then an `event_msg` `thread_goal_updated` whose `goal` holds the objective and
  `status: "active"`. `/goal clear` writes the same kind of message with
  `User cleared the goal.`; `/goal pause` one with `User set goal status: "paused".` and a
  `thread_goal_updated` with that status; replacing a goal writes the clear, then the set.
- A goal the model creates with its `create_goal` tool leaves only the `function_call`
  (name `create_goal`): no `user_goal` message, no `thread_goal_updated`; its turns still
  start with `turn_trigger: "goal"`. So only the host's own `user_goal` message activates.
- Codex has no evaluator: the model ends its goal with `update_goal` (`complete`, or
  `blocked`), and Codex then starts no further goal turn. That leaves no
  `thread_goal_updated` either, only the host's `function_call_output` for the call, whose
  `output` is JSON holding the goal as it now stands (`{"goal": {"objective", "status",
  ...}, ...}`); `get_goal` answers in the same shape. Those are the verdicts forge applies.
- A Stop hook's `{"decision": "block", "reason": R}` continues the turn under the same
  `turn_id`: Codex writes a `response_item` user message whose text is
  `<hook_prompt hook_run_id="stop:...">R</hook_prompt>`, the model answers, and the next
  Stop comes with `stop_hook_active: true`. forge counts each such continuation as a turn.
- Who started a turn is its `turn_trigger`: `"user"` for a person's prompt (or `codex
  exec`'s), `"goal"` for the goal loop's own turns (a goal a person set, or one the model
  made with `create_goal`); a Stop hook's continuation is forge's. Only `"user"` is a
  person's (`Chunk.turn_origins`).
- A usage limit (a 429 whose body is a `usage_limit_reached` error, measured on 0.171.0
  with an API key) ends the turn: its `task_complete` event carries `error.codex_error_info:
  "usage_limit_exceeded"`, no Stop hook fires, and the goal store's status becomes
  `usage_limited`. Codex does not continue the goal by itself after the reset (measured:
  none in 80 s past it). A person's next prompt is the event that charges the limited turn
  (and is blocked); a person's `/goal resume` fires no hook (measured: its turn ran, and its
  Stop charged both and ended the goal), so its tool calls are denied (goal/events/tool_call.py).
- Each turn's `turn_context` entry carries the sandbox it runs in, `sandbox_policy.type`
  (`workspace-write`, `read-only`, `danger-full-access`), whatever set it: config.toml,
  `--sandbox`, `--dangerously-bypass-approvals-and-sandbox`. The hook input's
  `permission_mode` does not tell (`bypassPermissions` in both).
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable

from forge_runtime import safeio
from forge_runtime.goal.hosts import transcript
from forge_runtime.goal.hosts.transcript import CLEARED, HOST, PERSON, UNKNOWN, Turn, Verdict
from forge_runtime.goal.store.objective import normalise
from forge_runtime.host_contract import codex as contract

HOST_CONTEXT = contract.GOAL_CONTEXT
USAGE_LIMIT_ERROR = contract.USAGE_LIMIT_ERROR  # a `task_complete` error: a usage limit
HOOK_PROMPT = contract.HOOK_PROMPT
_SET, _CLEARED = contract.GOAL_SET, contract.GOAL_CLEARED
_TURN_CONTEXT = f'"{contract.TURN_CONTEXT}"'
_INTERESTING = (contract.TASK_STARTED, contract.GOAL_UPDATED, "user_goal", "create_goal",
                "threadId", "goal_objective", contract.TOKEN_COUNT, _TURN_CONTEXT,
                HOOK_PROMPT, USAGE_LIMIT_ERROR)
# what carries tokens: `token_count` events, and each turn's model in its `turn_context`
USAGE_TOKENS = (contract.TOKEN_COUNT, _TURN_CONTEXT)
_ENDED = contract.GOAL_ENDED  # {status: transcript's MET or IMPOSSIBLE}
# any status the store does not keep running ends the goal (UNKNOWN when not in _ENDED)
_NOT_ENDED = contract.GOAL_NOT_ENDED
_HOST_BUDGET = contract.GOAL_HOST_BUDGET
TAIL_BYTES = 1 << 20


def _payload(entry: dict, kind: str, payload_type: str) -> dict | None:
    payload = entry.get("payload")
    if entry.get("type") == kind and isinstance(payload, dict) and \
            payload.get("type") == payload_type:
        return payload
    return None


def goal_update(entry: dict) -> dict | None:
    """The goal of a `thread_goal_updated` event, or None."""
    payload = _payload(entry, contract.EVENT_MSG, contract.GOAL_UPDATED)
    goal = payload.get("goal") if payload else None
    return goal if isinstance(goal, dict) else None


def goal_tool_state(entry: dict) -> dict | None:
    """The goal a host goal tool (`update_goal`, `get_goal`) reported in its output, or None."""
    payload = _payload(entry, contract.RESPONSE_ITEM, contract.FUNCTION_CALL_OUTPUT)
    output = payload.get("output") if payload else None
    if not isinstance(output, str) or not output.startswith("{"):
        return None
    try:
        goal = json.loads(output).get("goal")
    except (ValueError, AttributeError):
        return None
    return goal if isinstance(goal, dict) and "threadId" in goal else None


def goal_state(entry: dict) -> dict | None:
    """The goal as an entry says it stands: a goal update event or a goal tool's output."""
    return goal_update(entry) or goal_tool_state(entry)


def started_turn(entry: dict) -> dict | None:
    """The `task_started` payload that opens a turn, or None."""
    return _payload(entry, contract.EVENT_MSG, contract.TASK_STARTED)


def host_goal_message(entry: dict) -> tuple[str, str] | None:
    """(message id, text) of the host's own `user_goal` context message, or None.

    Only the host writes it: a `response_item` user message tagged `user.goal` whose text
    opens with the host's context tag (a model's words are assistant messages or tool
    outputs, never this)."""
    payload = _payload(entry, contract.RESPONSE_ITEM, contract.MESSAGE)
    if payload is None or payload.get("role") != "user":
        return None
    metadata = payload.get("internal_chat_message_metadata_passthrough") or {}
    if metadata.get("content_item_kinds") != contract.GOAL_MESSAGE_KINDS:
        return None
    parts = payload.get("content") or []
    text = parts[0].get("text") if len(parts) == 1 and isinstance(parts[0], dict) else None
    if not isinstance(text, str) or not text.startswith(HOST_CONTEXT):
        return None
    return str(payload.get("id")), text


def hook_prompt(entry: dict) -> str | None:
    """The identity of a Stop hook's continuation: the id of the `response_item` user
    message Codex writes with the hook's reason (`<hook_prompt hook_run_id=...>`), or None.
    A model's words never take this shape (they are assistant messages or tool outputs)."""
    payload = _payload(entry, contract.RESPONSE_ITEM, contract.MESSAGE)
    if payload is None or payload.get("role") != "user" or not isinstance(payload.get("id"),
                                                                          str):
        return None
    parts = payload.get("content") or []
    text = parts[0].get("text") if parts and isinstance(parts[0], dict) else None
    if not isinstance(text, str) or not text.startswith(HOOK_PROMPT):
        return None
    return "hook-prompt:" + payload["id"]


def spent_tokens(entry: dict) -> tuple[str, dict] | None:
    """(fingerprint, tokens) of a `token_count` event: its `last_token_usage` in usage.py's
    fields. OpenAI's `input_tokens` include the cached (and cache-written) ones, so fresh
    input is what is left; `output_tokens` include reasoning. The fingerprint is the running
    total, so a repeated event for the same response is counted once."""
    payload = _payload(entry, contract.EVENT_MSG, contract.TOKEN_COUNT)
    info = payload.get("info") if payload else None
    last = info.get("last_token_usage") if isinstance(info, dict) else None
    if not isinstance(last, dict):
        return None

    def count(key: str) -> int:
        value = last.get(key)
        return value if isinstance(value, int) and value > 0 else 0

    cached, written = count("cached_input_tokens"), count("cache_write_input_tokens")
    spent = {"input": max(count("input_tokens") - cached - written, 0),
             "output": count("output_tokens"), "cache_creation": written, "cache_read": cached}
    return json.dumps(info.get("total_token_usage"), sort_keys=True), spent


def turn_model(entry: dict) -> str | None:
    """The model a `turn_context` entry names for its turn, or None."""
    payload = entry.get("payload")
    if entry.get("type") != contract.TURN_CONTEXT or not isinstance(payload, dict):
        return None
    named = payload.get("model")
    return named if isinstance(named, str) and named else None


class Chunk(transcript.Chunk):
    """What was appended to a Codex rollout between two offsets.

    A response's `token_count` does not name its model; the turn's `turn_context` does,
    once, where the turn opens. A read that starts inside a turn (the mid-turn count's
    second call, a Stop that a block continued) is told that model as `model_before` by
    whoever read up to there (the binding, the cursor), or its responses would be priced
    as an unknown model, the dearest of the host's."""

    OPENS_TURNS = True

    def responses(self) -> list[tuple[int, str, str, dict]]:
        """(index, fingerprint, model, tokens) of every `token_count` event; the model is
        the one the turn's `turn_context` names."""
        found, model = [], self.model_before or "unknown"
        for index, entry in enumerate(self.entries):
            named = turn_model(entry)
            if named is not None:
                model = named
                continue
            spent = spent_tokens(entry)
            if spent is not None:
                found.append((index, spent[0], model, spent[1]))
        return found

    def _model_at(self, end: int) -> str | None:
        """The model in force after the first `end` entries."""
        for entry in reversed(self.entries[:end]):
            named = turn_model(entry)
            if named is not None:
                return named
        return self.model_before

    @property
    def model_after(self) -> str | None:
        return self._model_at(len(self.entries))

    def after(self, index: int) -> Chunk:
        chunk = super().after(index)
        chunk.model_before = self._model_at(index + 1)
        return chunk

    def extended(self, more: transcript.Chunk) -> Chunk:
        chunk = super().extended(more)
        chunk.model_before = self.model_before
        return chunk

    def turns(self) -> list[Turn]:
        """Every turn the chunk shows, oldest first, by its `task_started` entry, and every
        continuation a Stop hook's block made inside one (its `hook_prompt` message): at a
        Stop, each but the newest has finished (Codex starts one turn at a time). A block
        continues Codex's turn under the same `turn_id` (measured), so without this a goal a
        Stop hook keeps going would run uncounted."""
        found = []
        for index, entry in enumerate(self.entries):
            started = started_turn(entry)
            if started is not None and isinstance(started.get("turn_id"), str):
                found.append(Turn(started["turn_id"], index))
                continue
            prompted = hook_prompt(entry)
            if prompted is not None:
                found.append(Turn(prompted, index))
        return found

    def usage_limited(self) -> list[str]:
        """The turns the chunk shows ended by a usage limit: Codex's own `task_complete`
        event for the turn says `codex_error_info: "usage_limit_exceeded"`."""
        found = []
        for entry in self.entries:
            payload = _payload(entry, contract.EVENT_MSG, contract.TASK_COMPLETE)
            error = payload.get("error") if payload is not None else None
            if isinstance(error, dict) and \
                    error.get("codex_error_info") == USAGE_LIMIT_ERROR and \
                    isinstance(payload.get("turn_id"), str):
                found.append(payload["turn_id"])
        return found

    def turn_origins(self, carried: dict | None = None) -> tuple[dict[str, str], dict]:
        """Who started each turn the chunk shows: PERSON for a `task_started` whose trigger
        is `"user"`, HOST for any other (the goal loop, a Stop hook's continuation); the
        newest is the one open at the chunk's end (Codex runs one turn at a time)."""
        turns = self.turns()
        origins = {turn.uuid: self.prompt_origin(self.entries[turn.index]) or HOST
                   for turn in turns}
        if not turns:
            return origins, dict(carried) if isinstance(carried, dict) else {}
        return origins, {"origin": origins[turns[-1].uuid], "open": True}

    def prompt_origin(self, entry: dict) -> str | None:
        """PERSON for a turn started by a person's prompt, HOST for one the goal loop or a
        Stop hook's block started, None for an entry that starts no turn."""
        started = started_turn(entry)
        if started is not None:
            trigger = (started.get("turn_attribution") or {}).get("turn_trigger")
            return PERSON if contract.TURN_TRIGGERS.get(trigger) == PERSON else HOST
        return HOST if hook_prompt(entry) is not None else None

    def verdicts(self) -> list[Verdict]:
        """The host's ends of its goal: complete (met), blocked (impossible), cleared, and
        any status it does not keep running (unknown)."""
        found = []
        for index, entry in enumerate(self.entries):
            goal = goal_state(entry)
            message = host_goal_message(entry)
            if goal is not None and goal.get("status") not in _NOT_ENDED:
                outcome, condition = _ENDED.get(goal.get("status"), UNKNOWN), \
                    goal.get("objective")
            elif message is not None and _CLEARED in message[1]:
                outcome, condition = CLEARED, None
            else:
                continue
            found.append(Verdict(outcome, condition if isinstance(condition, str) else None,
                                 index))
        return found

    def running_condition(self) -> str | None:
        for entry in reversed(self.entries):
            goal = goal_state(entry)
            if goal is not None:
                return _running(goal)
        return None

    def person_set_goal(self, prompt_id: str, objective: str | None) -> int | None:
        """Where the host set `objective` for the person's `/goal` (its `user_goal` message
        id is `prompt_id`): the index of the `thread_goal_updated` that follows it."""
        wanted = None if objective is None else normalise(objective)
        armed = False
        for index, entry in enumerate(self.entries):
            message = host_goal_message(entry)
            if message is not None:
                armed = message[0] == prompt_id and _SET in message[1]
                continue
            goal = goal_update(entry)
            if armed and goal is not None:
                objective_set = _running(goal)
                if objective_set is not None and \
                        (wanted is None or normalise(objective_set) == wanted):
                    return index
                armed = False
        return None

    def newest_person_goal(self) -> tuple[str, str] | None:
        """(message id, objective) of the newest goal a person set in this chunk, if the
        host confirmed it; the Codex adapter turns it into a pending activation."""
        for index in range(len(self.entries) - 1, -1, -1):
            message = host_goal_message(self.entries[index])
            if message is None or _SET not in message[1]:
                continue
            for entry in self.entries[index + 1:]:
                goal = goal_update(entry)
                if goal is not None:
                    objective = _running(goal)
                    return (message[0], objective) if objective is not None else None
            return None
        return None

    def person_goal_index(self, message_id: str) -> int | None:
        """The index of the person's `/goal` message `message_id` in this chunk, or None."""
        for index, entry in enumerate(self.entries):
            message = host_goal_message(entry)
            if message is not None and message[0] == message_id:
                return index
        return None

    def unconfirmed_goal(self, turn_id: str) -> str | None:
        """The objective of the native goal that started turn `turn_id`, when this chunk
        shows no person setting it (the model's own `create_goal`); None when a person's
        prompt or `codex exec` started the turn."""
        for entry in self.entries:
            started = started_turn(entry)
            if started is not None and started.get("turn_id") == turn_id:
                trigger = (started.get("turn_attribution") or {}).get("turn_trigger")
                if trigger != contract.GOAL_TRIGGER:
                    return None
                return self._pursued_objective() or "the goal Codex is pursuing"
        return None

    def _pursued_objective(self) -> str | None:
        """The newest objective Codex gave the model (`goal_objective`) or the model gave
        `create_goal`."""
        for entry in reversed(self.entries):
            payload = entry.get("payload") if isinstance(entry.get("payload"), dict) else {}
            if payload.get("type") == "function_call_output" and \
                    payload.get("name") == "goal_objective":
                objective = payload.get("output")
            elif payload.get("type") == "function_call" and payload.get("name") == "create_goal":
                try:
                    objective = json.loads(payload.get("arguments") or "{}").get("objective")
                except (ValueError, AttributeError):
                    continue
            else:
                continue
            if isinstance(objective, str) and objective.strip():
                return objective
        return None


def _running(goal: dict) -> str | None:
    objective = goal.get("objective")
    return objective if goal.get("status") == contract.GOAL_RUNNING and \
        isinstance(objective, str) else None


def read_since(path: str | os.PathLike, offset: int = 0) -> Chunk:
    """The complete lines appended after `offset` that can matter to goals (see
    transcript.read_since: a missing file is empty, a half-written line waits)."""
    return transcript.read_lines(path, offset, _INTERESTING, Chunk)


def read_anchored(path: str | os.PathLike, mark: dict) -> Chunk:
    """What the rollout gained after a bound session's anchor (see transcript.read_anchored:
    a rollout that is gone, cut or rewritten there raises `Unattributable`)."""
    return transcript.read_anchored(path, mark, _INTERESTING, Chunk)


def read_tail(path: str | os.PathLike, tokens: tuple[str, ...] = _INTERESTING) -> Chunk:
    """The goal-relevant entries of the rollout's last TAIL_BYTES: what an unbound session's
    Stop looks at (a goal is confirmed at its first Stop, so it is always near the end)."""
    try:
        with safeio.reader(path, "rb", follow_links=True) as handle:
            size = os.fstat(handle.fileno()).st_size
            start = 0
            if size > TAIL_BYTES:
                handle.seek(size - TAIL_BYTES)
                handle.readline()  # the rest of a line cut in two is no entry
                start = handle.tell()
    except OSError:
        return Chunk([], 0)
    return transcript.read_lines(path, start, tokens, Chunk)


def sandbox_modes(path: str | os.PathLike) -> list[str]:
    """The sandbox of every turn in the rollout's tail, oldest first (`turn_context`'s
    `sandbox_policy.type`); an entry in another shape counts as no sandbox at all."""
    modes = []
    for entry in read_tail(path, ("sandbox_policy",)).entries:
        payload = entry.get("payload")
        if entry.get("type") != contract.TURN_CONTEXT or not isinstance(payload, dict):
            continue
        policy = payload.get("sandbox_policy")
        mode = policy.get("type") if isinstance(policy, dict) else None
        modes.append(mode if isinstance(mode, str) else "unknown")
    return modes


def follow(path: str | os.PathLike, chunk: Chunk, wanted: Callable[[Chunk], object],
           timeout: float | None = None) -> Chunk:
    """`chunk` extended with what Codex appends until `wanted(chunk)` holds or time is up."""
    return transcript.follow(path, chunk, wanted, timeout, read_since)


def running_goal(path: str | os.PathLike) -> str | None:
    """The objective of Codex's native goal if the rollout's newest goal event says it may
    still run (active, or a status forge does not know: "" when it names no objective),
    else None; reads only the tail."""
    for entry in reversed(read_tail(path).entries):
        goal = goal_state(entry)
        if goal is None:
            continue
        status = goal.get("status")
        if status != "active" and (status in _NOT_ENDED or status in _ENDED or
                                   status in _HOST_BUDGET):
            return None
        objective = goal.get("objective")
        return objective if isinstance(objective, str) else ""
    return None


def plan_reading(path: str | os.PathLike) -> dict | None:
    """The plan windows the rollout's tail reports, as Codex's `rate_limits` (plan.current
    turns them into a reading; codex_plan.py says what holds them to the host's figures)."""
    from forge_runtime.goal.hosts import codex_plan

    return codex_plan.plan_reading(path)
