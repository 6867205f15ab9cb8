"""What a new artifact of each kind holds: its sections, which ones validation requires.

A new artifact's sections hold `<fill in: ...>` placeholders; `validate` fails (MUST) while
any is left, so a template nobody filled in can never be activated.
"""

from __future__ import annotations

import re

# kind -> (sections that MUST be present and filled, sections that SHOULD be)
SECTIONS: dict[str, tuple[tuple[str, ...], tuple[str, ...]]] = {
    "prd": (("Goal", "Acceptance criteria", "Boundaries"), ("Unknowns and assumptions",)),
    "rfc": (("Context", "Proposal"), ("Alternatives",)),
    "adr": (("Context", "Decision", "Consequences"), ()),
    "problem": (("Symptoms",), ("Impact",)),
    "evidence": (("Method", "Result"), ()),
    "note": ((), ()),
}

PLACEHOLDER = re.compile(r"<fill in:[^>]*>")
PROMPTS = {
    "Goal": "what must be true when this is done",
    "Acceptance criteria": "checks that prove it, one per line",
    "Boundaries": "what is out of scope, what must not change",
    "Unknowns and assumptions": "what is not known yet, and what is assumed",
    "Context": "the situation that calls for this",
    "Proposal": "what to build and how",
    "Alternatives": "what else was considered, and why not",
    "Decision": "what was decided",
    "Consequences": "what follows from it, good and bad",
    "Symptoms": "what goes wrong, how to see it",
    "Impact": "who it hurts, how much",
    "Method": "what was run or examined, exactly",
    "Result": "what it showed, with numbers",
}


def body(kind: str, title: str) -> str:
    """The Markdown body of a new artifact: its title and every section with a prompt."""
    must, should = SECTIONS[kind]
    parts = [f"\n# {title}\n"]
    for section in (*must, *should):
        parts.append(f"\n## {section}\n\n<fill in: {PROMPTS[section]}>\n")
    if not must and not should:
        parts.append("\n<fill in: the note>\n")
    return "".join(parts)


def from_sections(title: str, filled: dict[str, str]) -> str:
    """A body whose sections hold the given text, in the given order."""
    parts = [f"\n# {title}\n"]
    parts.extend(f"\n## {section}\n\n{text.strip()}\n" for section, text in filled.items())
    return "".join(parts)
