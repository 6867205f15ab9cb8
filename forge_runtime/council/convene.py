"""Convene a council: five opinions, an anonymous peer review, the chairman's verdict.

1. Each advisor answers the question from its own perspective (the five side by side).
2. Each advisor reviews all five opinions under letters (A-E, shuffled by the question), not
   knowing whose is whose, and ranks them.
3. The chairman reads the opinions (by perspective) and the reviews, and answers with a
   verdict, its reasons and a minority report.

What a model says is untrusted input: an answer is kept as it was said, whatever its shape,
and a chairman's answer without the requested headings is recorded and marked as such,
never dropped. A session that fails does not throw away the ones that answered: the council
is recorded with what it has and which seats are missing, and `resume` asks only those
seats (a round starts only once the one before it is whole, since each round reads all of
the last one).

Its cost (sessions, turns and tokens as the host reports them) goes into the record. During
an active goal each of its sessions is charged to the goal as one turn, as a Stop charges
the main session's, once, as it ends (a failed one too: it was asked): a council is never a
way around the budget, and one that does not fit in what is left of the tranche is refused
before it starts.
"""

from __future__ import annotations

import hashlib
import random
import re
import string
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor

from forge_runtime.council import advisors, record, sdk, triage
from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.goal.rules import charging
from forge_runtime.goal.store.ledger import ACTIVE, EXHAUSTED, Ledger, now
from forge_runtime.goal.views.status import chosen_nonce

SESSIONS = 2 * len(advisors.ADVISORS) + 1
OPINION, REVIEW, VERDICT = "opinion", "review", "verdict"
SHAPE = ("verdict", "reasons", "minority report")
_SECTION = re.compile(r"^[ \t]*(?:#+[ \t]*)?\**[ \t]*(verdict|reasons|minority report)[ \t]*"
                      r"\**[ \t]*:?[ \t]*\**[ \t]*", re.I | re.M)

Ask = Callable[[advisors.Member, str, str], sdk.Answer]


def active_goal(project) -> dict | None:
    """The goal state.md names, when it is running (budget left or not)."""
    nonce = chosen_nonce(project)
    if nonce is None:
        return None
    goal = Ledger(project.ledger_root, nonce).current().goal
    return goal if goal["status"] in (ACTIVE, EXHAUSTED) else None


def admit(project, question: str, person: bool, sessions: int = SESSIONS) -> dict | None:
    """The running goal the council will be charged to (None: no goal); raises the refusal
    when the goal leaves no room for this question or for `sessions` more turns."""
    goal = active_goal(project)
    if goal is None:
        return None
    if not person:
        refused = triage.refusal(project, question)
        if refused is not None:
            raise refused
    left = goal["turn_ceiling"] - goal["turn_count"]
    if left < sessions:
        raise ForgeError(f"a council costs {sessions} turns and goal {goal['nonce']} has "
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
    """The chairman's Verdict, Reasons and Minority report, by (lower-cased) heading; a
    heading written twice keeps its first non-empty body, and text with none of them gives
    an empty dict (any text: this never raises)."""
    found: dict[str, str] = {}
    marks = list(_SECTION.finditer(str(text)))
    for mark, following in zip(marks, [*marks[1:], None], strict=False):
        end = following.start() if following else len(text)
        body = text[mark.end():end].strip()
        if body and not found.get(mark.group(1).lower()):
            found[mark.group(1).lower()] = body
    return found


def missing_shape(said: dict[str, str]) -> list[str]:
    """The requested sections the chairman's answer lacks."""
    return [name for name in SHAPE if not said.get(name)]


def convene(project, question: str, *, for_id: str | None = None, person: bool = False,
            session: str = "council", ask: Ask = sdk.ask, charge: bool = True) -> dict:
    """Hold the council and write its record, whole or not; returns the council as a dict."""
    question = " ".join(str(question).split())
    if not question:
        raise ForgeError("a council needs a question", 'forge council "Which parser design '
                         'keeps the grammar readable?"')
    goal = admit(project, question, person)
    council_id, _ = record.reserve(project)
    council = {
        "id": council_id, "question": question, "created": now(),
        "goal": goal["nonce"] if goal else None, "for": for_id,
        "convened_by": "person" if person else "agent", "charge": charge,
        "opinions": {}, "reviews": {}, "chair_attempts": [], "failures": {},
        "sessions": [], "charged": 0, "resumed": 0,
    }
    return _hold(project, council, goal, session, ask)


def resume(project, council_id: str, *, person: bool = False, session: str = "council",
           ask: Ask = sdk.ask) -> dict:
    """Go on with a council that could not finish, asking only its missing seats."""
    council = record.load(project, council_id)
    pending = pending_sessions(council)
    if not pending:  # whole already: asks nothing, shows the record as it is
        return record.save(project, council, view(council))
    goal = admit(project, council["question"], person, pending)
    council["resumed"] += 1
    council["failures"] = {}
    return _hold(project, council, goal, session, ask)


def pending_sessions(council: dict) -> int:
    """How many sessions the council still needs to be whole."""
    opinions = len(advisors.ADVISORS) - len(council["opinions"])
    reviews = len(advisors.ADVISORS) - len(council["reviews"])
    return opinions + reviews + (0 if shaped(council) else 1)


def shaped(council: dict) -> bool:
    """True once the chairman has answered in the requested shape."""
    attempts = council["chair_attempts"]
    return bool(attempts) and not missing_shape(sections(attempts[-1]))


def _hold(project, council: dict, goal: dict | None, session: str, ask: Ask) -> dict:
    """Ask every seat still missing, round by round, charging each session to `goal` (the
    one running now); record what there is once a round cannot be whole, or at the end."""
    cwd = str(project.root)
    charged_to = goal["nonce"] if goal and council["charge"] else None
    question = council["question"]
    seats = [m for m in advisors.ADVISORS if m.perspective not in council["opinions"]]
    _round(project, council, charged_to, seats, _opinion_prompt(question), OPINION, session,
           ask, cwd)
    if len(council["opinions"]) == len(advisors.ADVISORS):
        opinions = opinions_of(council)
        lettered = sorted((o["label"], o["text"]) for o in opinions)
        seats = [m for m in advisors.ADVISORS if m.perspective not in council["reviews"]]
        _round(project, council, charged_to, seats, _review_prompt(question, lettered), REVIEW,
               session, ask, cwd)
        if len(council["reviews"]) == len(advisors.ADVISORS) and not shaped(council):
            reviews = [council["reviews"][m.perspective] for m in advisors.ADVISORS]
            _round(project, council, charged_to, [advisors.CHAIRMAN],
                   _chair_prompt(question, opinions, reviews), VERDICT, session, ask, cwd)
    return record.save(project, council, view(council))


def _round(project, council: dict, charged_to: str | None, members, prompt: str, stage: str,
           session: str, ask: Ask, cwd: str) -> None:
    """One round of sessions side by side (each waits on the model, not the CPU); each one
    that ends is kept and charged, answered or failed."""
    if not members:
        return
    with ThreadPoolExecutor(max_workers=len(members)) as pool:
        futures = [(member, pool.submit(ask, member, prompt, cwd)) for member in members]
        outcomes = [(member, _outcome(future)) for member, future in futures]
    for member, (answer, failure) in outcomes:
        attempt = len(council["sessions"])
        council["sessions"].append(_session_cost(member, stage, answer, failure))
        if charged_to is not None:
            council["charged"] += _charge(project, charged_to, f"{council['id']}:{attempt}",
                                          session)
        if failure is not None:
            council["failures"][_seat(member)] = failure
        elif stage == OPINION:
            council["opinions"][member.perspective] = answer.text
        elif stage == REVIEW:
            council["reviews"][member.perspective] = answer.text
        else:
            council["chair_attempts"].append(answer.text)


def _outcome(future) -> tuple[sdk.Answer | None, str | None]:
    """A session's answer, or why it has none (a failure is a seat missing, not a crash)."""
    try:
        answer = future.result()
    except ForgeError as exc:
        return None, exc.message
    except Exception as exc:  # noqa: BLE001 - any failure of one seat is that seat's
        return None, f"{exc.__class__.__name__}: {exc}"
    if not isinstance(answer, sdk.Answer):
        return None, f"the session returned {type(answer).__name__}, not an answer"
    return answer._replace(text=str(answer.text or "")), None


def _seat(member) -> str:
    return "chairman" if member is advisors.CHAIRMAN else member.perspective


def opinions_of(council: dict) -> list[dict]:
    """The opinions given, in the advisors' order, each with its review letter."""
    letters = letters_for()
    random.Random(hashlib.sha256(council["question"].encode()).digest()).shuffle(letters)
    return [{"perspective": member.perspective, "role": member.role, "label": letter,
             "text": council["opinions"][member.perspective]}
            for member, letter in zip(advisors.ADVISORS, letters, strict=True)
            if member.perspective in council["opinions"]]


def missing_seats(council: dict) -> list[str]:
    """What the council lacks, seat by seat in the round that stopped, with why; the rounds
    after it in one line (each reads all of the round before)."""
    def lacking(stage: str, given: dict) -> list[str]:
        return [f"the {m.perspective} advisor's {stage} "
                f"({council['failures'].get(m.perspective, 'not asked yet')})"
                for m in advisors.ADVISORS if m.perspective not in given]

    opinions = lacking(OPINION, council["opinions"])
    if opinions:
        return [*opinions, "the five reviews and the chairman's verdict (not asked: they "
                           "read every opinion)"]
    reviews = lacking(REVIEW, council["reviews"])
    if reviews:
        return [*reviews, "the chairman's verdict (not asked: it reads every review)"]
    if shaped(council):
        return []
    if council["chair_attempts"]:
        lacks = ", ".join(missing_shape(sections(council["chair_attempts"][-1])))
        return [f"the chairman's verdict in the requested shape (the answer lacks {lacks}; "
                "it is kept as said)"]
    why = council["failures"].get("chairman", "not asked yet")
    return [f"the chairman's verdict ({why})"]


def _session_cost(member, stage: str, answer: sdk.Answer | None, failure: str | None) -> dict:
    if answer is None:
        return {"role": member.role, "round": stage, "turns": None, "input_tokens": None,
                "output_tokens": None, "cost_usd": None, "denied": [], "failed": failure}
    return {"role": answer.role, "round": stage, "turns": answer.turns,
            "input_tokens": answer.input_tokens, "output_tokens": answer.output_tokens,
            "cost_usd": answer.cost_usd, "denied": list(answer.denied or [])}


def _charge(project, nonce: str, turn: str, session: str) -> int:
    """Charge one council session to the goal as one turn (each session is its own turn,
    charged as it ends); returns 1 when it was."""
    ledger = Ledger(project.ledger_root, nonce)
    outcome = charging.charge(ledger, project.state_path, [turn], session, own_turn=turn)
    return int(outcome.outcome == charging.CHARGED)


def view(state: dict) -> dict:
    """The council as the CLI and the record show it: the state plus what follows from it."""
    chair_text = state["chair_attempts"][-1] if state["chair_attempts"] else None
    said = sections(chair_text) if chair_text is not None else {}
    missing = missing_seats(state)
    whole = len(state["opinions"]) == len(state["reviews"]) == len(advisors.ADVISORS)
    status = record.COMPLETE if not missing else \
        record.UNSHAPED if whole and chair_text is not None else record.INCOMPLETE
    return {**state, "status": status, "missing": missing,
            "verdict": said.get("verdict"), "reasons": said.get("reasons"),
            "minority": said.get("minority report"), "chair_text": chair_text,
            "opinions": opinions_of(state),
            "reviews": [{"reviewer": f"reviewer {index}", "text": state["reviews"][m.perspective]}
                        for index, m in enumerate(advisors.ADVISORS, start=1)
                        if m.perspective in state["reviews"]],
            "cost": _cost(state["sessions"]),
            "denied": sorted({d for s in state["sessions"] for d in s.get("denied") or []})}


def _total(values: list) -> int | None:
    known = [value for value in values if isinstance(value, int)]
    return sum(known) if known else None


def _cost(sessions: list[dict]) -> dict:
    return {"sessions": len(sessions), "turns": sum(s.get("turns") or 0 for s in sessions),
            "input_tokens": _total([s.get("input_tokens") for s in sessions]),
            "output_tokens": _total([s.get("output_tokens") for s in sessions]),
            "cost_usd": sum(s.get("cost_usd") or 0 for s in sessions) or None,
            "failed": sum(1 for s in sessions if s.get("failed")),
            "by_session": sessions}
