"""PreToolUse: nothing yet beyond validating the event."""

REQUIRED: dict[str, type] = {"tool_name": str, "tool_input": dict}


def handle(event: dict) -> dict | None:
    return None
