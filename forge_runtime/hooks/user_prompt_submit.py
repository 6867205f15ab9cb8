"""UserPromptSubmit: note a `/goal` prompt for confirmation at its first Stop.

A prompt here may come from a person or from something a model scheduled, so nothing is
activated yet (see forge_runtime/goal/events.py). A session without a goal that sends
anything but `/goal` pays a string check and three stats. A session with a goal (or
setting one) is told when forge's Stop hooks were being killed (forge_runtime/goal/kills.py).
"""

REQUIRED: dict[str, type] = {"prompt": str}


def handle(event: dict) -> dict | None:
    from forge_runtime.goal import sessions

    if not event["prompt"].lstrip().startswith("/goal") and \
            not sessions.event_involvement(event):
        return None
    from forge_runtime.errors import ForgeError
    from forge_runtime.gates.goal import PROMPT_BUDGET_SECONDS, note_if_met
    from forge_runtime.goal import kills
    from forge_runtime.goal.events import on_prompt

    reply = on_prompt(event)
    try:
        note_if_met(event, PROMPT_BUDGET_SECONDS)
    except ForgeError as exc:  # the goal's gates record is not forge's: its next Stop ends it
        reply = reply or {"systemMessage": exc.hint().render()}
    return kills.with_notice(reply, sessions.project_for(event).ledger_root)
