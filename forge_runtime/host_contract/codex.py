"""Codex CLI: every fact forge reads from the host, each with the versions it was measured on
(HOST.md, tests/host/test_codex_*.py against the real binary, and the binary's own tables,
which `python -m forge_runtime.host_drift` reads). What the host has and forge does not
read is in codex_ignored.py.
"""

from forge_runtime.host_contract import (
    AGENTS_HOME,
    CODEX_CONFIG,
    CODEX_HOME,
    DEFINITIONS,
    HOST,
    PERSON,
    PROJECT,
    TREE,
)

HOST_NAME = "codex"
V171 = "0.171.0"
MEASURED = (V171,)
ALL = MEASURED

# --- Hook events forge registers (`forge init --host codex` writes .codex/hooks.json),
# and the input fields it reads: `<Event>.<field>`, from Codex's own input schemas.
HOOK_EVENTS = {"UserPromptSubmit": ALL, "PreToolUse": ALL, "Stop": ALL, "SessionEnd": ALL}
HOOK_INPUT = {
    **{f"{event}.{field}": ALL
       for event in ("UserPromptSubmit", "PreToolUse", "Stop", "SessionEnd")
       for field in ("session_id", "transcript_path", "cwd")},
    **{f"{event}.turn_id": ALL for event in ("UserPromptSubmit", "PreToolUse", "Stop")},
    "UserPromptSubmit.prompt": ALL, "PreToolUse.tool_name": ALL,
    "PreToolUse.tool_input": ALL, "PreToolUse.tool_use_id": ALL,
    "Stop.stop_hook_active": ALL, "Stop.last_assistant_message": ALL,
}
# The events whose turn forge charges: each carries the turn's `turn_id`.
TURN_EVENTS = tuple(event for event in HOOK_EVENTS if f"{event}.turn_id" in HOOK_INPUT)

# --- What Codex loads as code (protected/host_loaded.py): (scope, place, label, kind, versions).
CONFIG_FILES = (
    (PROJECT, ".codex/config.toml", "Codex's project config", CODEX_CONFIG, ALL),
    (CODEX_HOME, "config.toml", "Codex's user config", CODEX_CONFIG, ALL),
)
LOADED = (
    (PROJECT, ".codex/hooks.json", "Codex's project hooks", TREE, ALL),
    # Its project folder's hooks, agents, skills and rules; skills and plugins in
    # `.agents` (project and user); its home as a whole (hooks, goal store, profiles).
    *((PROJECT, f".codex/{name}", label, TREE, ALL) for name, label in (
        ("hooks", "Codex's project hooks"), ("agents", "Codex's project agents"),
        ("skills", "Codex's project skills"),
        ("rules", "Codex's command rules (they let commands run unasked)"))),
    *((scope, f"{base}skills", "Codex's skills", DEFINITIONS, ALL)
      for scope, base in ((PROJECT, ".agents/"), (AGENTS_HOME, ""))),
    *((scope, f"{base}plugins", "Codex's plugins and marketplaces", TREE, ALL)
      for scope, base in ((PROJECT, ".agents/"), (AGENTS_HOME, ""))),
    (CODEX_HOME, "", "Codex's home, which holds its hooks, goal store and profiles", TREE,
     ALL),
)

# --- config.toml (the top level, and each profile): what forge needs and judges.
# Keys whose value runs code or sets what forge's hooks and Codex's commands run with:
# hooks, the sandbox's writable roots and shell environment, `notify`, MCP servers,
# plugins and marketplaces, the Node.js its REPL runs, OpenTelemetry's header helper,
# model providers (their auth commands), the default profile.
CONFIG_CODE = dict.fromkeys((
    "hooks", "sandbox_workspace_write", "shell_environment_policy", "notify", "mcp_servers",
    "profile", "plugins", "marketplaces", "js_repl_node_path", "otel", "model_providers"), ALL)
# Judged by what an edit leaves: `features.hooks` stays true (in a profile too),
# `sandbox_mode` never weaker, a project's `trust_level` stays "trusted".
CONFIG_JUDGED = {"features": ALL, "sandbox_mode": ALL, "projects": ALL, "profiles": ALL}
SANDBOX_RANK = {"read-only": 0, "workspace-write": 1, "danger-full-access": 2}
HOOKS_FEATURE = ("features", "hooks")
TRUSTED = "trusted"

# --- The rollout (`transcript_path`, JSON lines `{timestamp, ordinal, type, payload}`).
EVENT_MSG, RESPONSE_ITEM, TURN_CONTEXT = "event_msg", "response_item", "turn_context"
ROLLOUT_LINES = {EVENT_MSG: ALL, RESPONSE_ITEM: ALL, TURN_CONTEXT: ALL}
# `event_msg` payload types forge reads.
ROLLOUT_EVENTS = {"task_started": ALL, "task_complete": ALL, "thread_goal_updated": ALL,
                  "token_count": ALL}
TASK_STARTED, TASK_COMPLETE, GOAL_UPDATED, TOKEN_COUNT = tuple(ROLLOUT_EVENTS)
# `response_item` payload types forge reads, and the host's goal tools among its calls.
MESSAGE, FUNCTION_CALL, FUNCTION_CALL_OUTPUT = "message", "function_call", "function_call_output"
GOAL_TOOLS = {"create_goal": ALL, "update_goal": ALL, "get_goal": ALL, "goal_objective": ALL}
# Who started a turn: `task_started.turn_attribution.turn_trigger`; any other is the host's.
GOAL_TRIGGER = "goal"  # a turn the native goal's loop started by itself
TURN_TRIGGERS = {"user": PERSON, GOAL_TRIGGER: HOST}
# The host's own goal messages: a `user` message tagged `user.goal` whose text opens with
# its context tag and says what a person did.
GOAL_MESSAGE_KINDS = ["user.goal"]
GOAL_CONTEXT = '<codex_internal_context source="user_goal">'
GOAL_SET, GOAL_CLEARED = "User set the goal:", "User cleared the goal."
# A Stop hook's block continues the turn with this message.
HOOK_PROMPT = "<hook_prompt "
# How a goal stands (`status`): running, or ended by the model's `update_goal` (as the
# outcomes goal/hosts/transcript.py names: met, impossible).
GOAL_RUNNING = "active"
GOAL_ENDED = {"complete": "met", "blocked": "impossible"}
# The goal store's statuses that do not end it: running, paused by the person (`/goal
# resume` goes on), stopped at a usage limit (forge ends that goal itself, ceilings.py).
GOAL_NOT_ENDED = (GOAL_RUNNING, "paused", "usage_limited")
# The host's own token budget stopped its goal loop: an end forge records as unknown (it is
# none of the model's verdicts). Any status not listed here ends the goal as unknown too.
GOAL_HOST_BUDGET = ("budget_limited",)
# A turn a usage limit ended: its `task_complete` error's `codex_error_info`.
USAGE_LIMIT_ERROR = "usage_limit_exceeded"
# `token_count.info`: the response's usage (fresh input = input - cached - written).
TOKEN_FIELDS = ("last_token_usage", "total_token_usage", "input_tokens", "output_tokens",
                "cached_input_tokens", "cache_write_input_tokens")
# The plan's windows: each `token_count` event's `rate_limits.primary` and `.secondary`
# (`used_percent`, `window_minutes`, `resets_at`), named by their length (goal/budget/plan.py).
RATE_LIMITS = ("primary", "secondary")
RATE_LIMIT_WINDOWS = {300: "five_hour", 10080: "seven_day"}
# Names the drift check looks for in the binary (no table delimits them).
ROLLOUT_ENTRY = dict.fromkeys((
    *ROLLOUT_LINES, MESSAGE, FUNCTION_CALL, FUNCTION_CALL_OUTPUT, *GOAL_TOOLS,
    "turn_attribution", "turn_trigger", "content_item_kinds",
    "internal_chat_message_metadata_passthrough", *GOAL_MESSAGE_KINDS,
    'source="user_goal"', GOAL_SET, GOAL_CLEARED, "hook_prompt", USAGE_LIMIT_ERROR,
    "codex_error_info", "sandbox_policy", *TOKEN_FIELDS, "window_minutes", "used_percent",
    "resets_at"), ALL)
