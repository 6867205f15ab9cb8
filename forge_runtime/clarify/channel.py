"""`HumanChannel`: the in-process MCP server through which a model asks a person.

    channel = HumanChannel(max_asks=5, timeout_s=600, log_path=..., on_question=show)
    options = ClaudeAgentOptions(mcp_servers={"human": channel.server()},
                                 allowed_tools=["mcp__human__ask"], ...)

The model calls `mcp__human__ask` (a question, optional options) and `mcp__human__inbox`
(what the person sent meanwhile). The person's side is any code that calls `answer()`,
`decline()` or `send()`, from any thread: a terminal, a web page, a test.

A question the person does not answer must not stall a run for hours, and a model must not
stop working because nobody is there. So a timeout, a used-up quota and a person's decline
all tell the model the same: decide yourself, record the question and your assumption under
Unknowns and assumptions, do not ask again, do not stop. An empty question is refused and
costs no quota. The dialogue is appended to `log_path` (JSON lines), so it stays on disk
and out of every later step's context. A UI callback that raises is recorded in
`ui_errors` and never ends the run.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import json
import threading
from collections import namedtuple
from collections.abc import Callable
from pathlib import Path

from forge_runtime import safeio
from forge_runtime.clarify.brief import now_stamp
from forge_runtime.clarify.store import amend
from forge_runtime.roots import root_of_forge_path

SERVER_NAME = "human"
ASK_TOOL = f"mcp__{SERVER_NAME}__ask"
INBOX_TOOL = f"mcp__{SERVER_NAME}__inbox"

ANSWERED, TIMED_OUT, DECLINED, OVER_QUOTA = "answered", "timeout", "declined", "over_quota"
UNLIMITED = -1
DEFAULT_TIMEOUT_S = 1800.0

_DECIDE = ("Decide yourself: record this question and the assumption you make in its place "
           "under 'Unknowns and assumptions' in the brief, do not ask it again, and do not "
           "stop.")
TIMEOUT_TEXT = "Nobody answered in time. " + _DECIDE
QUOTA_TEXT = "No questions are left for this step. " + _DECIDE
DECLINED_TEXT = "The person left this question to you. " + _DECIDE

ASK_DESCRIPTION = ("Ask the person one question and wait for the answer. Offer `options` when "
                   "there are a few likely answers. Ask only what the project itself cannot "
                   "tell you, most decisive first.")
INBOX_DESCRIPTION = "Read what the person sent while you worked (empty when nothing came)."
ASK_SCHEMA = {
    "type": "object",
    "properties": {
        "question": {"type": "string", "description": "one question, in words"},
        "options": {"type": "array", "items": {"type": "string"},
                    "description": "likely answers; the person may still answer freely"},
    },
    "required": ["question"],
}

Question = namedtuple("Question", "text options number remaining")
"""A question put to the person: its text, options, which question of the step it is (1..)
and how many are left after it (-1: no limit)."""


class HumanChannel:
    """Questions from a model to a person, with a quota, a timeout and a log (see module doc).

    `max_asks`: None for no limit (`remaining` is then -1); 0 forbids asking.
    `timeout_s`: how long a question waits; None waits for ever, <= 0 answers at once.
    `amend_path`: a frozen brief; what the person `send`s is added to its Amendments.
    `on_question(question)` and `on_settled(question, outcome, answer)`: the UI's callbacks.
    """

    def __init__(self, *, max_asks: int | None = None,
                 timeout_s: float | None = DEFAULT_TIMEOUT_S,
                 log_path: str | Path | None = None, amend_path: str | Path | None = None,
                 on_question: Callable[[Question], object] | None = None,
                 on_settled: Callable[[Question, str, str | None], object] | None = None,
                 timeout_text: str = TIMEOUT_TEXT, quota_text: str = QUOTA_TEXT,
                 declined_text: str = DECLINED_TEXT) -> None:
        if max_asks is not None and max_asks < 0:
            raise ValueError("max_asks is None (no limit) or a count >= 0")
        self.max_asks = max_asks
        self.timeout_s = timeout_s
        self.log_path = Path(log_path) if log_path else None
        self.amend_path = Path(amend_path) if amend_path else None
        self.on_question = on_question
        self.on_settled = on_settled
        self.idle_texts = {TIMED_OUT: timeout_text, OVER_QUOTA: quota_text,
                           DECLINED: declined_text}
        self.asked = 0
        self.ui_errors: list[BaseException] = []
        self._lock = threading.Lock()
        self._pending: tuple[Question, concurrent.futures.Future] | None = None
        self._inbox: list[str] = []
        self._one_at_a_time: asyncio.Lock | None = None

    # -- the person's side (any thread) ----------------------------------------------------

    @property
    def remaining(self) -> int:
        """Questions left: -1 with no limit."""
        with self._lock:
            return self._remaining()

    @property
    def pending(self) -> Question | None:
        """The question waiting for the person, or None."""
        with self._lock:
            return self._pending[0] if self._pending else None

    def answer(self, text: str) -> bool:
        """Answer the waiting question; False when none waits (it may just have timed out)."""
        return self._settle(ANSWERED, str(text))

    def decline(self) -> bool:
        """Leave the waiting question to the model; False when none waits."""
        return self._settle(DECLINED, None)

    def send(self, text: str) -> None:
        """Something the person says unasked; the model reads it with `inbox`."""
        text = str(text).strip()
        if not text:
            return
        with self._lock:
            self._inbox.append(text)
        self._log({"kind": "inbox", "text": text})
        if self.amend_path is not None and self.amend_path.exists():
            self._guarded(amend, self.amend_path, text)

    # -- the model's side (the tools) ------------------------------------------------------

    async def ask(self, question: str, options: list | None = None) -> dict:
        """The `ask` tool: wait for the person's answer, or tell the model to decide."""
        text = str(question or "").strip()
        if not text:
            return _result("Error: the question is empty; ask it in words (this cost no "
                           "question).", is_error=True)
        choices = [str(option).strip() for option in (options or []) if str(option).strip()]
        if self._one_at_a_time is None:
            self._one_at_a_time = asyncio.Lock()
        async with self._one_at_a_time:
            return await self._ask(text, choices)

    async def _ask(self, text: str, choices: list[str]) -> dict:
        with self._lock:
            over = self._remaining() == 0
            if not over:
                self.asked += 1
            asked = Question(text, tuple(choices), self.asked, self._remaining())
        if over:
            return self._idle(asked, OVER_QUOTA)
        if self.timeout_s is not None and self.timeout_s <= 0:  # shown, never waited for
            self._guarded(self.on_question, asked)
            return self._idle(asked, TIMED_OUT)
        waiting: concurrent.futures.Future = concurrent.futures.Future()
        with self._lock:
            self._pending = (asked, waiting)
        self._guarded(self.on_question, asked)
        try:
            outcome, answer = await asyncio.wait_for(asyncio.wrap_future(waiting),
                                                     self.timeout_s)
        except TimeoutError:
            outcome, answer = TIMED_OUT, None
        finally:
            with self._lock:
                self._pending = None
        if outcome != ANSWERED:
            return self._idle(asked, outcome)
        self._record(asked, ANSWERED, answer)
        return _result(json.dumps({"outcome": ANSWERED, "answer": answer,
                                   "remaining": asked.remaining}, ensure_ascii=False))

    async def inbox(self) -> dict:
        """The `inbox` tool: what the person sent since the last look, oldest first."""
        with self._lock:
            messages, self._inbox = self._inbox, []
        return _result(json.dumps({"messages": messages}, ensure_ascii=False))

    def server(self):
        """The claude-agent-sdk MCP server `human` with the tools `ask` and `inbox`."""
        from claude_agent_sdk import create_sdk_mcp_server, tool

        @tool("ask", ASK_DESCRIPTION, ASK_SCHEMA)
        async def ask(args: dict) -> dict:
            return await self.ask(args.get("question", ""), args.get("options"))

        @tool("inbox", INBOX_DESCRIPTION, {"type": "object", "properties": {}})
        async def inbox(args: dict) -> dict:
            return await self.inbox()

        return create_sdk_mcp_server(SERVER_NAME, tools=[ask, inbox])

    # -- inside ----------------------------------------------------------------------------

    def _remaining(self) -> int:
        if self.max_asks is None:
            return UNLIMITED
        return max(0, self.max_asks - self.asked)

    def _settle(self, outcome: str, answer: str | None) -> bool:
        with self._lock:
            if self._pending is None or self._pending[1].done():
                return False
            waiting = self._pending[1]
            try:
                waiting.set_result((outcome, answer))
            except concurrent.futures.InvalidStateError:  # timed out in between
                return False
            return True

    def _idle(self, asked: Question, outcome: str) -> dict:
        self._record(asked, outcome, None)
        return _result(json.dumps({"outcome": outcome, "instruction": self.idle_texts[outcome],
                                   "remaining": asked.remaining}, ensure_ascii=False))

    def _record(self, asked: Question, outcome: str, answer: str | None) -> None:
        self._log({"kind": "question", "number": asked.number, "question": asked.text,
                   "options": list(asked.options), "outcome": outcome, "answer": answer})
        self._guarded(self.on_settled, asked, outcome, answer)

    def _log(self, entry: dict) -> None:
        if self.log_path is None:
            return
        line = json.dumps({"at": now_stamp(), **entry}, ensure_ascii=False) + "\n"
        with self._lock:  # never through a link below the project, never into a FIFO
            safeio.append(self.log_path, line.encode("utf-8"),
                          root_of_forge_path(self.log_path), create_dirs=True)

    def _guarded(self, callback, *args) -> None:
        """Run a UI callback; what it raises is kept in `ui_errors`, never raised here."""
        if callback is None:
            return
        try:
            callback(*args)
        except Exception as exc:
            self.ui_errors.append(exc)


def _result(text: str, *, is_error: bool = False) -> dict:
    result: dict = {"content": [{"type": "text", "text": text}]}
    if is_error:
        result["is_error"] = True
    return result


def dialogue(log_path: str | Path) -> list[dict]:
    """The entries of a dialogue log, oldest first (a line cut short is skipped)."""
    try:
        lines = safeio.read_text(log_path, root_of_forge_path(log_path)).splitlines()
    except FileNotFoundError:
        return []
    entries = []
    for line in lines:
        try:
            entries.append(json.loads(line))
        except ValueError:
            continue
    return entries
