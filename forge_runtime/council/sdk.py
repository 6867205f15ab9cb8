"""One council member's answer through claude-agent-sdk, held to its read-only role.

`allowed_tools` only pre-approves tools in an SDK session; `whitelist_guard` (the plugin
guard's own rules, in process) is what denies everything else, Write and Bash included.
The host reports each session's turns and token usage; both are kept as the council's cost.
"""

from __future__ import annotations

import asyncio
from collections import namedtuple

from forge_runtime.claude_binary import find_claude
from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.guard.sdk import whitelist_guard

MAX_TURNS = 8


class Answer(namedtuple("Answer", "role text turns input_tokens output_tokens cost_usd "
                                  "denied")):
    """What one session said, what it cost, and which tool calls the guard denied."""

    __slots__ = ()


def ask(member, prompt: str, cwd: str) -> Answer:
    """Run one session of `member` on `prompt` in `cwd` and return its final answer."""
    return asyncio.run(_ask(member, prompt, cwd))


async def _ask(member, prompt: str, cwd: str) -> Answer:
    # about 0.5 s of imports: paid when a session is asked, not when a council is planned
    from claude_agent_sdk import ClaudeAgentOptions, ResultMessage, query

    options = ClaudeAgentOptions(
        system_prompt=member.instructions(), allowed_tools=list(member.tools),
        hooks={"PreToolUse": whitelist_guard(member.tools, role=member.role)},
        cwd=cwd, max_turns=MAX_TURNS, setting_sources=[], cli_path=str(find_claude()))
    result = None
    try:
        async for message in query(prompt=prompt, options=options):
            if isinstance(message, ResultMessage):
                result = message
    except Exception as exc:  # the host could not run the session: nothing to record
        raise ForgeError(f"the council's {member.role} session failed ({exc.__class__.__name__}"
                         f": {exc})", "forge doctor", exit_code=EXIT_REFUSED,
                         code="FORGE_COUNCIL_SESSION_FAILED") from None
    if result is None or result.is_error:
        why = (result.errors or [result.subtype]) if result else ["no result"]
        raise ForgeError(f"the council's {member.role} session ended without an answer "
                         f"({'; '.join(map(str, why))})", "forge doctor",
                         exit_code=EXIT_REFUSED, code="FORGE_COUNCIL_SESSION_FAILED")
    usage = result.usage or {}
    return Answer(member.role, str(result.result or "").strip(), result.num_turns,
                  usage.get("input_tokens"), usage.get("output_tokens"),
                  result.total_cost_usd,
                  [denial.get("tool_name") if isinstance(denial, dict) else str(denial)
                   for denial in result.permission_denials or []])
