"""The brief: four sections that a clarify step freezes and every later step starts from.

    brief = Brief.parse(answer)           # tolerant: any heading style, en / zh / ru
    brief.missing()                       # ['边界 (Boundaries)'] - empty when complete
    brief[ACCEPTANCE]                     # a section's body, by canonical name
    brief.to_markdown()                   # canonical headings, bodies as written
    brief.prompt_block()                  # compact, for the next step's prompt

Parsing is one pass over the lines, so it is linear in the text:
- fenced blocks (``` and ~~~) are dropped first; an unclosed fence drops everything after
  it, so an answer cut off inside a code block cannot pass as complete;
- a heading opens a section only where it stands as a heading (see `headings.classify`);
  block quotes, list items and lines that merely begin with a heading word are body text;
- text before the first section, and after a heading that names no section, is dropped;
- a section written twice keeps its first non-empty body;
- the placeholder `to_markdown` writes for an empty section reads back as empty.

`## Amendments` holds what a person adds while work runs, one timestamped entry each; it
never merges into the four sections.
"""

from __future__ import annotations

import re
from collections import namedtuple
from datetime import UTC, datetime
from pathlib import Path

from forge_runtime.clarify import headings
from forge_runtime.clarify.headings import (
    ACCEPTANCE,
    AMENDMENTS,
    BODY,
    END,
    GOAL,
    SECTIONS,
)

PLACEHOLDER = "_(empty: to be clarified)_"
ESCAPE = "\\"
_ENTRY = re.compile(r"### (\d{4}-\d\d-\d\d \d\d:\d\d:\d\d UTC)")
TIMESTAMP_FORMAT = "%Y-%m-%d %H:%M:%S UTC"

Amendment = namedtuple("Amendment", "at text")
"""One addition a person made while work ran: `at` is a `TIMESTAMP_FORMAT` time."""


def now_stamp() -> str:
    return datetime.now(UTC).strftime(TIMESTAMP_FORMAT)


def _normal_lines(text: str) -> list[str]:
    return text.replace("\r\n", "\n").replace("\r", "\n").split("\n")


def _body(lines: list[str]) -> str:
    """Lines as a section body: trailing spaces and surrounding blank lines dropped."""
    lines = [line.rstrip() for line in lines]
    while lines and not lines[0]:
        lines.pop(0)
    while lines and not lines[-1]:
        lines.pop()
    text = "\n".join(lines)
    return "" if text == PLACEHOLDER else text


def _unescape(line: str) -> str:
    """A line `to_markdown` escaped (`\\## Goal`) as it was written."""
    stripped = line.lstrip()
    if stripped.startswith(ESCAPE):
        rest = stripped[1:]
        indent = line[:len(line) - len(stripped)]
        if headings.fence_of(rest) or headings.classify(rest, 2) is not BODY \
                or _ENTRY.fullmatch(rest.strip()) or rest.startswith(ESCAPE):
            return indent + rest
    return line


class Brief:
    """Four sections by canonical name, plus amendments. Compared by sections and amendments.

    `language` ('en', 'zh' or 'ru') is the language the headings were written in; it only
    decides how `missing()` names sections, and is not part of equality.
    """

    __slots__ = ("sections", "amendments", "language")

    def __init__(self, sections: dict[str, str] | None = None,
                 amendments: tuple[Amendment, ...] | list[Amendment] = (),
                 language: str = "en") -> None:
        given = dict(sections or {})
        unknown = set(given) - set(SECTIONS)
        if unknown:
            raise ValueError(f"a brief has no section {sorted(unknown)[0]!r}; "
                             f"its sections are {', '.join(SECTIONS)}")
        self.sections = {name: _body(_normal_lines(given.get(name) or "")) for name in SECTIONS}
        kept = []
        for amendment in amendments:
            if not _ENTRY.fullmatch(f"### {amendment.at}"):
                raise ValueError(f"an amendment's time reads like {now_stamp()!r}, "
                                 f"not {amendment.at!r}")
            text = _body(_normal_lines(amendment.text))
            if text:
                kept.append(Amendment(amendment.at, text))
        self.amendments = tuple(kept)
        self.language = language

    # -- reading ---------------------------------------------------------------------------

    @classmethod
    def parse(cls, text: str) -> Brief:
        """The brief in `text`, however its headings are written (see the module doc)."""
        bodies: dict[str, list[str]] = {}
        settled: set[str] = set()  # sections whose first non-empty body is found
        entries: list[tuple[str, list[str]]] = []
        current: str | None = None
        level: int | None = None
        target: list[str] | None = None
        language = None
        fence: str | None = None
        for line in _normal_lines(text):
            if fence is not None:
                if headings.closes(line, fence):
                    fence = None
                continue
            opened = headings.fence_of(line)
            if opened:
                fence = opened
                continue
            if current == AMENDMENTS:
                entry = _ENTRY.fullmatch(line.strip())
                if entry:
                    target = []
                    entries.append((entry.group(1), target))
                    continue
            kind = headings.classify(line, level, current)
            if kind is BODY:
                if target is not None:
                    target.append(_unescape(line))
                continue
            if kind is END:
                current, level, target = None, None, None
                continue
            current, level = kind.name, kind.level
            if current == AMENDMENTS:
                target = None
                continue
            language = language or headings.language_of(kind.label)
            if current in settled or _body(bodies.get(current, [])):
                settled.add(current)
                target = None  # a section written twice keeps its first non-empty body
            else:
                target = bodies[current] = [kind.text] if kind.text else []
        return cls({name: "\n".join(lines) for name, lines in bodies.items()},
                   [Amendment(at, "\n".join(lines)) for at, lines in entries],
                   language or "en")

    @classmethod
    def load(cls, path: str | Path) -> Brief:
        """The brief in a file (UTF-8), read as a hook reads the work tree (safeio.py): a
        link below the project root, a FIFO or a device is refused (UnsafePath)."""
        from forge_runtime import safeio
        from forge_runtime.roots import root_of_forge_path

        return cls.parse(safeio.read_text(path, root_of_forge_path(path)))

    def __getitem__(self, name: str) -> str:
        """A section's body by canonical name (`Brief.parse(t)["Goal"]`); '' when empty."""
        return self.sections[name]

    def __eq__(self, other: object) -> bool:
        if not isinstance(other, Brief):
            return NotImplemented
        return (self.sections, self.amendments) == (other.sections, other.amendments)

    def __hash__(self) -> int:
        return hash((tuple(self.sections.items()), self.amendments))

    def __repr__(self) -> str:
        filled = [name for name in SECTIONS if self.sections[name]]
        return f"Brief(filled={filled}, amendments={len(self.amendments)})"

    @property
    def lacking(self) -> tuple[str, ...]:
        """Canonical names of the empty sections, in order."""
        return tuple(name for name in SECTIONS if not self.sections[name])

    @property
    def complete(self) -> bool:
        return not self.lacking

    def missing(self) -> list[str]:
        """The empty sections, named in the brief's language and in English:
        `Boundaries`, or `边界 (Boundaries)` for a brief written in Chinese."""
        local = headings.LOCAL_NAMES.get(self.language, {})
        return [f"{local[name]} ({name})" if name in local else name for name in self.lacking]

    # -- writing ---------------------------------------------------------------------------

    def to_markdown(self) -> str:
        """Canonical headings, bodies as written, the placeholder for an empty section.

        A body line that would read back as structure (a heading, a fence) is escaped with a
        backslash, as Markdown does, so `Brief.parse(b.to_markdown()) == b` for any brief.
        """
        parts = []
        for name in SECTIONS:
            body = self.sections[name]
            parts.append(f"## {name}\n\n{_escaped(body, name) if body else PLACEHOLDER}\n")
        if self.amendments:
            entries = "\n".join(f"### {a.at}\n\n{_escaped(a.text, AMENDMENTS)}\n"
                                for a in self.amendments)
            parts.append(f"## {AMENDMENTS}\n\n{entries}")
        return "\n".join(parts)

    def prompt_block(self) -> str:
        """The brief in few lines for the next step's prompt: no placeholders, no blank lines."""
        out = []
        for name in SECTIONS:
            body = [line for line in self.sections[name].split("\n") if line.strip()]
            out.append(f"{name}:" + (f" {body[0].strip()}" if len(body) == 1 else ""))
            if len(body) > 1:
                out.extend(body)
        if self.amendments:
            out.append(f"{AMENDMENTS} (newer than the sections above; they win):")
            out.extend(f"- {a.at}: {' '.join(a.text.split())}" for a in self.amendments)
        return "\n".join(out)

    def amended(self, text: str, at: str | None = None) -> Brief:
        """This brief with one more amendment (now, unless `at` is given)."""
        return Brief(self.sections, (*self.amendments, Amendment(at or now_stamp(), text)),
                     self.language)

    @property
    def goal_condition(self) -> str:
        """A `/goal` condition made from the acceptance criteria (the goal when there are none)."""
        items = [re.sub(r"^\s*(?:[-*+]|\d+[.)])\s+(?:\[[ xX]\]\s+)?", "", line).strip()
                 for line in self.sections[ACCEPTANCE].split("\n") if line.strip()]
        items = [item for item in items if item]
        if not items:
            return " ".join(self.sections[GOAL].split())
        return "every acceptance criterion of the brief holds: " + "; ".join(items)


def _escaped(body: str, name: str) -> str:
    lines = []
    for line in body.split("\n"):
        stripped = line.lstrip()
        structural = (headings.fence_of(line) is not None
                      or headings.classify(line, 2, name) is not BODY
                      or (name == AMENDMENTS and _ENTRY.fullmatch(stripped) is not None)
                      or (stripped.startswith(ESCAPE) and _unescape(line) != line))
        if structural:
            indent = line[:len(line) - len(stripped)]
            line = f"{indent}{ESCAPE}{stripped}"
        lines.append(line)
    return "\n".join(lines)


def parse(text: str) -> Brief:
    """`Brief.parse`: the brief in `text`."""
    return Brief.parse(text)


def load(path: str | Path) -> Brief:
    """`Brief.load`: the brief in a file."""
    return Brief.load(path)


__all__ = ["Amendment", "Brief", "PLACEHOLDER", "SECTIONS", "load", "parse"]
