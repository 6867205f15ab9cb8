"""UserPromptSubmit: nothing yet beyond validating the event."""

REQUIRED: dict[str, type] = {"prompt": str}


def handle(event: dict) -> dict | None:
    return None
