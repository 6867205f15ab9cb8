"""What counts as a section heading of a brief, in English, Chinese and Russian.

A brief has exactly four sections. People and models write their headings in many ways
(`## Goal`, `**Objective**`, `1. 目标：...`, `Цель:`); this module reads one line and says
whether it opens a section, ends one, or is body text. One rule guards against the error
the anchor's parser made: a heading word starts a section only where it stands as a
heading (a Markdown heading line, a bold line, or the word followed by a colon), never
where a body line merely begins with it ("Assumptions hold that ..." is body text).

The parser and the renderer share `classify`, so the renderer can escape exactly the body
lines that would otherwise be read as structure.
"""

from __future__ import annotations

import re
from collections import namedtuple

GOAL = "Goal"
ACCEPTANCE = "Acceptance criteria"
BOUNDARIES = "Boundaries"
UNKNOWNS = "Unknowns and assumptions"
SECTIONS = (GOAL, ACCEPTANCE, BOUNDARIES, UNKNOWNS)
AMENDMENTS = "Amendments"

# Canonical name -> what a heading may say instead (compared casefolded, with ё read as е).
SYNONYMS: dict[str, tuple[str, ...]] = {
    GOAL: ("goal", "goals", "the goal", "objective", "objectives", "aim", "purpose",
           "目标", "目的", "цель", "цели"),
    ACCEPTANCE: ("acceptance criteria", "acceptance", "acceptance checks", "success criteria",
                 "definition of done", "done when", "验收标准", "验收条件", "验收", "完成标准",
                 "критерии приёмки", "критерии готовности", "критерии приемки"),
    BOUNDARIES: ("boundaries", "boundary", "scope", "out of scope", "non-goals", "non goals",
                 "nongoals", "constraints", "limits", "边界", "范围边界", "不做什么", "范围",
                 "约束", "границы", "вне рамок", "ограничения"),
    UNKNOWNS: ("unknowns and assumptions", "unknowns & assumptions", "assumptions and unknowns",
               "unknowns", "assumptions", "open questions", "questions", "risks",
               "risks and assumptions", "未知与假设", "未知项与假设", "假设", "未知项", "未知",
               "风险", "неизвестное и допущения", "допущения", "открытые вопросы",
               "неизвестное", "риски"),
    AMENDMENTS: ("amendments", "修订", "修正", "поправки"),
}

# The names a report shows for each language, beside the English one.
LOCAL_NAMES = {
    "zh": {GOAL: "目标", ACCEPTANCE: "验收标准", BOUNDARIES: "边界", UNKNOWNS: "未知与假设"},
    "ru": {GOAL: "Цель", ACCEPTANCE: "Критерии приёмки", BOUNDARIES: "Границы",
           UNKNOWNS: "Неизвестное и допущения"},
}


def _key(label: str) -> str:
    return " ".join(label.casefold().replace("ё", "е").split())


_LOOKUP = {_key(word): name for name, words in SYNONYMS.items() for word in words}

# `1.` `1)` `1、` `(1)` `I.` before the heading word.
_NUMBER = r"(?:\(?\d{1,3}[.)、]|\d{1,3}\s|[IVX]{1,4}\.)?\s*"
# Matched against a line's first HEAD characters only, so no line costs more than that to
# read, however long (a label is at most 60 characters after its number).
HEAD = 120
_EMPHASIS = re.compile(_NUMBER + r"(\*\*|__)\s*" + _NUMBER + r"([^*_]{1,60}?)\s*([:：]?)\s*\1"
                       r"[ \t]*([:：]?)")
_COLON = re.compile(_NUMBER + r"([^:：*_#>|`]{1,60}?)\s*[:：]")
_FENCE = re.compile(r"[ \t]*(`{3,}|~{3,})")

# Levels: an ATX heading's number of `#`; bold and colon headings are below all of them.
INLINE_LEVEL = 7

Section = namedtuple("Section", "name level label text")
"""A line that opens section `name`; `label` is the word as written, `text` what follows
it on the same line (empty for a heading line)."""

BODY = "body"
END = "end"


_ASIDE = re.compile(r"\s*[(（][^()（）]*[)）]$")


def section_name(label: str) -> str | None:
    """The canonical section `label` names, or None: `Success criteria` -> Acceptance criteria.

    A trailing aside is allowed: `Goal (one sentence)`, `验收标准（可测试）`.
    """
    key = _key(label.strip().strip("*_").strip())
    return _LOOKUP.get(key) or _LOOKUP.get(_ASIDE.sub("", key))


_NUMBERED = re.compile(_NUMBER)


def _unnumbered(title: str) -> str:
    return title[_NUMBERED.match(title).end():]


def classify(line: str, level: int | None = None, current: str | None = None):
    """What `line` is inside a section of `level` named `current` (None: outside any).

    Returns a `Section`, `END` (a heading of the same or a higher level that names no
    section: the open section stops there) or `BODY`. A colon line naming the section that
    is already open ("Scope: ..." inside Boundaries) stays body text, so a brief loses no
    line to its own wording.
    """
    stripped = line.strip()
    if not stripped or stripped[0] in ">|\\-+*" and not stripped.startswith(("**", "__")):
        return BODY
    atx = _atx(stripped) if stripped[0] == "#" else None
    if atx:
        depth, title = atx
        inner = _EMPHASIS.match(title[:HEAD])
        words = inner.group(2) if inner and not title[inner.end():].strip() else title
        words = _unnumbered(words[:HEAD]).rstrip(":： ").strip()
        name = section_name(words)
        if name is not None:
            return Section(name, depth, words, "")
        return END if level is not None and depth <= level else BODY
    head = stripped[:HEAD]
    emphasis = _EMPHASIS.match(head) if "**" in head or "__" in head else None
    if emphasis:
        name = section_name(emphasis.group(2))
        rest = stripped[emphasis.end():].strip()
        has_colon = emphasis.group(3) or emphasis.group(4)
        if name is not None and (has_colon or not rest):
            if name == current and rest:
                return BODY
            return Section(name, INLINE_LEVEL, emphasis.group(2).strip(), rest)
        return BODY
    colon = _COLON.match(head) if ":" in head or "：" in head else None
    if colon:
        name = section_name(colon.group(1))
        rest = stripped[colon.end():].strip()
        if name is not None and not (name == current and rest):
            return Section(name, INLINE_LEVEL, colon.group(1).strip(), rest)
    return BODY


def _atx(stripped: str) -> tuple[int, str] | None:
    """A Markdown ATX heading's level and title (closing `#`s dropped), or None."""
    depth = len(stripped) - len(stripped.lstrip("#"))
    rest = stripped[depth:]
    if not 1 <= depth <= 6 or not rest or rest[0] not in " \t":
        return None
    title = rest.strip()
    unclosed = title.rstrip("#")
    if unclosed != title and (not unclosed or unclosed[-1] in " \t"):
        title = unclosed.rstrip()
    return depth, title


def fence_of(line: str) -> str | None:
    """The fence a line opens (three or more backticks or tildes), or None."""
    if "```" not in line and "~~~" not in line:
        return None
    match = _FENCE.match(line)
    return match.group(1) if match else None


def closes(line: str, fence: str) -> bool:
    """True when `line` closes the block `fence` opened: the same character, at least as many."""
    stripped = line.strip()
    return (len(stripped) >= len(fence) and set(stripped) == {fence[0]})


def language_of(label: str) -> str:
    """`zh`, `ru` or `en`, from the script a heading was written in."""
    if any("\u4e00" <= char <= "\u9fff" for char in label):
        return "zh"
    if any("\u0400" <= char <= "\u04ff" for char in label):
        return "ru"
    return "en"
