"""The tokens a goal's turns spent, as the host's own transcripts record them.

Measured against Claude Code 2.1.332 (tests/host/test_goal_tokens.py):
- Every `assistant` entry carries its API response's `message.usage` (`input_tokens`,
  `output_tokens`, `cache_creation_input_tokens`, `cache_read_input_tokens`) and
  `message.model`. One response is split over several entries (one per content block) that
  share `message.id` and repeat the same usage: each response is counted once.
- A subagent (the Agent tool, nested ones too) writes its own transcript,
  `<session transcript without .jsonl>/subagents/agent-<id>.jsonl`, whose entries say
  `isSidechain: true`; the main transcript holds none of its responses. They count to the
  goal too, or an agent could hide its work in a Task.
- The host's `/goal` evaluator's requests appear in no transcript.

What counts toward a token ceiling (`counted`): fresh input, output and cache writes in
full, cache reads at a tenth. A cache read costs a tenth of fresh input and a long session
re-reads its whole context on every call, so a plain sum would be dominated by them (and a
ceiling meaningless), while leaving them out would let a session that re-reads a million
cached tokens per call spend without bound.

Dollars: while a goal with a sealed price table charges (goal/budget/pricing.py), `price_with`
gives every response its cost as it is tallied, per response because a long-context tier
is one request's; the model's totals then carry `picousd` (picodollars) beside its tokens.
Claude Code's one-hour cache writes (`cache_creation.ephemeral_1h_input_tokens`) are kept
as `cache_creation_1h`, a part of `cache_creation` priced at their own rate.
"""

from __future__ import annotations

import os

FIELDS = ("input", "output", "cache_creation", "cache_read")
_API_FIELDS = (("input", "input_tokens"), ("output", "output_tokens"),
               ("cache_creation", "cache_creation_input_tokens"),
               ("cache_read", "cache_read_input_tokens"))
EXTRA_FIELDS = ("cache_creation_1h", "picousd")  # kept only when not zero
CACHE_READ_WEIGHT = 10  # a cache read counts 1/10 of a token
SUBAGENTS_DIR = "subagents"
USAGE_TOKEN = '"usage"'  # the cheap prefilter for a Claude Code line that holds usage
# a subagent transcript's anchor: its last bytes forge read (what came before is charged)
SUBAGENT_ANCHOR_SPAN = 4096


def counted(by_model: dict) -> int:
    """The tokens that count toward a ceiling, of per-model totals (see the module doc)."""
    total = 0
    for spent in by_model.values():
        total += spent.get("input", 0) + spent.get("output", 0) + \
            spent.get("cache_creation", 0) + spent.get("cache_read", 0) // CACHE_READ_WEIGHT
    return total


def response(entry: dict) -> tuple[str, str, dict] | None:
    """(response id, model, {field: tokens}) of an assistant entry that carries usage."""
    if entry.get("type") != "assistant" or entry.get("isApiErrorMessage"):
        return None
    message = entry.get("message")
    usage = message.get("usage") if isinstance(message, dict) else None
    if not isinstance(usage, dict):
        return None
    spent = {}
    for field, key in _API_FIELDS:
        value = usage.get(key)
        spent[field] = value if isinstance(value, int) and value > 0 else 0
    creation = usage.get("cache_creation")
    hour = creation.get("ephemeral_1h_input_tokens") if isinstance(creation, dict) else None
    if isinstance(hour, int) and hour > 0:
        spent["cache_creation_1h"] = min(hour, spent["cache_creation"])
    ident = message.get("id")
    model = message.get("model")
    return (ident if isinstance(ident, str) else entry.get("uuid") or "",
            model if isinstance(model, str) and model else "unknown", spent)


_pricer = None  # (model, spent) -> picodollars, while a priced goal charges


def price_with(pricer) -> None:
    """Price every response tallied from now on with `pricer(model, spent)` (None: stop)."""
    global _pricer
    _pricer = pricer


class Tally:
    """Per-model token totals of distinct responses, added to entry by entry.

    One response's entries are consecutive in its transcript, so remembering the last
    response id counts each once; `state()` and `Tally(state)` carry a tally across reads
    (the binding keeps it), so a response read half at one event and half at the next is
    still counted once.
    """

    __slots__ = ("by_model", "last")

    def __init__(self, state: dict | None = None) -> None:
        state = state or {}
        self.by_model = {model: dict(spent) for model, spent in
                         (state.get("by_model") or {}).items() if isinstance(spent, dict)}
        self.last = state.get("last")

    def add_entry(self, entry: dict) -> None:
        """A Claude Code transcript entry: its response, if it carries one."""
        found = response(entry)
        if found is not None:
            self.add_response(*found)

    def add_response(self, ident: str, model: str, spent: dict) -> None:
        """One response's tokens, unless it is the one counted last (split entries)."""
        if ident == self.last:
            return
        self.last = ident
        if _pricer is not None:
            spent = {**spent, "picousd": _pricer(model, spent)}
        self.add(model, spent)

    def add(self, model: str, spent: dict) -> None:
        totals = self.by_model.setdefault(model, dict.fromkeys(FIELDS, 0))
        for field in FIELDS:
            totals[field] = totals.get(field, 0) + spent.get(field, 0)
        for field in EXTRA_FIELDS:
            if spent.get(field):
                totals[field] = totals.get(field, 0) + spent[field]

    def merge(self, other: Tally) -> None:
        for model, spent in other.by_model.items():
            self.add(model, spent)

    def take(self) -> dict:
        """The usage record of what was tallied, and a fresh start (the last id kept)."""
        taken = usage_record(self.by_model)
        self.by_model = {}
        return taken

    def state(self) -> dict:
        return {"by_model": self.by_model, "last": self.last}

    def __bool__(self) -> bool:
        return bool(self.by_model)


def usage_record(by_model: dict) -> dict:
    """What a charge record says it spent: per-model totals, the counted sum, and the
    dollars when its responses were priced."""
    record = {"by_model": by_model, "counted": counted(by_model)}
    if any("picousd" in spent for spent in by_model.values()):
        record["picousd"] = picousd(by_model)
    return record


def picousd(by_model: dict) -> int:
    """The picodollars of per-model totals (0 for tokens no price table saw)."""
    return sum(spent.get("picousd", 0) for spent in by_model.values())


def subagent_dir(transcript_path: str) -> str:
    """Where the host writes the subagent transcripts of the session at `transcript_path`."""
    base = transcript_path[:-6] if transcript_path.endswith(".jsonl") else transcript_path
    return os.path.join(base, SUBAGENTS_DIR)
