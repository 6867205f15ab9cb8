"""Claude Code: every fact forge reads from the host, each with the versions it was measured
on (HOST.md's measurements, tests/host/ against the real binary, and the binary's own
JavaScript, which `python -m forge_runtime.host_drift` reads). What the host has and forge
does not read is in claude_code_ignored.py.

Versions are tuples of the builds a fact was measured on; `MEASURED[-1]` is the newest.
"""

from forge_runtime.host_contract import (
    CLAUDE_CONFIG,
    CLAUDE_HOME,
    DEFINITIONS,
    HOME,
    HOST,
    MANAGED,
    PERSON,
    PROJECT,
    SETTINGS,
    TREE,
)

HOST_NAME = "claude"
V332, V337 = "2.1.332", "2.1.337"
MEASURED = (V332, V337)
BOTH = MEASURED
SINCE_337 = (V337,)

# --- Hook events forge registers (hooks/hooks.json), and the input fields it reads.
# The host's own input schemas: `<Event>.<field>`, `*.<field>` for what every event has.
HOOK_EVENTS = {"SessionStart": BOTH, "UserPromptSubmit": BOTH, "PreToolUse": BOTH,
               "PostToolUse": BOTH, "Stop": BOTH, "StopFailure": BOTH, "SubagentStop": BOTH,
               "SessionEnd": BOTH, "Interrupt": SINCE_337}
HOOK_INPUT = {
    "*.session_id": BOTH, "*.transcript_path": BOTH, "*.cwd": BOTH, "*.prompt_id": BOTH,
    "*.agent_id": BOTH, "*.agent_type": BOTH,
    "UserPromptSubmit.prompt": BOTH,
    "PreToolUse.tool_name": BOTH, "PreToolUse.tool_input": BOTH,
    "PreToolUse.tool_use_id": BOTH,
    "PostToolUse.tool_name": BOTH, "PostToolUse.tool_input": BOTH,
    "Stop.stop_hook_active": BOTH, "Stop.last_assistant_message": BOTH,
    "Stop.background_tasks": BOTH, "Stop.session_crons": BOTH,
    "SubagentStop.agent_transcript_path": BOTH, "SubagentStop.agent_type": BOTH,
    "SubagentStop.last_assistant_message": BOTH,
}
# Environment the host gives every hook, and the pid of the host's own process there.
HOOK_ENV = {"CLAUDE_PLUGIN_ROOT": BOTH, "CLAUDE_PLUGIN_DATA": BOTH,
            "CLAUDE_PROJECT_DIR": BOTH, "CLAUDE_CODE_SESSION_ID": BOTH, "CLAUDE_ENV_FILE": BOTH,
            "CLAUDE_PID": BOTH}
PID_ENV = "CLAUDE_PID"

# --- Tools forge treats by name (the guard, the goal's scheduled turns); every other tool
# is judged as an opaque one.
TOOLS = dict.fromkeys((
    "Agent", "AskUserQuestion", "Bash", "CronCreate", "Edit", "Glob", "Grep", "Monitor",
    "NotebookEdit", "PowerShell", "Read", "RemoteTrigger", "ScheduleWakeup", "SetGoal",
    "WebFetch", "WebSearch", "Workflow", "Write"), BOTH)

# --- What the host loads as code, or starts turns from (protected/host_loaded.py's table):
# (scope, place under it, what it is called in messages, how a write is decided, versions).
# Sources: the host's docs and its own list of what its sandbox keeps Bash from writing.
SHELL_LABEL = "a shell start-up file the host's Bash sources outside the sandbox"
SHELL_FILES = (".bashrc", ".bash_profile", ".bash_login", ".bash_logout", ".bash_aliases",
               ".profile", ".zshrc", ".zprofile", ".zshenv", ".zlogin", ".zlogout")
_BASES = ((PROJECT, ".claude/"), (CLAUDE_HOME, ""))
SETTINGS_FILES = (
    (PROJECT, ".claude/settings.json", "the host's project settings", SETTINGS, BOTH),
    (PROJECT, ".claude/settings.local.json", "the host's local settings", SETTINGS, BOTH),
    (MANAGED, "managed-settings.json", "the host's managed settings", SETTINGS, BOTH),
    (CLAUDE_HOME, "settings.json", "the host's user settings", SETTINGS, BOTH),
    (CLAUDE_HOME, "settings.local.json", "the host's user settings", SETTINGS, BOTH),
    (CLAUDE_CONFIG, ".claude.json", "the host's user config (MCP servers)", SETTINGS, BOTH),
    (PROJECT, ".mcp.json", "the project's MCP servers", SETTINGS, BOTH),
)
LOADED = (
    (MANAGED, "managed-settings.d", "the host's managed settings", TREE, BOTH),
    (CLAUDE_HOME, "plugins",
     "the host's plugin tree, which holds forge's code, data and forge-env", TREE, BOTH),
    (CLAUDE_HOME, "cowork_plugins",
     "the host's plugin tree under Cowork (loaded instead of plugins/)", TREE, SINCE_337),
    (CLAUDE_HOME, "sessions", "the host's live-session registry and messaging keys (a "
     "message written there starts a turn in another session)", TREE, SINCE_337),
    # Markdown definitions whose frontmatter can carry hooks and MCP servers.
    *((scope, f"{base}skills", "the host's skills (a skill's hooks, or a plugin or mod in "
       "a skill folder, run outside the sandbox)", DEFINITIONS, BOTH)
      for scope, base in _BASES),
    *((scope, f"{base}agents", "the host's subagent definitions (their hooks and MCP "
       "servers run outside the sandbox)", DEFINITIONS, BOTH) for scope, base in _BASES),
    *((scope, f"{base}commands", "the host's commands (their hooks run outside the "
       "sandbox)", DEFINITIONS, BOTH) for scope, base in _BASES),
    *((scope, f"{base}output-styles", "the host's output styles", DEFINITIONS, BOTH)
      for scope, base in _BASES),
    # Code and scheduled turns the host runs from its own folders.
    *((scope, f"{base}{name}", label, TREE, BOTH) for scope, base in _BASES
      for name, label in (
          ("hooks", "hook scripts the host's settings run"),
          ("workflows", "the host's workflow scripts"),
          ("routines", "the host's routines"),
          ("mods", "the host's mods (JavaScript it runs in-process)"),
          ("monitors", "the host's monitors (commands it runs unsandboxed)"),
          ("launch.json", "the host's launch configurations (commands it starts)"),
          ("scheduled_tasks.json", "the host's scheduled tasks (turns it starts)"),
          ("loop.md", "a /loop's tasks (turns the host starts)"))),
    # The host's own state that it runs: mods written in a session (`dev-mods`), the shell
    # snapshots and session environments its Bash sources, its daemon's configuration.
    *((CLAUDE_HOME, name, label, TREE, BOTH) for name, label in (
        ("dev-mods", "the host's session mods (JavaScript it runs in-process)"),
        ("shell-snapshots", "the host's shell snapshots (its Bash sources them)"),
        ("session-env", "the host's session environments (its Bash sources them)"),
        ("daemon", "the host's daemon state"),
        ("daemon.json", "the host's daemon configuration"))),
)
# The shell start-up files the host's Bash sources (Codex's shell too: host_loaded marks
# them as both hosts').
SHELLS = tuple((HOME, name, SHELL_LABEL, TREE, BOTH) for name in SHELL_FILES)

# --- Settings (every scope's settings JSON): what forge needs, judges, or writes.
# (path of keys, the value forge needs there): any other explicit value switches forge off.
SETTINGS_NEEDS = ((("disableAllHooks",), False), (("allowManagedHooksOnly",), False),
                  (("sandbox", "enabled"), True), (("sandbox", "failIfUnavailable"), True),
                  (("sandbox", "allowUnsandboxedCommands"), False),
                  (("sandbox", "enableWeakerNestedSandbox"), False))
# Keys whose value is (or switches on) code the host runs outside the guard and sandbox:
# hooks, helpers it runs for credentials or headers, the status lines, marketplaces and
# MCP servers, the corporate launcher, Desktop's SSH host commands.
SETTINGS_CODE = {
    "hooks": BOTH, "statusLine": BOTH, "subagentStatusLine": BOTH, "apiKeyHelper": BOTH,
    "awsAuthRefresh": BOTH, "awsCredentialExport": BOTH, "gcpAuthRefresh": BOTH,
    "otelHeadersHelper": BOTH, "proxyAuthHelper": BOTH, "processWrapper": BOTH,
    "policyHelper": BOTH, "policyHelpers": BOTH, "fileSuggestion": BOTH,
    "extraKnownMarketplaces": BOTH, "additionalMarketplaces": BOTH,
    "disableCommandPluginSources": BOTH, "enableAllProjectMcpServers": BOTH,
    "enabledMcpjsonServers": BOTH, "sshHostCommands": BOTH,
}
# The same in ~/.claude.json (also per project, under `projects`) and .mcp.json.
CONFIG_CODE = {"mcpServers": BOTH}
# Judged by what an edit leaves: forge's plugin entry, every `env` addition (it reaches
# forge's hooks), the sandbox, and forge's deny rules among the permissions.
SETTINGS_JUDGED = {"enabledPlugins": BOTH, "env": BOTH, "sandbox": BOTH, "permissions": BOTH,
                   "disableAllHooks": BOTH, "allowManagedHooksOnly": BOTH}
# Lists that may only shrink (they open the sandbox), and lists that may only grow.
SETTINGS_OPENERS = (("sandbox", "excludedCommands"), ("sandbox", "filesystem", "allowWrite"))
SETTINGS_CLOSERS = (("sandbox", "filesystem", "denyWrite"),
                    ("sandbox", "filesystem", "denyRead"))
# Where forge writes: `forge init --hooks` / `--statusline`, `forge sandbox enable`.
SETTINGS_WRITTEN = {"hooks": BOTH, "statusLine": BOTH, "sandbox": BOTH, "permissions": BOTH,
                    "disableAllHooks": BOTH}

# --- Frontmatter of skills, commands and subagents (guard/definitions.py): keys that only
# describe (an agent may write them) and keys that make the host run code or lift limits.
FRONTMATTER_SAFE = dict.fromkeys((
    "name", "description", "when_to_use", "argument-hint", "arguments", "model", "effort",
    "color", "version", "license", "metadata", "allowed-tools", "tools", "disallowedTools",
    "disallowed-tools", "disable-model-invocation", "user-invocable", "context", "agent",
    "paths", "skills", "memory", "keep-coding-instructions", "maxTurns", "background",
    "isolation"), BOTH)
FRONTMATTER_CODE = dict.fromkeys((
    "hooks", "mcpServers", "permissionMode", "shell", "lspServers", "monitors", "settings",
    "userConfig", "observer", "observerMessage", "observeToolResults", "observeSubagents",
    "initialPrompt"), BOTH)

# --- The native goal in the transcript: the `goal_status` attachments the host writes.
# (the values of met / failed / sentinel, the other keys besides `type`, versions)
GOAL_STATUS = {
    "set": ({"met": False, "sentinel": True}, ("condition",), BOTH),
    "cleared": ({"met": True, "sentinel": True}, ("condition",), BOTH),
    "not met": ({"met": False}, ("condition", "reason"), BOTH),
    "met": ({"met": True}, ("condition", "reason", "iterations", "durationMs", "tokens"),
            BOTH),
    "failed": ({"met": False, "failed": True},
               ("condition", "reason", "iterations", "durationMs", "tokens"), BOTH),
}
# The writers as the binary has them (`<keys>`, with met / failed / sentinel and their
# value, `*` where the caller passes it: set and cleared share a writer).
GOAL_STATUS_WRITERS = {
    "condition,met=*,sentinel=true": BOTH,
    "condition,met=false,reason": BOTH,
    "condition,durationMs,iterations,met=true,reason,tokens": BOTH,
    "condition,durationMs,failed=true,iterations,met=false,reason,tokens": BOTH,
}
# The host's own reader of the running goal: a goal ends at the newest entry that is met
# or failed; since 2.1.337 it passes over entries another session wrote
# (`remoteSourced: true`) or that carry `version: "1.0"`, as forge's reader must too.
GOAL_READER = {"ends on met": BOTH, "ends on failed": BOTH,
               "skips remoteSourced=true": SINCE_337, "skips version=1.0": SINCE_337}
GOAL_STATUS_SKIPPED = (("remoteSourced", True), ("version", "1.0"))
# The evaluator's answer (`{ok, reason, impossible}`): `impossible` makes the host clear
# the goal and write a `failed` goal_status (no `impossible` key is written).
EVALUATOR_ANSWER = {"ok": BOTH, "reason": BOTH, "impossible": BOTH}
EVALUATOR_PROMPT = "You are evaluating a stop-condition hook"

# --- Who started a turn: the prompt entry's fields. A turn is a person's only when every
# field reads PERSON (or is absent); any HOST value, and any value not listed here, makes
# it the host's.
PROMPT_SOURCES = {"typed": PERSON, "queued": PERSON, "suggestion_accepted": PERSON,
                  "sdk": PERSON, "system": HOST}
ORIGIN_KINDS = {"human": PERSON, "auto-continuation": HOST, "channel": HOST,
                "coordinator": HOST, "observer": HOST, "observer-activity": HOST,
                "peer": HOST, "task-notification": HOST, "unclassified": HOST}
# The host's own verdict, stamped on the prompt entry as `turnOrigin`.
TURN_ORIGINS = {"human": PERSON, "sdk": PERSON, "scheduled": HOST,
                "task_notification": HOST, "auto_continuation": HOST, "peer": HOST,
                "host_synthetic": HOST, "system": HOST, "unknown": HOST}
# `hostInitiator` (Desktop's): only "user" is a person.
HOST_INITIATORS = {"user": PERSON, "scheduled-task": HOST, "sleep-auto-resume": HOST,
                   "quit-auto-resume": HOST, "remote-restart-auto-resume": HOST,
                   "limit-auto-resume": HOST, "ci-monitor": HOST, "dispatch": HOST,
                   "side-session-brief": HOST, "side-session-start": HOST,
                   "side-session-wake": HOST, "other": HOST}
# `rowSource`: a person's own words are `local` (a wake-up's or a notice's `recorded`, the
# host's `harness`, a hook's `hook`); `typedByPerson` only ever says so.
ROW_SOURCES = {"local": PERSON, "recorded": HOST, "harness": HOST, "hook": HOST}
TYPED_BY_PERSON = {True: PERSON}
# Fields of a prompt entry (field: (how its value is read, versions)): by one of the tables
# above (`origin` by its `kind`), or HOST when present and not null or false (the host
# writes these only on a prompt no person typed as it stands: a wake-up's or a cron's, text
# it made or re-sent, another session's, a connector's or a relay's, a queue's or a hook's
# own rows, its summaries). goal/hosts/transcript.py's rule reads exactly this table.
PROMPT_ENTRY = {
    "promptSource": (PROMPT_SOURCES, BOTH), "origin": (ORIGIN_KINDS, BOTH),
    "turnOrigin": (TURN_ORIGINS, BOTH), "hostInitiator": (HOST_INITIATORS, BOTH),
    "rowSource": (ROW_SOURCES, BOTH), "typedByPerson": (TYPED_BY_PERSON, BOTH),
    "isMeta": (HOST, BOTH), "wakeupSource": (HOST, BOTH), "scheduledTaskId": (HOST, BOTH),
    "scheduledFireId": (HOST, BOTH), "textNotTyped": (HOST, BOTH),
    "noPersonArrived": (HOST, BOTH), "fromAnotherSession": (HOST, BOTH),
    "fromConnector": (HOST, BOTH), "carriesOnTurnOf": (HOST, BOTH),
    "foreignWord": (HOST, BOTH), "inboundOrigin": (HOST, BOTH),
    "verifiedSlackHumanTurn": (HOST, BOTH), "promptRewritten": (HOST, BOTH),
    "queueSkipSlashCommands": (HOST, BOTH), "queueSkipAttachments": (HOST, BOTH),
    "queueTranscriptOnly": (HOST, BOTH), "handedOff": (HOST, BOTH),
    "hookText": (HOST, BOTH), "hookTextLead": (HOST, BOTH),
    "isCompactSummary": (HOST, BOTH), "isVisibleInTranscriptOnly": (HOST, BOTH),
    "isVirtual": (HOST, BOTH),
    "wakeupText": (HOST, SINCE_337),
    "modWritten": (HOST, SINCE_337), "askedToGoOn": (HOST, SINCE_337),
    "silentResendOf": (HOST, SINCE_337),
}
# Fields every prompt entry has, whoever sent it: where and when it was written, its place
# in the conversation, the client that drew it. They say nothing of who sent it.
PROMPT_ENVELOPE = frozenset({
    "type", "message", "uuid", "parentUuid", "logicalParentUuid", "timestamp", "sessionId",
    "cwd", "version", "gitBranch", "slug", "userType", "entrypoint", "isSidechain",
    "promptId", "turnPromptId", "turnPosition", "permissionMode", "sentAtMs",
    "imagePasteIds", "mergedSendUuids", "clientPlatform", "clientContentWidth",
    "turnAttributionKey", "publishClickPath", "traceparent"})
# A background task's or monitor's notice opens with this, whatever its fields say.
TASK_NOTIFICATION = "<task-notification>"
# On a prompt entry and says nothing of who started the turn: a subagent's notice (already
# the host's by its origin) saying whether the subagent has reported yet.
PROMPT_ENTRY_IRRELEVANT = {"resultEndsInWaitingNote": SINCE_337}

# --- The status line's input: the plan's windows (goal/budget/plan.py) and whether the host has
# heard from the API yet (statusline.py).
STATUSLINE = {"rate_limits": BOTH, "rate_limits.five_hour": BOTH,
              "rate_limits.seven_day": BOTH, "rate_limits.*.used_percentage": BOTH,
              "rate_limits.*.resets_at": BOTH, "cost.total_api_duration_ms": BOTH,
              "workspace.project_dir": BOTH}
RATE_LIMIT_WINDOWS = ("five_hour", "seven_day")
API_DURATION = ("cost", "total_api_duration_ms")
