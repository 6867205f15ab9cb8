"""The hint contract: every forge output ends by saying what to do next.

One module renders hints for every surface (CLI text, CLI JSON, MCP, hook output) so the
same state always gives the same words. An output ends with exactly one of:

    Next: <full command>          the one thing to do now
    Wait: <condition>             nothing to do until the condition holds
    Done.                         nothing left to do
    Error: <what went wrong>      followed by
    Fix: <full command>           the command that repairs it

`Or: <command>` lines may follow a `Next:`/`Fix:`/`Wait:` as fallbacks, and a hint may carry
one line of rationale. JSON carries the same content as `_next_action` and `_hint`.

This module is imported by hooks on their hot path: standard library only, nothing heavy.
"""

from forge_runtime.records import record

NEXT = "Next"
WAIT = "Wait"
DONE = "Done"
FIX = "Fix"
OR = "Or"

MARKERS = (NEXT, OR, WAIT, DONE, FIX)

# Things that look like template slots rather than real values: `<id>`, `{name}`, `ID`, `...`.
_PLACEHOLDER = r"<[^<>\s]+>|\{[A-Za-z_][A-Za-z0-9_]*\}|\.\.\.|\bTODO\b|\bXXX\b"
_UNSAFE_CATEGORIES = {"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"}


def sanitize(text: object) -> str:
    """Return `text` as one safe line: no control, zero-width, bidi or unassigned characters.

    User data (objectives, file names, IDs) flows into hints that people copy into a shell
    and that models read; an invisible bidi override or a newline could make the text say
    something other than what it shows.
    """
    cleaned = []
    for char in str(text):
        if char in "\t\n\r\v\f":
            cleaned.append(" ")
        elif char.isascii():
            if char.isprintable():  # every other ASCII character is a control (Cc)
                cleaned.append(char)
        elif _category(char) not in _UNSAFE_CATEGORIES:
            cleaned.append(char)
    return " ".join("".join(cleaned).split())


def _category(char: str) -> str:
    import unicodedata  # here only: an ASCII hint, as most are, needs no Unicode table

    return unicodedata.category(char)


def has_placeholder(command: str) -> bool:
    """True when `command` still holds a template slot such as `<id>`."""
    import re  # here only: every deny renders a hint, and `re` costs it a bare start

    return bool(re.search(_PLACEHOLDER, command))


class Hint(record("_HintFields", "marker text rationale error alternatives",
                  defaults=(None, None, None, ()))):
    """What to do after an output. Build one with `next_`, `wait`, `done` or `error`.

    Immutable and compared by value, like a frozen dataclass; a record (records.py) because
    every deny and every hook reply imports this module, and `dataclasses` or `collections`
    cost a lean interpreter a bare start or more there.
    """

    __slots__ = ()

    def __new__(cls, marker: str, text: str | None = None, rationale: str | None = None,
                error: str | None = None, alternatives: tuple[str, ...] = ()) -> "Hint":
        if marker not in (NEXT, WAIT, DONE, FIX):
            raise ValueError(f"a hint's marker is Next, Wait, Done or Fix, not {marker!r}")
        if (marker == DONE) != (text is None):
            raise ValueError("Done carries no command; every other marker needs one")
        if (marker == FIX) != (error is not None):
            raise ValueError("Fix goes with an error, and an error with Fix")
        return super().__new__(cls, marker, text, rationale, error, tuple(alternatives))

    @property
    def next_action(self) -> str | None:
        """The command a caller should run now, or None (waiting, or done)."""
        return self.text if self.marker in (NEXT, FIX) else None

    def lines(self) -> list[str]:
        """The hint as text lines, in contract order."""
        out: list[str] = []
        if self.marker == FIX:
            out.append(f"Error: {self.error}")
        if self.marker == DONE:
            out.append("Done.")
        else:
            out.append(f"{self.marker}: {self.text}")
        if self.rationale:
            out.append(f"  {self.rationale}")
        out.extend(f"Or: {alt}" for alt in self.alternatives)
        return out

    def render(self) -> str:
        return "\n".join(self.lines())

    def as_json(self) -> dict:
        """`_next_action` and `_hint`, to merge at the top level of a JSON output."""
        hint: dict = {"marker": self.marker}
        if self.text is not None:
            hint["command" if self.marker != WAIT else "condition"] = self.text
        if self.error is not None:
            hint["error"] = self.error
        hint["rationale"] = self.rationale
        if self.alternatives:
            hint["or"] = list(self.alternatives)
        return {"_next_action": self.next_action, "_hint": hint}


def _clean_or(alternatives: tuple[str, ...] | list[str] | None) -> tuple[str, ...]:
    return tuple(sanitize(alt) for alt in alternatives or ())


def _clean_rationale(rationale: str | None) -> str | None:
    return sanitize(rationale) if rationale else None


def next_(command: str, rationale: str | None = None, *, or_: list[str] | None = None) -> Hint:
    """`Next: <command>`: the one thing to do now."""
    return Hint(NEXT, sanitize(command), _clean_rationale(rationale), None, _clean_or(or_))


def wait(condition: str, rationale: str | None = None, *, or_: list[str] | None = None) -> Hint:
    """`Wait: <condition>`: nothing to run until it holds."""
    return Hint(WAIT, sanitize(condition), _clean_rationale(rationale), None, _clean_or(or_))


def done(rationale: str | None = None) -> Hint:
    """`Done.`: nothing left to do."""
    return Hint(DONE, None, _clean_rationale(rationale))


def error(message: str, fix: str, rationale: str | None = None, *,
          or_: list[str] | None = None) -> Hint:
    """`Error: <message>` then `Fix: <command>`."""
    return Hint(FIX, sanitize(fix), _clean_rationale(rationale), sanitize(message),
                _clean_or(or_))


def parse_lines(text: str) -> list[tuple[str, str]]:
    """The hint lines of an output as (marker, rest) pairs, in order; for contract checks."""
    found = []
    for line in text.splitlines():
        if line == "Done.":
            found.append((DONE, ""))
            continue
        for marker in ("Error", *MARKERS):
            prefix = f"{marker}: "
            if line.startswith(prefix):
                found.append((marker, line[len(prefix):]))
                break
    return found


def split_rendered(text: str) -> tuple[list[str], Hint]:
    """An output that ends in a rendered hint, as its body lines and that `Hint` again.

    A surface that is handed a hook reply already rendered (the Stop hook's `stopReason`)
    shows it through the contract with the very same words, instead of wrapping it in a
    second hint. Raises ValueError when `text` does not end with exactly one hint.
    """
    lines = text.splitlines()
    end = len(lines)
    alternatives: list[str] = []
    while end and lines[end - 1].startswith(f"{OR}: "):
        end -= 1
        alternatives.insert(0, lines[end][len(OR) + 2:])
    rationale = None
    if end and lines[end - 1].startswith("  "):
        end -= 1
        rationale = lines[end].strip()
    head = lines[end - 1] if end else ""
    if head == "Done." and not alternatives:
        return lines[:end - 1], done(rationale)
    for marker, build in ((NEXT, next_), (WAIT, wait)):
        if head.startswith(f"{marker}: "):
            return lines[:end - 1], build(head[len(marker) + 2:], rationale, or_=alternatives)
    if head.startswith(f"{FIX}: ") and end >= 2 and lines[end - 2].startswith("Error: "):
        return lines[:end - 2], error(lines[end - 2][len("Error: "):], head[len(FIX) + 2:],
                                      rationale, or_=alternatives)
    if head.startswith(f"{FIX}: ") or head.startswith("Error: "):
        raise ValueError("Error: without Fix:" if head.startswith("Error: ")
                         else "Fix: without the Error: it repairs")
    raise ValueError("does not end with Next:, Wait:, Done. or Error: + Fix:")


def commands_of(hint: Hint) -> list[str]:
    """Every runnable command a hint names (its own and its fallbacks), for contract checks."""
    own = [hint.text] if hint.marker in (NEXT, FIX) and hint.text else []
    return own + list(hint.alternatives)
