"""The PreToolUse guard: roles that cannot write, and paths no agent may touch.

One rule set serves the plugin hook (`forge_runtime.hooks.pre_tool_use`), the CLI
(`forge guard check`) and forge's own claude-agent-sdk sessions (`guard.sdk.whitelist_guard`).

Modules, each with one job:
    roles     a role's allow-list; forge's default read-only roles
    rules     the roles in force: defaults plus `.forge/guard.yaml`
    modes     main-session guarded modes (`forge mode enter|exit`)
    shell/    what a Bash command would do to protected paths: a model of the shell, in
              layers of its own (see its __init__); `shell.analyse` is all the guard asks
    edits     what Write/Edit/MultiEdit/NotebookEdit would do, incl. state.md's goal fields
    host_settings  what an edit leaves of a host settings file or Codex config: forge on?
    patch     what a Codex `apply_patch` would do: the same rules for the paths it names
    decide    the decision for one tool call: allow, or deny with a hint-contract reason
    sdk       `whitelist_guard`, the same decision as a claude-agent-sdk HookMatcher

The protected paths (the host's off switches too), how a named path is resolved against
them, and the reading of `.forge/guard.yaml` are in `forge_runtime/protected/`, below the
guard, where the goal and the sandbox read them too.

The hook runs before every tool call of every session in a project: modules import lazily
and use the standard library on the hot path.
"""

# The tools that only read. Reading is never a role's to refuse (every role allows these,
# an unknown one too): the one read forge refuses is of the gate receipts' key. Here, in the
# package every guard import loads, so the hook's path for a read imports no `roles`.
READ_ONLY = ("Read", "Grep", "Glob")


def deny(reason: str) -> dict:
    """The host's PreToolUse deny reply; the reason reaches the model as the tool result.
    Here, in the package every guard import loads, because the hook and forge's own SDK
    sessions (sdk.py) both answer with it, and the guard may not import the hook."""
    return {"hookSpecificOutput": {"hookEventName": "PreToolUse",
                                   "permissionDecision": "deny",
                                   "permissionDecisionReason": reason}}
