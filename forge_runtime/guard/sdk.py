"""The guard as an in-process hook for forge's own claude-agent-sdk sessions.

In an SDK session `allowed_tools` only pre-approves tools: the model can still call any
other tool the host offers. `whitelist_guard` returns the PreToolUse `HookMatcher` that
makes the list binding, using exactly the rules the plugin hook uses (the same `decide`,
so protected paths hold too):

    options = ClaudeAgentOptions(
        allowed_tools=["Read", "Grep", "Glob"],
        hooks={"PreToolUse": whitelist_guard(["Read", "Grep", "Glob"], role="clarifier")},
    )

The matcher is set to block on failure, so a callback that raises denies rather than
letting the call through.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping

from forge_runtime.guard import deny
from forge_runtime.guard.decide import decide
from forge_runtime.guard.roles import Role

GUARD_TIMEOUT_SECONDS = 10.0


def whitelist_guard(allowed: Iterable[str], *, role: str = "sdk-session",
                    env: Mapping[str, str] | None = None) -> list:
    """PreToolUse matchers that deny every tool outside `allowed` and every protected write.

    `role` names the allow-list in deny reasons; `env` is the environment used to expand
    `~` and `$VAR` in paths (default: this process's).
    """
    from claude_agent_sdk import HookMatcher

    rules = Role(role, tuple(allowed))
    environment = None if env is None else dict(env)

    async def guard(input_data, tool_use_id, context) -> dict:
        hint = decide(dict(input_data), env=environment, role=rules)
        return {} if hint is None else deny(hint.render())

    return [HookMatcher(matcher=None, hooks=[guard], timeout=GUARD_TIMEOUT_SECONDS,
                        on_failure="block")]
