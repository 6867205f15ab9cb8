"""Where the work stands when forge stops a goal: the checklist's progress and next step.

The person reads this where forge stops (the Stop reply's `stopReason`, which the host shows
in the TUI and renders into the model's next request as a system reminder), so nobody has
to open `.forge/local/state.md` to learn that "parse the header row" is next. The same
numbers feed the status line and `forge goal status`.

The checklist is agent-written text: it is sanitised (no control, bidi or zero-width
characters) and cut short before it reaches a person's screen or a model's context.
Reading it never raises: a stop message must still be sent when state.md is broken.
"""

from __future__ import annotations

import os

from forge_runtime.records import record

LABEL = "Checkpoint"
STEP_LIMIT = 160


def _shortened(text: str, limit: int) -> str:
    from forge_runtime.hints import sanitize

    clean = sanitize(text)
    return clean if len(clean) <= limit else clean[:limit - 1].rstrip() + "…"


class Checkpoint(record("_CheckpointFields", "done total next_step")):
    """The checklist's ticked steps, all its steps, and the first unchecked one (or None).

    A record (records.py), not a dataclass or a named tuple: the status line and every
    charging Stop import this, and `dataclasses` or `collections` cost a few milliseconds
    in a lean interpreter.
    """

    __slots__ = ()

    def progress(self) -> str:
        """`3 of 7 steps done`, or that there is no checklist."""
        if not self.total:
            return "no checklist steps in .forge/local/state.md"
        return f"{self.done} of {self.total} step{'' if self.total == 1 else 's'} done"

    def step(self, limit: int = STEP_LIMIT) -> str | None:
        """The next unchecked step, safe to show, at most `limit` characters."""
        return _shortened(self.next_step, limit) if self.next_step else None

    def describe(self) -> str:
        """One sentence: `3 of 7 steps done; next unchecked step: parse the header row`."""
        if not self.total:
            return self.progress()
        step = self.step()
        return f"{self.progress()}; " + (f"next unchecked step: {step}" if step
                                          else "no unchecked step left")


def of_tasks(tasks: list[tuple[bool, str]]) -> Checkpoint:
    """The checkpoint of a checklist given as (done, text) pairs (`StateFile.tasks`)."""
    return Checkpoint(sum(1 for done, _ in tasks if done), len(tasks),
                      next((text for done, text in tasks if not done), None))


def read(state_path: str | os.PathLike) -> Checkpoint | None:
    """The checkpoint of a state file, or None when it cannot be read as forge's format."""
    from forge_runtime.errors import ForgeError
    from forge_runtime.goal.store import state_file

    try:
        return of_tasks(state_file.read(state_path).tasks)
    except (ForgeError, OSError, ValueError):
        return None


def line(state_path: str | os.PathLike) -> str:
    """`Checkpoint: 3 of 7 steps done; next unchecked step: ...`, for a stop message."""
    found = read(state_path)
    if found is None:
        return f"{LABEL}: unknown (.forge/local/state.md cannot be read)"
    return f"{LABEL}: {found.describe()}"


def stamped(text: str, state_path: str | os.PathLike) -> str:
    """A rendered stop message with the checkpoint line added before its hint.

    The hint stays exactly as it was and still ends the text (the hint contract); the
    checkpoint joins the message's own lines (before `Error:` when there are none).
    """
    from forge_runtime import hints

    try:
        body, hint = hints.split_rendered(text)
    except ValueError:  # not a hint-ending text: leave it as it is rather than garble it
        return text
    return "\n".join([*body, line(state_path), hint.render()])


def refusal(error, state_path: str | os.PathLike) -> str:
    """A refusal's rendered text for a Stop reply; a tampered or moved ledger or state, and a
    wedged charge, also say where the work stands. Other refusals keep their text: a work
    tree taken by another goal, for one, holds that goal's checklist, not this one's."""
    from forge_runtime.goal.store.ledger import TAMPERED
    from forge_runtime.goal.store.lock import WEDGED
    from forge_runtime.goal.sync.ledger_location import MOVED

    text = error.hint().render()
    return stamped(text, state_path) if error.code in (TAMPERED, WEDGED, MOVED) else text
