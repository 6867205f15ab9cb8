"""PostToolUse of the Agent tool: tell the main session what forge did with its clarifier.

The host hands nothing a SubagentStop hook says to the main session (its `systemMessage`
reaches only the person, and `additionalContext` or a block makes the subagent go on:
measured on Claude Code 2.1.332). So the SubagentStop hook leaves its verdict in
`.forge/local/clarify-outcome-<session>.txt`, and this hook, registered for the Agent tool
only, adds it to the Agent call's result as `additionalContext`. Any other agent costs one
dictionary lookup.
"""

REQUIRED: dict[str, type] = {"tool_name": str, "tool_input": dict}


def handle(event: dict) -> dict | None:
    from forge_runtime.hooks.subagent_stop import CLARIFIER

    if event["tool_input"].get("subagent_type") != CLARIFIER:
        return None
    from forge_runtime import safeio
    from forge_runtime.hooks.subagent_stop import outcome_path
    from forge_runtime.project import find_project

    project = find_project(event.get("cwd"))
    path = outcome_path(project, event["session_id"])
    try:  # no link, no FIFO (safeio.py): a wedged or misled hook is worse than no verdict
        said = safeio.read_text(path, project.root)
        safeio.remove(path, project.root)
    except (OSError, UnicodeDecodeError):
        return None
    return {"hookSpecificOutput": {"hookEventName": "PostToolUse", "additionalContext": said}}
