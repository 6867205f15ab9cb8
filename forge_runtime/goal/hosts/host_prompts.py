"""The prompts the host sends a session on its own, told apart at UserPromptSubmit, where a
prompt forge blocks never reaches the model.

UserPromptSubmit's input names no sender (Claude Code 2.1.337 sends `session_id`,
`transcript_path`, `cwd`, `prompt_id`, `permission_mode` and `prompt`; its hook-input schema
declares a `source` this build leaves out), and the prompt's transcript entry, which does
name it (transcript.prompt_origin), is written after the hook answers: a prompt the hook
blocks gets none. What the hook can read instead, in the host's own words:
- `source`, where a host sends it: `user` and `sdk` are a person's, any other value (a
  wake-up's, a cron's, `system`) the host's;
- a background task's or monitor's notice, whose text opens with `<task-notification>`;
- the prompts the session's wake-ups and crons will send: every Stop's input lists them
  (`session_crons`, each `prompt` cut at 1,000 characters with a ` … [+N chars]` mark), and
  a fired one reaches UserPromptSubmit with exactly that text. The session's Stop keeps the
  list on its binding (`remember`); a one-shot that fired is taken off it (`forget_fired`).
Any other prompt reads as a person's here: a typed one carries nothing that could prove it,
and holding it would take the session from its person. The turn such a prompt starts is
still judged by its transcript entry at its first tool call and at its Stop
(events/after_end.py), so a prompt of the host's that forge cannot recognise here reaches
the model but does no work.
"""

from __future__ import annotations

CRONS = "session_crons"  # the binding's list: [{"prompt": ..., "recurring": bool}]
PERSON_SOURCES = ("user", "sdk")
NOTICE = "<task-notification>"
_CUT_OPEN, _CUT_CLOSE = " \u2026 [+", " chars]"
MAX_KEPT = 100  # scheduled prompts kept per session (the host lists each of its own)


def remember(binding: dict, event: dict) -> None:
    """Keep on `binding` the prompts this Stop's input says will wake the session; a Stop
    whose input lists none (Codex, an older host) leaves none."""
    crons = event.get(CRONS)
    kept = [{"prompt": cron["prompt"], "recurring": cron.get("recurring") is not False}
            for cron in crons if isinstance(cron, dict) and isinstance(cron.get("prompt"), str)
            ][:MAX_KEPT] if isinstance(crons, list) else []
    if kept:
        binding[CRONS] = kept
    else:
        binding.pop(CRONS, None)


def sent_by_host(event: dict, binding: dict) -> str | None:
    """What says the host sent this prompt on its own, in words, or None when nothing does."""
    source = event.get("source")
    if isinstance(source, str):
        return None if source in PERSON_SOURCES else f"its source is `{source}`"
    prompt = event.get("prompt")
    if not isinstance(prompt, str):
        return None
    if prompt.lstrip().startswith(NOTICE):
        return "a background task's notice"
    if _fired(binding, prompt) is not None:
        return "a wake-up or cron this session scheduled"
    return None


def forget_fired(binding: dict, prompt: str) -> bool:
    """Take the one-shot wake-up that sent `prompt` off `binding`; whether it changed."""
    index = _fired(binding, prompt)
    if index is None or binding[CRONS][index]["recurring"]:
        return False
    del binding[CRONS][index]
    if not binding[CRONS]:
        del binding[CRONS]
    return True


def _fired(binding: dict, prompt: str) -> int | None:
    """The index of the kept scheduled prompt that `prompt` is, or None."""
    crons = binding.get(CRONS)
    if not isinstance(crons, list):
        return None
    for index, cron in enumerate(crons):
        if isinstance(cron, dict) and isinstance(cron.get("prompt"), str) and \
                _same_prompt(prompt, cron["prompt"]):
            return index
    return None


def _same_prompt(prompt: str, listed: str) -> bool:
    """Whether `prompt` is the one the host listed as `listed` (cut, with its mark, past
    1,000 characters: then `prompt` starts with what is left and is longer)."""
    if prompt == listed:
        return True
    if not listed.endswith(_CUT_CLOSE):
        return False
    cut = listed.rfind(_CUT_OPEN)
    if cut < 0 or not listed[cut + len(_CUT_OPEN):-len(_CUT_CLOSE)].isdigit():
        return False
    head = listed[:cut]
    return len(prompt) > len(head) and prompt.startswith(head)
