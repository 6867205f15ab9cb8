"""`clarify_step`: the question-only step that ends with a frozen brief.

    channel = HumanChannel(max_asks=5)
    workflow = Workflow([clarify_step(channel, wish="add CSV export"), work_step])

- Skipped when a complete brief is frozen; its `prompt_block()` still goes into the context.
- The clarifier session may use only Read, Grep, Glob and `mcp__human__ask`, in permission
  mode "default", with forge's guard for the clarifier role as its PreToolUse hook: the
  model can call any tool the host offers, and the guard is what denies it.
- The gate passes only a complete brief; an incomplete one goes back to the same session,
  asked only for the missing sections.
- The brief is frozen by forge (`store.freeze`), never written by the model; what the next
  step gets is `prompt_block()`.
- The session's id is kept in `.forge/local/clarify-session.json` until the brief is
  frozen: a clarify that was interrupted resumes that session with a prompt that continues
  it (ask only what is still open), not with the original wish.
"""

from __future__ import annotations

import json
import shlex
from collections.abc import Callable
from pathlib import Path

from forge_runtime.clarify.brief import Brief
from forge_runtime.clarify.channel import ASK_TOOL, SERVER_NAME, HumanChannel
from forge_runtime.clarify.headings import SECTIONS
from forge_runtime.clarify.store import freeze, frozen
from forge_runtime.guard.sdk import whitelist_guard
from forge_runtime.workflow.core import Session, Step, Workbench
from forge_runtime.workflow.session import SdkSession

STEP_NAME = "clarify"
ROLE = "clarifier"
CLARIFIER_TOOLS = ("Read", "Grep", "Glob", ASK_TOOL)
RESUME_NAME = "clarify-session.json"
DIALOGUE_NAME = "clarify-dialogue.jsonl"
DEFAULT_RETRIES = 2
TOOL_SEARCH_ENV = "ENABLE_TOOL_SEARCH"

SYSTEM_PROMPT = f"""You are forge's clarifier. You find out what is really being asked before \
anyone builds it. You may read the project (Read, Grep, Glob) and ask the person with the \
{ASK_TOOL} tool; nothing else. You never write files, run commands or propose code: forge's \
guard denies every other tool, so do not try another way.

Ask one question at a time, most decisive first, and only what the project cannot tell you. \
When the ask tool tells you to decide yourself, do so: record the question and your \
assumption under "Unknowns and assumptions", do not ask it again and do not stop.

End with the brief as your final answer, in exactly these four Markdown sections:
{chr(10).join(f"## {name}" for name in SECTIONS)}
forge freezes it from your answer; you do not save it."""

FIRST_PROMPT = "Clarify this request, then answer with the brief:\n\n{wish}"
CONTINUE_PROMPT = ("This clarification was interrupted. Continue it: ask only what is still "
                   "open (never again what was already answered or decided), then answer with "
                   "the complete brief.")
MISSING_PROMPT = ("Your brief lacks: {missing}. Fill in only those sections, asking the person "
                  "only about them if you must (never again about what is already answered), "
                  "and answer with the complete brief, all four sections.")


def resume_path(bench: Workbench) -> Path:
    return bench.local_dir / RESUME_NAME


def dialogue_path(bench: Workbench) -> Path:
    return bench.local_dir / DIALOGUE_NAME


def interrupted_session(bench: Workbench) -> str | None:
    """The id of a clarify session that ended before its brief was frozen, if any."""
    try:
        record = json.loads(resume_path(bench).read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    session_id = record.get("session_id") if isinstance(record, dict) else None
    return session_id if isinstance(session_id, str) and session_id else None


def _remember(bench: Workbench, session_id: str) -> None:
    path = resume_path(bench)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(json.dumps({"session_id": session_id}) + "\n", encoding="utf-8")


def clarifier_options(channel: HumanChannel, bench: Workbench, **overrides):
    """The clarifier session's `ClaudeAgentOptions`; `overrides` (cli_path, env, ...) win."""
    from claude_agent_sdk import ClaudeAgentOptions


    # The host defers MCP tools behind its ToolSearch tool unless told not to; the clarifier's
    # one way to the person must be in every request's tool list.
    env = {TOOL_SEARCH_ENV: "false", **overrides.pop("env", {})}
    settings = dict(
        env=env, cwd=str(bench.root), system_prompt=SYSTEM_PROMPT, permission_mode="default",
        allowed_tools=list(CLARIFIER_TOOLS), mcp_servers={SERVER_NAME: channel.server()},
        hooks={"PreToolUse": whitelist_guard(CLARIFIER_TOOLS, role=ROLE)})
    settings.update(overrides)
    return ClaudeAgentOptions(**settings)


def clarify_step(channel: HumanChannel, *, brief_path: Path | None = None, prompt: str,
                 new: bool = False, retries: int = DEFAULT_RETRIES,
                 session: Callable[[Workbench, str | None], Session] | None = None,
                 **options) -> Step:
    """The clarify `Step` for the wish `prompt`; `new` replaces a frozen brief.

    `session(bench, resume_id)` makes the session (default: an `SdkSession` with
    `clarifier_options(channel, bench, **options)`).
    """
    def path(bench: Workbench) -> Path:
        return brief_path or bench.brief_path

    def when(bench: Workbench) -> bool:
        return new or frozen(path(bench)) is None

    def skipped(bench: Workbench) -> str:
        return frozen(path(bench)).prompt_block()

    def first_prompt(bench: Workbench) -> str:
        if interrupted_session(bench):
            return CONTINUE_PROMPT
        return FIRST_PROMPT.format(wish=prompt)

    def make_session(bench: Workbench) -> Session:
        if new:  # a new brief starts a new clarification
            resume_path(bench).unlink(missing_ok=True)
        resume = interrupted_session(bench)
        if session is not None:
            made = session(bench, resume)
        else:
            made = SdkSession(clarifier_options(channel, bench, **options), resume=resume,
                              on_session_id=lambda sid: _remember(bench, sid))
        return made

    def gate(bench: Workbench, reply: str) -> str | None:
        brief = Brief.parse(reply)
        return None if brief.complete else MISSING_PROMPT.format(missing=", ".join(brief.lacking))

    def reduce(bench: Workbench, reply: str) -> str:
        brief = Brief.parse(reply)
        # An incomplete file there was never frozen: it is kept aside like a replaced one.
        freeze(brief, path(bench), new=new or path(bench).exists())
        resume_path(bench).unlink(missing_ok=True)
        return brief.prompt_block()

    return Step(STEP_NAME, first_prompt, make_session, when=when, gate=gate, reduce=reduce,
                skipped=skipped, retries=retries,
                fix=f"forge clarify {shlex.quote(prompt)} --new")
