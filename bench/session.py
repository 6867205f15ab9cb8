"""A host session as forge's hooks see it: host-shaped events, and a transcript on disk.

The transcript entries follow what Claude Code 2.1.332 writes (the host notes, and
forge_runtime/goal/hosts/transcript.py which reads them): a person's `/goal` leaves a command
entry and a `Goal set:` reply; each turn adds tool calls, tool results and a closing
assistant entry; each Stop adds the goal evaluator's feedback and verdict. Entries carry
realistic bulk (a few KB per turn), so a 2,000-turn session has a transcript of the size a
real one would, and any cost that grows with the transcript shows up in the bench.

Setup drives forge in-process through its own hook functions (`events.on_prompt`,
`events.on_stop`): building a 2,000-turn ledger through 2,000 hook processes would take
minutes. The measured runs always go through the real launcher.
"""

from __future__ import annotations

import contextlib
import json
import os
import uuid
from pathlib import Path

from bench.workspace import Workspace

_FILLER = ("Ran the tests again; three failures remain in the parser module, all about "
           "trailing commas. Next I will read the tokenizer and fix the comma handling. ")


@contextlib.contextmanager
def hook_environment(space: Workspace):
    """The environment the host gives hooks, set in this process while setup drives forge."""
    wanted = {"CLAUDE_PROJECT_DIR": str(space.root),
              "CLAUDE_PLUGIN_ROOT": str(space.plugin_root),
              "XDG_STATE_HOME": str(space.state_home)}
    saved = {name: os.environ.get(name) for name in wanted}
    os.environ.update(wanted)
    try:
        yield
    finally:
        for name, value in saved.items():
            if value is None:
                os.environ.pop(name, None)
            else:
                os.environ[name] = value


def _response(message_id: str, content: list[dict], stop_reason: str) -> dict:
    """An assistant message as the host records it, with the usage of a long session."""
    return {"id": message_id, "model": "claude-opus-5-5", "role": "assistant",
            "stop_reason": stop_reason, "content": content, "usage": {
                "input_tokens": 6, "output_tokens": 420, "cache_creation_input_tokens": 1800,
                "cache_read_input_tokens": 96000, "service_tier": "standard"}}


class HostSession:
    """One session: its id, its transcript, and the events its hooks receive."""

    def __init__(self, space: Workspace, session_id: str | None = None) -> None:
        self.space = space
        self.id = session_id or str(uuid.uuid4())
        self.transcript: Path = space.transcript(self.id)
        self.prompt_id = str(uuid.uuid4())
        self.last_uuid: str | None = None

    def _append(self, entry: dict) -> dict:
        entry = {"parentUuid": self.last_uuid, "uuid": str(uuid.uuid4()),
                 "sessionId": self.id, "cwd": str(self.space.root), **entry}
        self.last_uuid = entry["uuid"]
        with self.transcript.open("a", encoding="utf-8") as handle:
            handle.write(json.dumps(entry) + "\n")
        return entry

    def event(self, name: str, **fields) -> dict:
        return {"session_id": self.id, "transcript_path": str(self.transcript),
                "cwd": str(self.space.root), "prompt_id": self.prompt_id,
                "permission_mode": "default", "effort": {"level": "medium"},
                "hook_event_name": name, **fields}

    def stop_event(self, continuation: bool = True) -> dict:
        """A Stop. Turns of a native `/goal` run after the first are continuations (the
        host sets `stop_hook_active`); the first Stop of an ordinary prompt is not."""
        return self.event("Stop", stop_hook_active=continuation,
                          last_assistant_message="working", background_tasks=[],
                          session_crons=[])

    # -- what the host writes -----------------------------------------------------------

    def goal_prompt(self, objective: str) -> dict:
        """A person types `/goal <objective>`: the UserPromptSubmit event (host writes later)."""
        self.prompt_id = str(uuid.uuid4())
        return self.event("UserPromptSubmit", prompt=f"/goal {objective}")

    def host_sets_goal(self, objective: str) -> None:
        """What the host appends after UserPromptSubmit for a person's `/goal`."""
        self._append({"type": "attachment", "attachment": {
            "type": "goal_status", "met": False, "sentinel": True, "condition": objective}})
        command = self._append({"type": "user", "promptId": self.prompt_id, "message": {
            "role": "user", "content": "<command-name>/goal</command-name>\n"
            "<command-message>goal</command-message>\n"
            f"<command-args>{objective}</command-args>"}})
        self._append({"type": "system", "subtype": "local_command",
                      "parentUuid": command["uuid"],
                      "content": f"<local-command-stdout>Goal set: {objective}"
                                 "</local-command-stdout>"})

    def model_turn(self, number: int) -> None:
        """One turn of work: a tool call and its result, then the closing assistant entry.

        As Claude Code 2.1.332 writes them: each response carries its model and usage, and
        the first is split over two entries (text, tool call) sharing its message id."""
        call, first = f"toolu_{uuid.uuid4().hex[:24]}", f"msg_{uuid.uuid4().hex[:24]}"
        for block in ({"type": "text", "text": _FILLER * 2},
                      {"type": "tool_use", "id": call, "name": "Bash",
                       "input": {"command": "pytest -q tests/test_parser.py"}}):
            self._append({"type": "assistant", "message": _response(first, [block], "tool_use")})
        self._append({"type": "user", "message": {"role": "user", "content": [
            {"type": "tool_result", "tool_use_id": call,
             "content": f"turn {number}: 3 failed, 41 passed\n" + _FILLER * 6}]}})
        self._append({"type": "assistant", "message": _response(
            f"msg_{uuid.uuid4().hex[:24]}", [{"type": "text", "text": f"Turn {number} done. "
                                              + _FILLER}], "end_turn")})

    def mid_turn(self, size: int) -> None:
        """About `size` bytes of one turn still running: tool calls and their results, each
        call a response with usage, and no closing entry yet."""
        start = self.transcript.stat().st_size
        number = 0
        while self.transcript.stat().st_size - start < size:
            number += 1
            call = f"toolu_{uuid.uuid4().hex[:24]}"
            self._append({"type": "assistant", "message": _response(
                f"msg_{uuid.uuid4().hex[:24]}", [{"type": "tool_use", "id": call,
                                                  "name": "Bash", "input": {
                                                      "command": f"pytest -q -k case{number}"}}],
                "tool_use")})
            self._append({"type": "user", "message": {"role": "user", "content": [
                {"type": "tool_result", "tool_use_id": call, "content": _FILLER * 40}]}})

    def asks_for(self, call: str, name: str, tool_input: dict) -> None:
        """The response that asks for tool call `call`, as the host writes it before that
        call's PreToolUse (forge's budget check waits for it: goal/events/tool_call.py)."""
        self._append({"type": "assistant", "message": _response(
            f"msg_{uuid.uuid4().hex[:24]}", [{"type": "tool_use", "id": call, "name": name,
                                              "input": tool_input}], "tool_use")})

    def evaluator_says_not_met(self, objective: str) -> None:
        """What the host appends around a Stop while its native goal is unmet."""
        self._append({"type": "user", "isMeta": True, "message": {
            "role": "user", "content": f"Stop hook feedback:\n[{objective}]: not met yet"}})
        self._append({"type": "attachment", "attachment": {
            "type": "goal_status", "met": False, "condition": objective,
            "reason": "three tests still fail"}})
        self._append({"type": "system", "subtype": "stop_hook_summary", "content": ""})
