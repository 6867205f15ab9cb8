"""UserPromptSubmit: note a `/goal` prompt for confirmation at its first Stop.

A prompt here may come from a person or from something a model scheduled, so nothing is
activated yet (see forge_runtime/goal/events/). A session without a goal that sends
anything but `/goal` pays a string check and three stats. A session with a goal (or
setting one) is told when forge's Stop hooks were being killed
(forge_runtime/goal/store/killed_stops.py).
"""

REQUIRED: dict[str, type] = {"prompt": str}
# Below the host's 30 s (the dispatcher's hard limit follows 3 s later): forge's own run of
# the final gates may take 20 s of it.
WATCHDOG_SECONDS = 25.0


def watchdog_seconds(host) -> float:
    """How long this prompt hook may take before its watchdog answers (hooks/dispatch.py)."""
    return WATCHDOG_SECONDS


def on_wedged(event: dict | None, seconds: float) -> dict | None:
    """A goal's session whose prompt hook wedged (its catch-up waits on something the agent
    controls) stops with FORGE_GOAL_WEDGED instead of running on uncharged."""
    from forge_runtime.hooks.stop import wedged_reply

    return wedged_reply("UserPromptSubmit", event, seconds)


def handle(event: dict) -> dict | None:
    from forge_runtime.goal.store import sessions

    if not event["prompt"].lstrip().startswith("/goal") and \
            not sessions.event_involvement(event):
        return None
    from forge_runtime.goal.store import killed_stops
    from forge_runtime.hooks.goal_handlers import on_prompt

    reply = on_prompt(event)
    from forge_runtime.hooks.session_end import tell_missed

    project = sessions.project_for(event)  # once for the rest: the binding as the prompt left it
    binding = sessions.read_binding(project.ledger_root, event["session_id"]) or {}
    tell_missed(project, binding)
    from forge_runtime import gates

    if gates.in_play(project):  # else nothing to note, nothing to import
        from forge_runtime.errors import ForgeError
        from forge_runtime.gates.goal import PROMPT_BUDGET_SECONDS, note_if_met

        try:
            note_if_met(project, event, binding, PROMPT_BUDGET_SECONDS)
        except ForgeError as exc:  # the gates record is not forge's: its next Stop ends it
            reply = reply or {"systemMessage": exc.hint().render()}
    return killed_stops.with_notice(reply, project.ledger_root)
