"""Claude Code: forge's core speaks its events, fields and replies, so nothing is mapped."""

NAME = "claude"
# Below Claude Code's 10 s limit for a SessionEnd hook.
SESSION_END_WATCHDOG_SECONDS = 6.0


def shape_problem(event_name: str, event: dict) -> str | None:
    """Why `event` cannot be Claude Code's, or None (Codex's events carry a `turn_id`)."""
    if "turn_id" in event:
        return "the input carries turn_id, as Codex's do: this hook is wired for Claude Code"
    return None


def handle(event_name: str, module, event: dict) -> dict | None:
    return module.handle(event)


def wedged_reply(event_name: str, event: dict, reply: dict | None) -> dict | None:
    return reply
