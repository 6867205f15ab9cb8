"""One model session on claude-agent-sdk that a step can talk to more than once.

Each `send` is one `query` that resumes the session the first one started, so a gate that
finds a reply wanting can ask the same session again, with everything it already read and
heard, instead of starting over. The session id is reported as soon as the host names it
(`on_session_id`), so an interrupted step can be resumed later.
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Callable

from forge_runtime.errors import EXIT_REFUSED, ForgeError

# How often the host retries an unreachable model before it gives up (its default is 10,
# with back-off: minutes of silence before a person learns the model cannot be reached).
RETRIES_ENV = "CLAUDE_CODE_MAX_RETRIES"
DEFAULT_RETRIES = "2"
_NO_KEY_WORDS = ("api key", "not logged in", "/login", "authentication", "invalid x-api-key",
                 "401")


class SdkSession:
    """A resumable claude-agent-sdk session; `options` is a `ClaudeAgentOptions`."""

    def __init__(self, options, *, resume: str | None = None,
                 on_session_id: Callable[[str], object] | None = None) -> None:
        self.options = options
        self.session_id = resume
        self.on_session_id = on_session_id

    async def send(self, prompt: str) -> str:
        """The session's final answer to `prompt`; raises `ForgeError` when the model fails."""
        from claude_agent_sdk import ClaudeSDKError, ResultMessage, SystemMessage, query

        env = dict(self.options.env or {})
        if RETRIES_ENV not in os.environ:
            env.setdefault(RETRIES_ENV, DEFAULT_RETRIES)
        options = dataclasses.replace(self.options, resume=self.session_id, env=env)
        final = None
        try:
            async for message in query(prompt=prompt, options=options):
                if isinstance(message, SystemMessage) and message.subtype == "init":
                    self._saw(message.data.get("session_id"))
                elif isinstance(message, ResultMessage):
                    self._saw(message.session_id)
                    final = message
        except ClaudeSDKError as exc:
            raise model_failure(str(exc)) from None
        if final is None:
            raise model_failure("the session ended without an answer")
        if final.is_error:
            raise model_failure(" ".join(filter(None, [final.result, *(final.errors or [])]))
                                or final.subtype)
        return final.result or ""

    def _saw(self, session_id: str | None) -> None:
        if session_id and session_id != self.session_id:
            self.session_id = session_id
            if self.on_session_id is not None:
                self.on_session_id(session_id)


def model_failure(detail: str) -> ForgeError:
    """One `Error:` + `Fix:` for a model that cannot be used: no key, or not reachable."""
    detail = " ".join(detail.split())
    detail = re.sub(r"^Claude Code returned an error result: |\s*\(exit code: \d+\)$", "",
                    detail)[:300]
    if any(word in detail.lower() for word in _NO_KEY_WORDS):
        return ForgeError(f"the model refused the session: no valid API key or login ({detail})",
                          "claude auth login", exit_code=EXIT_REFUSED, code="FORGE_MODEL_NO_KEY",
                          rationale="or set ANTHROPIC_API_KEY in this shell")
    return ForgeError(f"the model could not be reached ({detail})", "claude auth status",
                      exit_code=EXIT_REFUSED, code="FORGE_MODEL_UNREACHABLE",
                      rationale="check the network, or ANTHROPIC_BASE_URL if you set one")
