"""The tokens (and, with a sealed price table, the dollars) each charged turn spent."""

from __future__ import annotations

from forge_runtime.goal.events.reading import unattributable
from forge_runtime.goal.hosts import transcript


def tokens_of_turns(path: str, binding: dict, chunk: transcript.Chunk, turns: list[str],
                ledger=None) -> dict:
    """The tokens each of `turns` spent (usage.py): its distinct responses, the first one's
    with the part of the turn an earlier event read (the binding's `usage_open`), the last
    one's with what the session's subagents spent since the last event. On Claude Code a
    turn's responses come before the entry that closes it, and what follows the last one
    waits in the binding for the next turn; on Codex they follow the entry that opens it.
    A goal whose activation sealed a price table (`ledger`'s head says) has each response
    priced (pricing.py)."""
    from forge_runtime.goal.budget import pricing, usage

    try:
        pricer = None if ledger is None else \
            pricing.pricer_for(ledger.root, ledger.current().goal)
    except pricing.Unsealed as exc:
        from forge_runtime.goal.store.ledger import tampered

        raise tampered(f"goal {binding.get('nonce')}: {exc}") from None
    usage.price_with(pricer)
    try:
        return _tally_turns(path, binding, chunk, turns)
    finally:
        usage.price_with(None)


def _tally_turns(path: str, binding: dict, chunk: transcript.Chunk, turns: list[str]) -> dict:
    """`tokens_of_turns`'s tally, priced as it set up."""
    from forge_runtime.goal.budget import usage

    try:
        helpers, binding["subagents"] = transcript.read_subagents(
            path, binding.get("subagents") or {})
    except transcript.Unattributable as exc:
        raise unattributable(exc, binding) from None
    marks = [(turn.index, turn.uuid) for turn in chunk.turns() if turn.uuid in turns]
    carried = usage.Tally(binding.get("usage_open"))
    tallies = {uuid: usage.Tally({"last": carried.last}) for _, uuid in marks}
    if marks:
        tallies[marks[0][1]].merge(carried)
        carried = usage.Tally({"last": carried.last})
    for index, ident, model, spent in chunk.responses():
        owner = _owner(marks, index, chunk.OPENS_TURNS)
        tally = carried if owner is None else tallies[owner]
        tally.add_response(ident, model, spent)
        carried.last = tally.last
    (tallies[marks[-1][1]] if marks else carried).merge(helpers)
    binding["usage_open"] = carried.state()
    return {uuid: tally.take() for uuid, tally in tallies.items()}


def _owner(marks: list[tuple[int, str]], index: int, opens: bool) -> str | None:
    """The turn a response at `index` belongs to, of the turns being charged (`marks`:
    (index, turn), in order); None when it belongs to a turn still running."""
    if opens:  # Codex: the last turn opened before it (or the first, for what came earlier)
        owner = marks[0][1] if marks else None
        for start, uuid in marks:
            if start <= index:
                owner = uuid
        return owner
    for end, uuid in marks:  # Claude Code: the first turn closed at or after it
        if index <= end:
            return uuid
    return None
