"""SubagentStop: freeze the brief that forge's clarifier agent answered with.

The clarifier (`forge:clarifier`) may not write, so forge writes the brief, through the
same `store.freeze` the CLI and the runtime use. A complete brief is frozen at
`.forge/notes/brief.md` (a brief frozen earlier is kept as `brief.<n>.md`: the person ran
`/forge:clarify` again). An incomplete one is not frozen: it is kept as a draft in
`.forge/local/brief-draft.md`, and the main session is told what is missing, with a `Next:`.

The host's SubagentStop input carries the subagent's final answer as
`last_assistant_message` (measured on Claude Code 2.1.332); the agent's own transcript
(`agent_transcript_path`) is read only when that field is missing.
hooks.json registers it with `"matcher": "forge:clarifier"`, which the host matches
against the agent type (measured): it does not even start for other subagents. Should it
run for one anyway (a hand-written settings file), that costs one dictionary lookup.
"""

REQUIRED: dict[str, type] = {}
CLARIFIER = "forge:clarifier"
DRAFT_NAME = "brief-draft.md"
AGAIN = "/forge:clarify complete the draft brief"


def handle(event: dict) -> dict | None:
    if event.get("agent_type") != CLARIFIER:
        return None
    answer = event.get("last_assistant_message")
    if not isinstance(answer, str):
        answer = _last_answer(event.get("agent_transcript_path"))
    from forge_runtime.clarify.store import write_atomically
    from forge_runtime.project import find_project

    project = find_project(event.get("cwd"))
    try:
        said = freeze_answer(answer or "", project).render()
        # For the main session: its PostToolUse of the Agent call hands this on.
        write_atomically(outcome_path(project, event["session_id"]), said)
    except OSError as exc:  # a link out of the project, a FIFO: refused, nothing written
        from forge_runtime import hints

        said = hints.error(f"forge's clarifier hook did not write {exc.filename}: "
                           f"{exc.strerror}", "ls -la .forge .forge/notes .forge/local",
                           "shows what stands there instead of forge's folders; move it "
                           "away, then run /forge:clarify again").render()
    return {"systemMessage": said}


def outcome_path(project, session_id: str):
    """Where the verdict on a session's clarifier waits for that session's PostToolUse."""
    return project.local_dir / f"clarify-outcome-{session_id}.txt"


def freeze_answer(answer: str, project):
    """Freeze `answer`'s brief in `project` when complete; the `Hint` saying what happened."""
    from forge_runtime import hints
    from forge_runtime.clarify.brief import Brief
    from forge_runtime.clarify.store import brief_path, freeze, write_atomically

    brief = Brief.parse(answer)
    if not brief.complete:
        write_atomically(project.local_dir / DRAFT_NAME, brief.to_markdown())
        return hints.next_(AGAIN, f"forge did not freeze the clarifier's brief: it lacks "
                                  f"{', '.join(brief.missing())} (draft kept in "
                                  f".forge/local/{DRAFT_NAME})")
    done = freeze(brief, brief_path(project.forge_dir), new=True)
    from forge_runtime import safeio

    safeio.remove(project.local_dir / DRAFT_NAME, project.root)
    kept = f"; the earlier one is kept as {done.kept.name}" if done.kept else ""
    return hints.next_(f"/goal {brief.goal_condition}",
                       f"forge froze the clarifier's brief at .forge/notes/brief.md{kept}")


def _last_answer(transcript_path: object) -> str | None:
    """The text of the last assistant entry in a subagent's transcript (JSON lines)."""
    if not isinstance(transcript_path, str):
        return None
    import json

    from forge_runtime import safeio

    try:  # the host's file, outside the work tree; never waited on all the same
        text = safeio.read_text(transcript_path)
        entries = [json.loads(line) for line in text.splitlines() if line.strip()]
    except (OSError, ValueError):
        return None
    for entry in reversed(entries):  # any JSON at all may stand on a line
        message = entry.get("message") if isinstance(entry, dict) else None
        if isinstance(message, dict) and entry.get("type") == "assistant":
            content = message.get("content")
            if isinstance(content, list):
                texts = [b["text"] for b in content if isinstance(b, dict)
                         and b.get("type") == "text" and isinstance(b.get("text"), str)]
                if texts:
                    return "\n".join(texts)
    return None
