"""Claude Code: what the host has that forge knowingly does not read, by the drift check's
categories (host_drift/claude_code.py), each with the versions it was found in.

forge does not read these, and none of them can switch forge off or run code past its
guard: what could is in claude_code.py (the settings the guard judges, the frontmatter
keys that run code, the folders the host loads). A frontmatter key listed here is refused
by the guard like any key it does not know to be harmless. A name found in neither file
is drift: `python -m forge_runtime.host_drift` fails until a person classifies it.
Read only by the drift check, never on a hook's path.
"""

from forge_runtime.host_contract import HOST, IRRELEVANT, PERSON
from forge_runtime.host_contract.claude_code import BOTH, SINCE_337

IGNORED = {
    "hook event": {
        **dict.fromkeys((
            "ConfigChange", "CwdChanged", "DirectoryAdded", "Elicitation",
            "ElicitationResult", "FileChanged", "InstructionsLoaded", "MessageDisplay",
            "Notification", "PermissionDenied", "PermissionRequest", "PostCompact",
            "PostModelSwitch", "PostToolBatch", "PostToolUseFailure", "PreCompact",
            "PreModelSwitch", "PreSkillShellCommand", "Setup", "SubagentStart",
            "TaskCompleted", "TaskCreated", "TeammateIdle", "UserPromptExpansion",
            "WorktreeCreate", "WorktreeRemove"
        ), BOTH),
    },
    "hook input": {
        **dict.fromkeys((
            "*.effort", "*.permission_mode", "ConfigChange.file_path",
            "ConfigChange.source", "CwdChanged.new_cwd", "CwdChanged.old_cwd",
            "DirectoryAdded.directory", "DirectoryAdded.source",
            "Elicitation.elicitation_id", "Elicitation.mcp_server_name",
            "Elicitation.message", "Elicitation.mode", "Elicitation.requested_schema",
            "Elicitation.url", "ElicitationResult.action", "ElicitationResult.content",
            "ElicitationResult.elicitation_id", "ElicitationResult.mcp_server_name",
            "ElicitationResult.mode", "FileChanged.event", "FileChanged.file_path",
            "InstructionsLoaded.file_path", "InstructionsLoaded.globs",
            "InstructionsLoaded.load_reason", "InstructionsLoaded.memory_type",
            "InstructionsLoaded.parent_file_path",
            "InstructionsLoaded.trigger_file_path", "MessageDisplay.delta",
            "MessageDisplay.final", "MessageDisplay.index",
            "MessageDisplay.message_id", "MessageDisplay.turn_id",
            "Notification.message", "Notification.notification_type",
            "Notification.title", "PermissionDenied.mcp_server",
            "PermissionDenied.reason", "PermissionDenied.tool_input",
            "PermissionDenied.tool_name", "PermissionDenied.tool_use_id",
            "PermissionRequest.mcp_server", "PermissionRequest.mcp_skill",
            "PermissionRequest.permission_suggestions", "PermissionRequest.tool_input",
            "PermissionRequest.tool_kind", "PermissionRequest.tool_name",
            "PostCompact.compact_summary", "PostCompact.trigger",
            "PostToolBatch.tool_calls", "PostToolUse.duration_ms",
            "PostToolUse.mcp_server", "PostToolUse.tool_response",
            "PostToolUse.tool_use_id", "PostToolUseFailure.duration_ms",
            "PostToolUseFailure.error", "PostToolUseFailure.is_interrupt",
            "PostToolUseFailure.mcp_server", "PostToolUseFailure.tool_input",
            "PostToolUseFailure.tool_name", "PostToolUseFailure.tool_use_id",
            "PreCompact.custom_instructions", "PreCompact.trigger",
            "PreSkillShellCommand.command_name", "PreSkillShellCommand.command_source",
            "PreSkillShellCommand.invoked_by", "PreSkillShellCommand.tool_input",
            "PreSkillShellCommand.tool_name", "PreSkillShellCommand.tool_use_id",
            "PreToolUse.mcp_server", "SessionEnd.reason", "SessionStart.agent_type",
            "SessionStart.context_tokens", "SessionStart.estimated_cache_write_usd",
            "SessionStart.model", "SessionStart.prompt_cache_likely_expired",
            "SessionStart.seconds_since_last_response", "SessionStart.session_title",
            "SessionStart.source", "Setup.trigger", "StopFailure.error",
            "StopFailure.error_details", "StopFailure.last_assistant_message",
            "SubagentStart.agent_id", "SubagentStart.agent_type",
            "SubagentStop.agent_id", "SubagentStop.background_tasks",
            "SubagentStop.session_crons", "SubagentStop.stop_hook_active",
            "TaskCompleted.task_description", "TaskCompleted.task_id",
            "TaskCompleted.task_subject", "TaskCompleted.team_name",
            "TaskCompleted.teammate_name", "TaskCreated.task_description",
            "TaskCreated.task_id", "TaskCreated.task_subject", "TaskCreated.team_name",
            "TaskCreated.teammate_name", "TeammateIdle.team_name",
            "TeammateIdle.teammate_name", "UserPromptExpansion.command_args",
            "UserPromptExpansion.command_name", "UserPromptExpansion.command_source",
            "UserPromptExpansion.expansion_type", "UserPromptExpansion.prompt",
            "UserPromptSubmit.session_title", "UserPromptSubmit.source",
            "WorktreeCreate.name", "WorktreeRemove.worktree_path"
        ), BOTH),
        **dict.fromkeys((
            "Interrupt.reason", "Interrupt.source", "Interrupt.via"
        ), SINCE_337),
    },
    "tool": {
        **dict.fromkeys((
            "Artifact", "ClaudeDesign", "CronDelete", "CronList", "EndConversation",
            "EnterPlanMode", "EnterWorktree", "ExitPlanMode", "ExitWorktree", "LSP",
            "ListAgents", "ListMcpResourcesTool", "OfferChromeSetup", "Projects",
            "PushNotification", "ReadMcpResourceDirTool", "ReadMcpResourceTool",
            "ReadNotifications", "ReportFindings", "SendFeedback", "SendMessage",
            "SendUserFile", "SendUserMessage", "ShareOnboardingGuide",
            "ShowOnboardingRolePicker", "Skill", "SubagentHandback", "TaskCreate",
            "TaskGet", "TaskList", "TaskStop", "TaskUpdate", "TodoWrite", "ToolSearch",
            "WaitForMcpServers", "propose_skills"
        ), BOTH),
    },
    "home path": {
        **dict.fromkeys((
            "CLAUDE.md", "agent-memory", "agent-memory-local", "agent-memory-project",
            "api-dumps", "backups", "cache", "chrome", "debug", "downloads",
            "dump-prompts", "feedback", "feedback-bundles", "file-history",
            "file-transfers", "ide", "image-cache", "jobs", "local", "local-settings",
            "logs", "mcp-discovery-cache", "mcp-skill-archives", "paste-cache",
            "plans", "policy-limits.json", "project-settings", "projects", "remote",
            "remote-control", "rules", "scratch", "seed-admin", "shares",
            "startup-perf", "state", "statsig", "storage-v2", "systemd", "tasks",
            "teams", "telemetry", "todos", "traces", "uploads", "usage-data"
        ), BOTH),
    },
    "project path": {
        **dict.fromkeys((
            ".claude-plugin", ".claude.json", ".git", ".husky", ".mcp.json",
            "AGENTS.md", "CLAUDE.md", "agent-memory", "agent-memory-local", "daemon",
            "hfi-auth.json", "ide", "local", "remote", "results", "rules",
            "scheduled_tasks.lock", "state", "worktrees"
        ), BOTH),
        **dict.fromkeys((
            "plugins",
        ), SINCE_337),
    },
    "frontmatter": {
        **dict.fromkeys((
            "agents", "author", "autoCompactWindow", "channels", "commands",
            "compatibility", "created_by", "defaultEnabled", "dependencies",
            "displayName", "engines", "evals", "experimental", "fallback",
            "force-for-plugin", "hide-from-slash-command-tool", "homepage",
            "improved_by", "keywords", "network", "omitClaudeMd", "originSessionId",
            "outputStyles", "prompt", "repository", "themes", "type", "workflows"
        ), BOTH),
    },
    "settings": {
        **dict.fromkeys((
            "$schema", "additionalDirectoryConfigRoots", "advisorModel", "agent",
            "agentPushNotifEnabled", "allowAllClaudeAiMcps",
            "allowClaudeInChromeWithManagedMcp", "allowManagedMcpServersOnly",
            "allowManagedPermissionRulesOnly", "allowNestedModelAccessUnderForceLogin",
            "allowedChannelPlugins", "allowedHttpHookUrls", "allowedMarketplaces",
            "allowedMcpServers", "allowedProviders", "alwaysThinkingEnabled",
            "appendPlugins", "askUserQuestionTimeout", "attribution",
            "attributionProject", "attributionProjectPolicy", "autoCompactEnabled",
            "autoCompactOfferAnswer", "autoCompactRaisedForLoad", "autoCompactWindow",
            "autoContinueAtUsageLimit", "autoDreamEnabled", "autoMemoryDirectory",
            "autoMemoryEnabled", "autoScrollEnabled", "autoUpdatesChannel",
            "autoUploadSessions", "availableModels", "availableModelsMatch",
            "awaySummaryEnabled", "bashEditDiffEnabled", "bashOutputMaxChars",
            "blockedMarketplaces", "breakReminder", "channelsEnabled", "claudeMd",
            "claudeMdExcludes", "clawdFileProgressEnabled", "cleanupPeriodDays",
            "companyAnnouncements", "crossSessionInbound", "daemonColdStart",
            "defaultShell", "deniedMcpServers", "deniedModels",
            "desktopMcpServersListScope", "desktopSessionCleanupPeriodDays",
            "dialogExpiry", "disableAgentView", "disableArtifact", "disableAutoMode",
            "disableBundledSkills", "disableClaudeAiConnectors",
            "disableDirectMcpSkills", "disableRemoteControl", "disableReplyCheck",
            "disableSideloadFlags", "disableSkillShellExecution",
            "disableWindowsBashCommandSplit", "disableWorkflows",
            "disabledMcpjsonServers", "doneMeansMerged", "downloadsMirrorUrl",
            "editorMode", "effortLevel", "emojiCompletionEnabled", "enableArtifact",
            "enableWorkflows", "enforceAvailableModels", "fallbackModel", "fastMode",
            "fastModePerSessionOptIn", "feedbackDrafts", "feedbackSurveyRate",
            "fileCheckpointingEnabled", "footerLinksRegexes", "forceLoginGatewayUrl",
            "forceLoginMethod", "forceLoginOrgUUID", "forceRemoteSettingsRefresh",
            "gatewayInternalNetworks", "httpHookAllowedEnvVars", "idleCompaction",
            "includeCoAuthoredBy", "includeGitInstructions", "inputNeededNotifEnabled",
            "isolatePeerMachines", "keybindingFlavor", "language", "managedMcpServers",
            "managedSourcesBehavior", "maxEffortLevel", "maxProseWidth",
            "minimumVersion", "model", "modelCatalogPublicKey", "modelCatalogUrl",
            "modelOverrides", "modelPicker", "modelPricing", "modelProposedGoals",
            "modelSettings", "outputStyle", "parentSettingsBehavior", "plansDirectory",
            "pluginConfigs", "pluginSuggestionMarketplaces", "pluginTrustMessage",
            "prUrlTemplate", "precomputeArmTokens", "precomputeCompactionEnabled",
            "preferredNotifChannel", "prefersReducedMotion", "prependPlugins",
            "promptCacheTtl", "promptSuggestionEnabled", "quietHours", "remote",
            "remoteControl", "remoteControlAtStartup", "remoteMessageReceipts",
            "remoteTools", "requiredMaximumVersion", "requiredMinimumVersion",
            "respectGitignore", "respondToBashCommands", "responseComparisonEnabled",
            "showClearContextOnPlanAccept", "showMessageTimestamps",
            "showThinkingSummaries", "showTurnDuration", "skillListingBudgetFraction",
            "skillListingMaxDescChars", "skillOverrides",
            "skipDangerousModePermissionPrompt", "skipWebFetchPreflight",
            "skipWorkflowUsageWarning", "spellcheck", "spinnerTipsEnabled",
            "spinnerTipsOverride", "spinnerVerbs", "sshConfigs",
            "strictKnownMarketplaces", "strictPluginOnlyCustomization",
            "subagentPromptCacheTtl", "switchModelsOnFlag", "syncClaudeAiPlugins",
            "syncClaudeAiSkills", "syntaxHighlightingDisabled", "taskOutputMaxChars",
            "teammateMode", "terminalProgressBarEnabled", "terminalTitleFromRename",
            "theme", "timeFormat", "timeZone", "todoFeatureEnabled",
            "totalTokensReminder", "totalTokensReminderAfterUserTurn",
            "totalTokensReminderBudget", "tui", "ultracode", "verbose", "viewMode",
            "vimInsertModeRemaps", "voice", "wheelScrollAccelerationEnabled",
            "workflowKeywordTriggerEnabled", "workflowSizeGuideline", "worktree",
            "wslInheritsWindowsSettings", "xaaIdp"
        ), BOTH),
        **dict.fromkeys((
            "allowedAdminConsoleOrgUUIDs", "disableLocalMcpServers"
        ), SINCE_337),
    },
    "statusline": {
        **dict.fromkeys((
            "agent", "context_window", "cost", "cost.total_cost_usd",
            "cost.total_duration_ms", "cost.total_lines_added",
            "cost.total_lines_removed", "effort", "exceeds_200k_tokens", "fast_mode",
            "model", "output_style", "pr", "rate_limits.*.limit_usd",
            "rate_limits.*.period", "rate_limits.*.used_usd",
            "rate_limits.spend_limit", "remote", "session_name", "thinking", "version",
            "vim", "workspace", "workspace.added_dirs", "workspace.cloud_dir",
            "workspace.current_dir", "workspace.git_worktree", "workspace.repo",
            "worktree"
        ), BOTH),
    },
}

# What a prompt carries into its turn (the host's own list of a prompt's options): HOST
# where it marks a turn the host, a schedule, another session or a plugin started (the
# transcript's fields of the same name are read as claude_code.PROMPT_ENTRY says), PERSON
# where it is the host's own sign of typing (never proof: forge does not count it), and
# IRRELEVANT where it says nothing of who started the turn.
PROMPT_INPUT = {
    **dict.fromkeys((
        "artifactCommentTurn", "bridgeOrigin", "carriedOnPromptId", "foreignWord",
        "fromAnotherSession", "fromConnector", "hostInitiator", "inboundOrigin", "isMeta",
        "modelScheduledOrigin", "noPersonArrived", "origin", "pollEventDeclared",
        "pollEventDelivery", "pollEventProvenance", "pollEventRows", "promptSource",
        "scheduledFireId", "scheduledTaskId", "textNotTyped", "wakeupSource"
    ), (HOST, BOTH)),
    **dict.fromkeys((
        "modWritten", "routineFires", "wakeupText"
    ), (HOST, SINCE_337)),
    **dict.fromkeys((
        "clientBashCommand", "composerEnter", "localStdinOrigin", "mergedTypedText",
        "ownWordUuids", "sessionChannelPersonTyped", "ultrathinkTyped",
        "verifiedSlackHumanTurn"
    ), (PERSON, BOTH)),
    **dict.fromkeys((
        "looksTypedInAnApp",
    ), (PERSON, SINCE_337)),
    **dict.fromkeys((
        "aheadOfSessionStart", "canUseTool", "clientBashCommandCwd", "context", "entries",
        "ideSelection", "inlinedImageNames", "inlinedImagePaths", "input",
        "isAlreadyProcessing", "messages", "mode", "onQueryCommitted", "onScreened",
        "ownFilePaths", "pastedContents", "preExpansionInput", "promptSubmitted",
        "queryHeldForNextTurn", "querySource", "readAtDispatch", "rowSource", "sentAtMs",
        "setUserInputOnProcessing", "shouldQuery", "skipAttachments",
        "skipSkillPermissionReset", "skipSlashCommands", "skipSubmissionHooks",
        "stampThreadState", "suppressWorkflowKeyword", "toolsUsed", "userPromptRecording",
        "uuid", "wait", "widgetViews"
    ), (IRRELEVANT, BOTH)),
    **dict.fromkeys((
        "attachOrder", "consent", "namesOwnCommand", "resultEndsInWaitingNote",
        "savedFiles", "screenedWithNoTurn"
    ), (IRRELEVANT, SINCE_337)),
}
