"""An objective's identity: the same words always name the same goal.

The objective hash is taken over the normalised text (Unicode NFC, whitespace collapsed,
trimmed), so re-typing `/goal` with different spacing or a composed vs decomposed accent
still finds the goal and its consumed budget. Normalising also drops
what a hint cannot show (control, zero-width and bidi characters: `hints.sanitize`), so the
`Next: /goal <objective>` forge prints is exactly the goal it names: a person who types it
gets the same goal and its count, not a fresh one from zero.
"""

from __future__ import annotations

from forge_runtime.digest import sha256_hex
from forge_runtime.records import record

# What the host's `/goal` accepts as "clear the goal" (its own aliases).
CLEAR_WORDS = frozenset({"clear", "stop", "off", "reset", "none", "cancel"})
GOAL_COMMAND = "/goal"


def normalise(text: str) -> str:
    """NFC, every run of whitespace one space, trimmed, nothing a hint would not show.

    Whitespace (line separators included) becomes a space before the invisible characters
    go, so words never run together; NFC again because a dropped character can leave
    composable neighbours. Printable ASCII is its own NFC and holds nothing a hint would
    not show, so it only has its spaces collapsed, without importing `unicodedata` (and
    `hints`): every Stop of a goal normalises the condition the host says is running.
    """
    if text.isascii() and text.isprintable():
        return " ".join(text.split())
    import unicodedata

    from forge_runtime.hints import sanitize

    spaced = " ".join(unicodedata.normalize("NFC", text).split())
    return unicodedata.normalize("NFC", sanitize(spaced))


def objective_hash(text: str) -> str:
    """The stable identity of an objective: sha256 of its normalised UTF-8 text."""
    return sha256_hex(normalise(text).encode("utf-8"))


class GoalPrompt(record("GoalPrompt", "objective invisible", defaults=(False,))):
    """A prompt that is a `/goal` command: set an objective, clear, or show (no argument).

    `invisible` marks an argument made only of characters normalising drops (zero-width,
    bidi, control): the host would set a goal forge cannot name, so forge refuses it.
    """

    __slots__ = ()

    @property
    def is_clear(self) -> bool:
        return self.objective is not None and self.objective.lower() in CLEAR_WORDS

    @property
    def sets_goal(self) -> bool:
        return bool(self.objective) and not self.is_clear


def parse_goal_prompt(prompt: str) -> GoalPrompt | None:
    """The `/goal` command in `prompt`, or None when the prompt is anything else."""
    text = prompt.strip()
    if text != GOAL_COMMAND and not text.startswith(GOAL_COMMAND + " ") and \
            not text.startswith(GOAL_COMMAND + "\t") and not text.startswith(GOAL_COMMAND + "\n"):
        return None
    argument = text[len(GOAL_COMMAND):]
    objective = normalise(argument)
    return GoalPrompt(objective or None, invisible=not objective and bool(argument.strip()))
