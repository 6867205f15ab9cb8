"""Convene a council: five opinions, an anonymous peer review, the chairman's verdict.

1. Each advisor answers the question from its own perspective (the five side by side).
2. Each advisor reviews all five opinions under letters (A-E, shuffled by the question), not
   knowing whose is whose, and ranks them.
3. The chairman reads the opinions (by perspective) and the reviews, and answers with a
   verdict, its reasons and a minority report.

Its cost (sessions, turns and tokens as the host reports them) goes into the record. During
an active goal each of its sessions is charged to the goal as one turn, as a Stop charges
the main session's: a council is never a way around the budget, and one that does not fit
in what is left of the tranche is refused before it starts.
"""

from __future__ import annotations

import hashlib
import random
import re
import string
from collections.abc import Callable

from forge_runtime.council import advisors, record, sdk, triage
from forge_runtime.errors import EXIT_REFUSED, ForgeError

SESSIONS = 2 * len(advisors.ADVISORS) + 1
_SECTION = re.compile(r"^\s*(?:#+\s*)?\**(verdict|reasons|minority report)\**\s*:?\**\s*",
                      re.I | re.M)

Ask = Callable[[advisors.Member, str, str], sdk.Answer]


def active_goal(project) -> dict | None:
    """The goal state.md names, when it is running (budget left or not)."""
    from forge_runtime.goal import status
    from forge_runtime.goal.ledger import ACTIVE, EXHAUSTED, Ledger

    nonce = status.chosen_nonce(project)
    if nonce is None:
        return None
    goal = Ledger(project.ledger_root, nonce).current().goal
    return goal if goal["status"] in (ACTIVE, EXHAUSTED) else None


def admit(project, question: str, person: bool) -> dict | None:
    """The running goal the council will be charged to (None: no goal); raises the refusal
    when the goal leaves no room for this question or for eleven more turns."""
    goal = active_goal(project)
    if goal is None:
        return None
    if not person:
        refused = triage.refusal(project, question)
        if refused is not None:
            raise refused
    left = goal["turn_ceiling"] - goal["turn_count"]
    if left < SESSIONS:
        raise ForgeError(f"a council costs {SESSIONS} turns and goal {goal['nonce']} has "
                         f"{left} of its tranche left", "forge goal status",
                         exit_code=EXIT_REFUSED, code="FORGE_COUNCIL_OVER_BUDGET",
                         rationale="a person grants another tranche by typing the same /goal")
    return goal


def letters_for() -> list[str]:
    """The letters the advisors' opinions go by in the peer review: A, B, C, ..."""
    return list(string.ascii_uppercase[:len(advisors.ADVISORS)])


def _opinion_prompt(question: str) -> str:
    return (f"The decision before the council:\n\n{question}\n\n"
            "Give your opinion from your perspective, in the shape your instructions ask for.")


def _review_prompt(question: str, lettered: list[tuple[str, str]]) -> str:
    shown = "\n\n".join(f"Opinion {letter}:\n{text}" for letter, text in lettered)
    return (f"The decision before the council:\n\n{question}\n\nFive advisors answered; you do "
            f"not know whose opinion is whose (one may be yours).\n\n{shown}\n\n"
            "Peer review: rank the opinions from strongest to weakest by letter, one line "
            "each on what it gets right or wrong. Judge the argument, not the author.")


def _chair_prompt(question: str, opinions: list[dict], reviews: list[str]) -> str:
    shown = "\n\n".join(f"The {o['perspective']} advisor (opinion {o['label']}):\n{o['text']}"
                        for o in opinions)
    reviewed = "\n\n".join(f"Review {index}:\n{text}"
                           for index, text in enumerate(reviews, start=1))
    return (f"The decision before the council:\n\n{question}\n\nThe advisors' opinions:\n\n"
            f"{shown}\n\nTheir anonymous peer reviews:\n\n{reviewed}\n\nGive your verdict in "
            "the shape your instructions ask for: Verdict, Reasons, Minority report.")


def sections(text: str) -> dict[str, str]:
    """The chairman's Verdict, Reasons and Minority report, by (lower-cased) heading."""
    found: dict[str, str] = {}
    marks = list(_SECTION.finditer(text))
    for mark, following in zip(marks, [*marks[1:], None], strict=True):
        end = following.start() if following else len(text)
        found.setdefault(mark.group(1).lower(), text[mark.end():end].strip())
    return found


def convene(project, question: str, *, for_id: str | None = None, person: bool = False,
            session: str = "council", ask: Ask = sdk.ask, charge: bool = True) -> dict:
    """Hold the council and write its record; returns the council as a dict."""
    question = " ".join(question.split())
    if not question:
        raise ForgeError("a council needs a question", 'forge council "Which parser design '
                         'keeps the grammar readable?"')
    goal = admit(project, question, person)
    cwd = str(project.root)
    answers: list[tuple[str, sdk.Answer]] = []

    def round_of(members, prompts: list[str], stage: str) -> list[sdk.Answer]:
        """One round, its sessions side by side (each waits on the model, not the CPU)."""
        from concurrent.futures import ThreadPoolExecutor

        with ThreadPoolExecutor(max_workers=len(members)) as pool:
            said = list(pool.map(lambda pair: ask(pair[0], pair[1], cwd),
                                 zip(members, prompts, strict=True)))
        answers.extend((stage, answer) for answer in said)
        return said

    seats = len(advisors.ADVISORS)
    opinions_said = round_of(advisors.ADVISORS, [_opinion_prompt(question)] * seats, "opinion")
    letters = letters_for()
    random.Random(hashlib.sha256(question.encode()).digest()).shuffle(letters)
    opinions = [{"perspective": member.perspective, "role": member.role, "label": letter,
                 "text": answer.text}
                for member, letter, answer in zip(advisors.ADVISORS, letters, opinions_said,
                                                  strict=True)]
    lettered = sorted((o["label"], o["text"]) for o in opinions)
    reviews = [answer.text for answer in round_of(
        advisors.ADVISORS, [_review_prompt(question, lettered)] * seats, "review")]
    (chair,) = round_of([advisors.CHAIRMAN], [_chair_prompt(question, opinions, reviews)],
                        "verdict")
    said = sections(chair.text)
    council_id, path = record.reserve(project)
    council = {
        "id": council_id, "question": question, "created": _now(),
        "goal": goal["nonce"] if goal else None, "for": for_id,
        "convened_by": "person" if person else "agent",
        "verdict": said.get("verdict"), "reasons": said.get("reasons"),
        "minority": said.get("minority report"), "chair_text": chair.text,
        "opinions": opinions,
        "reviews": [{"reviewer": f"reviewer {index}", "text": text}
                    for index, text in enumerate(reviews, start=1)],
        "cost": _cost(answers), "denied": sorted({d for _, a in answers for d in a.denied}),
    }
    council["charged"] = _charge(project, goal, council_id, session) if goal and charge else 0
    path.write_text(record.render(council), encoding="utf-8")
    council["record"] = path.relative_to(project.root).as_posix()
    return council


def _now() -> str:
    from forge_runtime.goal.ledger import now

    return now()


def _total(values: list) -> int | None:
    known = [value for value in values if isinstance(value, int)]
    return sum(known) if known else None


def _cost(answers: list[tuple[str, sdk.Answer]]) -> dict:
    return {"sessions": len(answers), "turns": sum(a.turns or 0 for _, a in answers),
            "input_tokens": _total([a.input_tokens for _, a in answers]),
            "output_tokens": _total([a.output_tokens for _, a in answers]),
            "cost_usd": sum(a.cost_usd or 0 for _, a in answers) or None,
            "by_session": [{"role": a.role, "round": stage, "turns": a.turns,
                            "input_tokens": a.input_tokens, "output_tokens": a.output_tokens}
                           for stage, a in answers]}


def _charge(project, goal: dict, council_id: str, session: str) -> int:
    """Charge each council session to the goal as one turn; returns how many were."""
    from forge_runtime.goal import charging
    from forge_runtime.goal.ledger import Ledger

    ledger = Ledger(project.ledger_root, goal["nonce"])
    charged = 0
    for index in range(SESSIONS):
        turn = f"{council_id}:{index}"  # each session is its own turn, charged as it ends
        outcome = charging.charge(ledger, project.state_path, [turn], session, own_turn=turn)
        charged += outcome.outcome == charging.CHARGED
    return charged
