"""The host that sent an event, as the goal core sees it: an adapter handed over on the event.

The core names no host (ARCHITECTURE.md: it may not import forge_runtime/hosts/). A host
adapter other than Claude Code's puts itself on the event under KEY before it runs an
event module (hosts/codex.py); an event without one is Claude Code's, whose events and
transcripts are forge's own shape (the plugin's hooks, the CLI, the tests). What the core
asks an adapter (declared as the Protocol `HandedHost` in forge_runtime/hosts/contract.py,
which tests/test_hook_contracts.py holds to this list), and what holds for Claude Code:

    transcript_reader()             the module that reads its transcripts (transcript.py)
    sandbox_posture(root, rollout)  its own sandbox's posture for the session (none)
    SESSION_END_BUDGET_SECONDS      what a SessionEnd hook may spend (gates/goal.py's)
    continuing(reply)               the Stop reply that keeps a goal going (model context)
    NAME                            its name, which a goal's activation records (claude)
"""

KEY = "forge_host"


def adapter(event: dict):
    """The adapter that handed `event` over; None for Claude Code."""
    return event.get(KEY)


def transcript_reader(event: dict):
    """The module that reads the transcript of the host that sent `event`; every reader
    offers read_since, follow and running_goal and returns chunks with the same interface."""
    handed = event.get(KEY)
    if handed is not None:
        return handed.transcript_reader()
    from forge_runtime.goal.hosts import transcript

    return transcript


def name(event: dict) -> str:
    """The name of the host that sent `event` (claude, codex)."""
    handed = event.get(KEY)
    return handed.NAME if handed is not None else "claude"
