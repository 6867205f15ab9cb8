"""Whether a council may take a question now.

A council costs eleven model sessions. During an active goal it is for a non-destructive
product or engineering decision that blocks the goal; a question that a cheap check can
settle is refused with that check as the `Next:`:

- whether tests, lint, a build or a gate pass: run the stale gates (or read their status);
- whether evidence exists for an artifact: record it from a fresh gate;
- a destructive act (delete, force-push, reset, drop): not for a council to approve.

A person can always convene one explicitly (`--person`, from their own terminal). The
reading of a question is by words, so it errs towards the cheap check: a refused question
that is a real decision is asked again in words about the decision, not about the check.
"""

from __future__ import annotations

import re

from forge_runtime import gates
from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.gates import status

SETTLED = "FORGE_COUNCIL_CHECK_FIRST"
DESTRUCTIVE = "FORGE_COUNCIL_DESTRUCTIVE"
_GATE_WORDS = re.compile(r"\b(tests?|pass(es|ing)?|fail(s|ing|ed)?|green|red|lint|linter|"
                         r"type[- ]?check\w*|builds?|broken|gates?|stale|fresh|ci)\b", re.I)
_EVIDENCE = re.compile(r"\bevidence\b", re.I)
_ARTIFACT = re.compile(r"\b[A-Z]{2,16}-[0-9]{3,6}\b")
_DESTRUCTIVE = re.compile(r"\b(delete|deleting|remove all|drop|wipe|purge|force[- ]push|"
                          r"reset --hard|rm -rf|rewrite (the )?history|truncate)\b", re.I)


def refusal(project, question: str) -> ForgeError | None:
    """Why a council must not take `question` during a goal, with the check to run instead;
    None when it may."""
    if _DESTRUCTIVE.search(question):
        return ForgeError("a council during a goal decides only non-destructive questions; "
                          "this one would approve destroying something", "forge goal status",
                          exit_code=EXIT_REFUSED, code=DESTRUCTIVE,
                          rationale="a person decides that, and may convene a council "
                                    "explicitly with --person from their own terminal")
    check = _cheap_check(project, question)
    if check is None:
        return None
    command, why = check
    return ForgeError(f"a cheap check settles this question before a council of eleven "
                      f"sessions: {why}", command, exit_code=EXIT_REFUSED, code=SETTLED,
                      rationale="run it; convene a council only for a decision it leaves open")


def _cheap_check(project, question: str) -> tuple[str, str] | None:
    if not gates.defined(project):
        return None
    try:
        states = status.assess(project)
    except ForgeError:
        return "forge gate status", "the gates file needs fixing first"
    names = [s.gate.name for s in states]
    artifact = _ARTIFACT.search(question)
    if _EVIDENCE.search(question) and artifact and names:
        fresh = [s.gate.name for s in states if s.state == status.FRESH]
        if fresh:
            return (f"forge gate evidence {fresh[0]} --for {artifact.group(0)}",
                    f"gate {fresh[0]} is fresh and can be recorded as evidence")
        return status.run_command(names), "no gate is fresh enough to be evidence yet"
    named = [name for name in names if re.search(rf"\b{re.escape(name)}\b", question)]
    if not named and not _GATE_WORDS.search(question):
        return None
    pending = status.to_run(states) + status.failing(states)
    asked = [name for name in pending if name in named] or (pending if not named else [])
    if asked:
        described = ", ".join(f"{s.gate.name} {s.state}" for s in states
                              if s.gate.name in asked)
        return status.run_command(asked), f"it is about the gates ({described})"
    return "forge gate status", "every gate it is about is fresh: its status answers it"
