"""The PreToolUse guard: roles that cannot write, and paths no agent may touch.

One rule set serves the plugin hook (`forge_runtime.hooks.pre_tool_use`), the CLI
(`forge guard check`) and forge's own claude-agent-sdk sessions (`guard.sdk.whitelist_guard`).
Modules import lazily and use the standard library on the hot path: the hook runs before
every tool call of every session in a project.
"""
