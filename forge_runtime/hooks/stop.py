"""Stop: nothing yet beyond validating the event."""

REQUIRED: dict[str, type] = {}


def handle(event: dict) -> dict | None:
    return None
