"""`forge route "<task>"`: which kind of artifact a task calls for, how deep, and the first step.

A keyword reading of the task, deterministic and explainable: the first rule whose words
appear decides the kind; the depth grows with words that signal risk or breadth.
"""

from __future__ import annotations

import re

# (kind, words that call for it, why), first match wins
RULES = (
    ("problem", ("bug", "broken", "fails", "failing", "error", "crash", "regression", "wrong",
                 "slow"), "it reports something that goes wrong"),
    ("adr", ("decide", "decision", "choose", "pick", "versus", "vs", "adopt"),
     "it asks for a decision between options"),
    ("rfc", ("design", "architecture", "redesign", "protocol", "api", "propose", "refactor",
             "migrate", "migration"), "it changes how the system is built"),
    ("evidence", ("measure", "benchmark", "verify", "prove", "audit", "test whether"),
     "it asks for proof"),
    ("prd", ("add", "build", "support", "feature", "implement", "allow", "let", "create",
             "make"), "it asks for a capability"),
)
DEEP_WORDS = ("security", "migration", "migrate", "across", "every", "all", "concurrent",
              "data loss", "auth", "payment", "breaking")
TITLE_LENGTH = 80


def _words(text: str) -> set[str]:
    return set(re.findall(r"[a-z0-9]+", text.lower()))


def _mentions(words: set[str], lowered: str, trigger: str) -> bool:
    """A phrase appears in the text; a word appears as a word or, from four letters on, as
    the start of one (`crash` in `crashes`)."""
    if " " in trigger:
        return trigger in lowered
    return trigger in words or (len(trigger) >= 4 and any(word.startswith(trigger)
                                                         for word in words))


def route(task: str) -> dict:
    words = _words(task)
    lowered = task.lower()
    kind, why = "note", "no rule matched, so it starts as a note"
    for rule_kind, triggers, reason in RULES:
        if any(_mentions(words, lowered, trigger) for trigger in triggers):
            kind, why = rule_kind, reason
            break
    signals = [word for word in DEEP_WORDS if _mentions(words, lowered, word)]
    depth = "deep" if len(signals) >= 2 else "standard" if signals or len(words) > 12 else "quick"
    title = " ".join(task.split())[:TITLE_LENGTH].rstrip() or "Untitled"
    return {"task": task, "kind": kind, "depth": depth, "why": why, "signals": signals,
            "title": title}
