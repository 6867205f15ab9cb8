"""Dollars against the real hosts: a tranche's dollar ceiling (`goal: {tranche: {usd: X}}`)
stopping a goal within one tool call of crossing it, in a later turn of the goal and in the
first turn of a `/goal` (also of a model that only reads), on Claude Code and on Codex;
and the dollars the ledger holds equal to the same sessions' transcripts priced by hand
with the sealed price table.

Every scripted response reports the same usage, so the ceiling is set between two whole
numbers of responses: crossing it is the n-th response exactly, and the test names which
tool call forge must deny (that one, or the next: PreToolUse can start before the host has
written the response that asked for the call to its transcript, measured for tokens in
tests/host/test_goal_tokens.py).

The hand pricing reads the transcripts as JSON lines itself and multiplies by the sealed
table's per-token prices itself: none of forge's usage.py, transcript readers or
pricing.py arithmetic takes part, only the price table's file.
"""

from __future__ import annotations

import json
import re
import shutil
from decimal import Decimal
from pathlib import Path

import pytest
from codex_support import denial_reasons, exhausted_stops, start_goal
from goal_support import goal_in_state
from session_support import guard_goal, stop_reasons, tool_denials, working_until_denied

from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.project import find_project

pytestmark = pytest.mark.host

OBJECTIVE = "the file never.txt exists"
CLAUDE_MODEL = "claude-sonnet-4-5"  # known to the table: $3 / $15, reads $0.30, writes $3.75 / $6
# every Claude Code response: each token kind, one-hour cache writes among the writes
CLAUDE_USAGE = {"input_tokens": 2000, "output_tokens": 500, "cache_read_input_tokens": 20000,
                "cache_creation_input_tokens": 1000,
                "cache_creation": {"ephemeral_5m_input_tokens": 600,
                                   "ephemeral_1h_input_tokens": 400}}
# every Codex response (the host kit reports OpenAI's input as 1,500 fresh + 12,000 cached)
CODEX_USAGE = {"input_tokens": 1500, "output_tokens": 700, "cache_read_input_tokens": 12000}
CLAUDE_HOUR = CLAUDE_USAGE["cache_creation"]["ephemeral_1h_input_tokens"]
NO_BLOCK_CAP = {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"}
PICO = 10**12


# -- pricing by hand: the table's file and this module's arithmetic, nothing of forge's ----------

def price_table() -> dict:
    """The table the hooks of this interpreter seal at activation (compiled when missing,
    as the first `/goal` would)."""
    from forge_runtime.goal.budget import price_table as compiled

    path = compiled.compiled_path()
    if not path.exists():
        compiled.write(path)
    return json.loads(path.read_bytes())


def _family(model: str) -> str:
    """A model's family, written out here: its name without version, date and `latest`."""
    return "-".join(part for part in re.split(r"[-_]", model.lower())
                    if part and part != "latest" and not re.fullmatch(r"[\d.@]+", part))


def prices_for(table: dict, provider: str, model: str) -> tuple[dict, list]:
    """(prices, tiers) for `model`: its own entry (by its exact id), else the dearest of its
    family, else of its provider; the family and provider rows are the table's own."""
    for entry in table["models"]:
        if entry["provider"] == provider and entry["id"] == model:
            return entry["prices"], entry["tiers"]
    family = table["families"].get(f"{provider}/{_family(model)}")
    return (family or table["hosts"][provider]), []


def priced_by_hand(prices: dict, tiers: list, fresh: int, output: int, read: int,
                   written: int, written_1h: int = 0) -> int:
    """One response's picodollars: each kind of token at its own price, at the tier its
    whole input (fresh, read and written) reaches; a kind the model has no price for at
    the price of the kind it falls back to (reads and writes: input; 1-hour writes: writes)."""
    for tier in reversed(tiers):
        if fresh + read + written > tier["above"]:
            prices = tier["prices"]
            break
    write_price = prices.get("cache_creation", prices["input"])
    return (fresh * prices["input"] + output * prices["output"]
            + read * prices.get("cache_read", prices["input"])
            + (written - written_1h) * write_price
            + written_1h * prices.get("cache_creation_1h", write_price))


def claude_transcript_picos(table: dict, paths: list[Path]) -> tuple[int, int]:
    """(picodollars, responses) of Claude Code transcripts: one response per message id
    (the host splits one response over an entry per content block, usage repeated)."""
    responses = {}
    for path in paths:
        for line in path.read_text().splitlines():
            entry = json.loads(line)
            message = entry.get("message")
            if entry.get("type") == "assistant" and isinstance(message, dict) and \
                    isinstance(message.get("usage"), dict):
                responses[message["id"]] = (message["model"], message["usage"])
    total = 0
    for model, spent in responses.values():
        hour = (spent.get("cache_creation") or {}).get("ephemeral_1h_input_tokens", 0)
        total += priced_by_hand(*prices_for(table, "anthropic", model), spent["input_tokens"],
                                spent["output_tokens"], spent["cache_read_input_tokens"],
                                spent["cache_creation_input_tokens"], hour)
    return total, len(responses)


def codex_rollout_picos(table: dict, path: Path) -> tuple[int, int]:
    """(picodollars, responses) of a Codex rollout: each `token_count` event's
    `last_token_usage`, once per running total (the host repeats an event for one
    response), at the model the turn's `turn_context` names; OpenAI's `input_tokens`
    include the cached ones."""
    total, seen, model = 0, set(), None
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        payload = entry.get("payload") or {}
        if entry.get("type") == "turn_context":
            model = payload["model"]
        info = payload.get("info") if payload.get("type") == "token_count" else None
        if not info or not info.get("last_token_usage"):
            continue
        running = json.dumps(info["total_token_usage"], sort_keys=True)
        if running in seen:
            continue
        seen.add(running)
        last = info["last_token_usage"]
        cached = last.get("cached_input_tokens", 0)
        total += priced_by_hand(*prices_for(table, "openai", model),
                                last["input_tokens"] - cached, last["output_tokens"], cached, 0)
    return total, len(seen)


def test_the_hand_pricing_knows_what_a_response_of_a_known_model_costs():
    """The arithmetic above, against figures read off the vendors' price lists."""
    table = price_table()
    sonnet = prices_for(table, "anthropic", CLAUDE_MODEL)
    # $3 input, $15 output, $0.30 reads, $3.75 5-minute and $6 1-hour writes per million
    assert priced_by_hand(*sonnet, 2000, 500, 20000, 1000, 400) == \
        2000 * 3_000_000 + 500 * 15_000_000 + 20000 * 300_000 + 600 * 3_750_000 \
        + 400 * 6_000_000
    # past 200k of input, Sonnet 4.5's long-context prices: $6, $22.50, $0.60
    assert priced_by_hand(*sonnet, 150_000, 1000, 60_000, 0) == \
        150_000 * 6_000_000 + 1000 * 22_500_000 + 60_000 * 600_000


# -- the runs ---------------------------------------------------------------------------------

def _ceiling(per_response: int, responses: float) -> str:
    """A dollar ceiling of `responses` (a half, so never exactly reached) responses' worth,
    as .forge/guard.yaml writes it."""
    return str(Decimal(int(per_response * responses)) / PICO)


def _guard(project: Path, usd: str) -> None:
    guard_goal(project, f"tranche: {{usd: {usd}}}")


def _charges(project: Path) -> list[dict]:
    ledger = Ledger(find_project(project).ledger_root, goal_in_state(project)["nonce"])
    return [record for record in ledger.history() if record["kind"] == "charge"]


def _head(project: Path) -> dict:
    return Ledger(find_project(project).ledger_root,
                  goal_in_state(project)["nonce"]).current().goal


def _sealed(project: Path) -> dict:
    """The table the goal's activation sealed, read as a file and checked by its digest."""
    import hashlib

    prices = _head(project)["prices"]
    data = (Path(find_project(project).ledger_root) / "prices"
            / f"{prices['digest']}.json").read_bytes()
    assert hashlib.sha256(data).hexdigest() == prices["digest"]
    return json.loads(data)


def _dollar_denials(reasons: list[str]) -> list[str]:
    for reason in reasons:
        assert reason.startswith("FORGE_GOAL_BUDGET_EXHAUSTED: "), reason
        assert "(the dollar ceiling)" in reason, reason
    return reasons


def _spent_words(per_response: int, responses: int, usd: str) -> str:
    """`spent $0.12 of $0.11`, as forge words it, computed here."""
    def money(picos: int | Decimal) -> str:
        value = Decimal(picos) / PICO
        return f"${value:.3f}" if value < Decimal("0.01") else f"${value:,.2f}"
    return f"spent {money(per_response * responses)} of {money(Decimal(usd) * PICO)}"


def _response_words(per_response: int, usd: str, first: int) -> re.Pattern:
    """The denial's spent words for `first` responses or one more."""
    options = "|".join(re.escape(_spent_words(per_response, n, usd)) for n in (first, first + 1))
    return re.compile(rf"({options}) \(the dollar ceiling\)")


# Claude Code's model: its goal's first turn is one response, its second calls `echo step`
# until forge denies one (the evaluator's responses report usage too: the charges below
# count none of it)
MID_TURN = working_until_denied(CLAUDE_USAGE, calls=None, first_turn=True,
                                evaluator_usage={"input_tokens": 7, "output_tokens": 3})
# a goal's first turn of 12 calls
FIRST_TURN = working_until_denied(CLAUDE_USAGE)


def _claude_calls(session) -> tuple[list[str], int]:
    """(the PreToolUse denials, each for dollars, how many `echo step` calls ran) of a
    session."""
    denials, ran = tool_denials(session)
    return _dollar_denials(denials), ran


def _claude_response_picos() -> int:
    """What each response of the Claude Code scripts costs, priced by hand."""
    return priced_by_hand(*prices_for(price_table(), "anthropic", CLAUDE_MODEL),
                          CLAUDE_USAGE["input_tokens"], CLAUDE_USAGE["output_tokens"],
                          CLAUDE_USAGE["cache_read_input_tokens"],
                          CLAUDE_USAGE["cache_creation_input_tokens"], CLAUDE_HOUR)


def _check_by_hand(project: Path, transcripts: list[Path], responses: int) -> None:
    """The ledger's dollars are the transcripts priced by hand with the sealed table."""
    by_hand, seen = claude_transcript_picos(_sealed(project), transcripts)
    assert seen == responses
    charges = _charges(project)
    assert sum(charge["usage"]["picousd"] for charge in charges) == by_hand
    assert _head(project)["picousd"] == by_hand


def test_a_dollar_ceiling_stops_claude_code_within_one_tool_call(claude_host, project,
                                                                 tmp_path):
    from forge_runtime.hostkit.projects import init_git_project

    each = _claude_response_picos()
    args = ["--allowedTools", "Bash", "--model", CLAUDE_MODEL]

    # a later turn: turn 1 is one response; in turn 2 every response is a tool call, and
    # the 5th response in all crosses 4.5 responses' worth
    usd = _ceiling(each, 4.5)
    _guard(project, usd)
    session = claude_host(MID_TURN).run(f"/goal {OBJECTIVE}", cwd=project, timeout=120,
                                        args=args, env=NO_BLOCK_CAP)
    assert session.terminal_reason == "stop_hook_prevented", session.result
    assert {body["model"] for body in session.model_requests()} == {CLAUDE_MODEL}
    denials, ran = _claude_calls(session)
    # the 4th call of turn 2 asked for in the 5th response: it is denied, or the next one
    assert len(denials) == 1 and ran in (3, 4), (denials, ran)
    assert "forge denies this tool call so the turn ends" in denials[0], denials[0]
    assert _response_words(each, usd, ran + 1).search(denials[0]), denials[0]
    reasons = stop_reasons(session)
    assert len(reasons) == 1 and "(the dollar ceiling) in 2 turns" in reasons[0], reasons
    goal = goal_in_state(project)
    assert (goal["turn_count"], goal["status"]) == (2, "exhausted")
    # the Stop charged every response: turn 1's, the calls that ran, the denied one, the end
    assert [charge["usage"]["picousd"] for charge in _charges(project)] == \
        [each, each * (ran + 2)]
    assert _head(project)["usd_ceiling"] == int(Decimal(usd) * PICO)
    # the host keeps the one-hour part of the cache writes, and forge priced it as such
    assert {json.dumps(entry["message"]["usage"].get("cache_creation"), sort_keys=True)
            for entry in session.transcript() if entry.get("type") == "assistant"} == \
        {json.dumps(CLAUDE_USAGE["cache_creation"], sort_keys=True)}
    (spent,) = _charges(project)[0]["usage"]["by_model"].values()
    assert spent["cache_creation_1h"] == CLAUDE_HOUR
    _check_by_hand(project, [session.transcript_path], ran + 3)

    # the first turn of a /goal, before any Stop confirmed it: 3.5 responses' worth, so the
    # 4th response crosses it
    first = init_git_project(tmp_path / "first-turn")
    usd = _ceiling(each, 3.5)
    _guard(first, usd)
    session = claude_host(FIRST_TURN).run(f"/goal {OBJECTIVE}", cwd=first, timeout=120,
                                          args=args, env=NO_BLOCK_CAP)
    assert session.terminal_reason == "stop_hook_prevented", session.result
    denials, ran = _claude_calls(session)
    assert len(denials) == 1 and ran in (3, 4), (denials, ran)
    assert denials[0].startswith(f"FORGE_GOAL_BUDGET_EXHAUSTED: the first turn of /goal "
                                 f"{OBJECTIVE} spent "), denials[0]
    assert _response_words(each, usd, ran).search(denials[0]), denials[0]
    assert f"\nNext: /goal {OBJECTIVE}" in denials[0], denials[0]
    reasons = stop_reasons(session)
    assert len(reasons) == 1 and "(the dollar ceiling) in 1 turns" in reasons[0], reasons
    goal = goal_in_state(first)
    assert (goal["turn_count"], goal["status"]) == (1, "exhausted")
    assert [charge["usage"]["picousd"] for charge in _charges(first)] == [each * (ran + 2)]
    _check_by_hand(first, [session.transcript_path], ran + 2)


READS_ONLY = working_until_denied(CLAUDE_USAGE, call={
    "name": "Read", "input": {"file_path": "{cwd}/notes.txt"}})


def test_a_model_that_only_reads_is_stopped_within_one_read_of_the_dollar_ceiling(
        claude_host, project):
    """A runaway loop of reads is a model request per call all the same: the host starts
    forge's PreToolUse for Read too, so the first turn of a `/goal` is denied the Read
    that crosses its dollar ceiling (3.5 responses' worth: the 4th response), or the next."""
    each = _claude_response_picos()
    (project / "notes.txt").write_text("READ-STEP\n")
    usd = _ceiling(each, 3.5)
    _guard(project, usd)
    session = claude_host(READS_ONLY).run(
        f"/goal {OBJECTIVE}", cwd=project, timeout=120, env=NO_BLOCK_CAP,
        args=["--allowedTools", "Read", "--model", CLAUDE_MODEL])
    assert session.terminal_reason == "stop_hook_prevented", session.result
    hooks = session.hooks_for("PreToolUse")
    assert {hook.stdin["tool_name"] for hook in hooks} == {"Read"}
    denials = _dollar_denials([hook.reply["hookSpecificOutput"]["permissionDecisionReason"]
                               for hook in hooks if hook.reply])
    ran = len(hooks) - len(denials)
    assert len(denials) == 1 and ran in (3, 4), (denials, ran)
    assert denials[0].startswith(f"FORGE_GOAL_BUDGET_EXHAUSTED: the first turn of /goal "
                                 f"{OBJECTIVE} spent "), denials[0]
    assert _response_words(each, usd, ran).search(denials[0]), denials[0]
    reasons = stop_reasons(session)
    assert len(reasons) == 1 and "(the dollar ceiling) in 1 turns" in reasons[0], reasons
    goal = goal_in_state(project)
    assert (goal["turn_count"], goal["status"]) == (1, "exhausted")
    # the reads that ran, the denied one and the model's last words: no twelfth read
    assert [charge["usage"]["picousd"] for charge in _charges(project)] == [each * (ran + 2)]


CODEX_MID_TURN = working_until_denied(CODEX_USAGE, evaluator=False, first_turn=True)
CODEX_FIRST_TURN = working_until_denied(CODEX_USAGE, evaluator=False)


def _codex_denials(tui) -> tuple[list[str], int]:
    """(the PreToolUse denials, how many PreToolUse calls) of a Codex TUI."""
    return _dollar_denials(denial_reasons(tui)), len(tui.hooks("PreToolUse"))


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_dollar_ceiling_stops_codex_within_one_tool_call(codex_host, project, tmp_path,
                                                           tui_factory):
    """Both cases at once, each in its own TUI: a later turn (the goal loop's second turn)
    and the first turn of a TUI `/goal`, which fires no hook until its first tool call."""
    from forge_runtime.hostkit.codex import MODEL
    from forge_runtime.hostkit.projects import init_git_project

    table = price_table()
    each = priced_by_hand(*prices_for(table, "openai", MODEL), CODEX_USAGE["input_tokens"],
                          CODEX_USAGE["output_tokens"], CODEX_USAGE["cache_read_input_tokens"],
                          0)
    mid_usd, first_usd = _ceiling(each, 4.5), _ceiling(each, 3.5)
    first = init_git_project(tmp_path / "first-turn")
    tuis = {}
    for where, script, usd in ((project, CODEX_MID_TURN, mid_usd),
                               (first, CODEX_FIRST_TURN, first_usd)):
        _guard(where, usd)
        tuis[where] = start_goal(codex_host, where, tui_factory, script)
    for _, tui in tuis.values():
        tui.wait_for(lambda tui=tui: exhausted_stops(tui), "forge to stop the goal",
                     timeout=90)

    # a later turn: turn 1 is one response, turn 2's 4th response crosses the ceiling
    codex, tui = tuis[project]
    denials, calls = _codex_denials(tui)
    assert len(denials) == 1 and calls in (4, 5), (denials, calls)
    assert "forge denies this tool call so the turn ends" in denials[0], denials[0]
    assert _response_words(each, mid_usd, calls).search(denials[0]), denials[0]
    stop = exhausted_stops(tui)[0]
    assert "(the dollar ceiling) in 2 turns" in stop["stopReason"], stop
    goal = goal_in_state(project)
    assert (goal["turn_count"], goal["status"]) == (2, "exhausted")
    assert [charge["usage"]["picousd"] for charge in _charges(project)] == \
        [each, each * (calls + 1)]
    (rollout,) = codex.rollouts()
    by_hand, seen = codex_rollout_picos(_sealed(project), rollout)
    assert seen == calls + 2
    assert sum(charge["usage"]["picousd"] for charge in _charges(project)) == by_hand == \
        _head(project)["picousd"]

    # the first turn: its 4th response crosses the ceiling
    codex, tui = tuis[first]
    denials, calls = _codex_denials(tui)
    assert len(denials) == 1 and calls in (4, 5), (denials, calls)
    assert denials[0].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: the first turn of /goal "), \
        denials[0]
    assert _response_words(each, first_usd, calls - 1).search(denials[0]), denials[0]
    stop = exhausted_stops(tui)[0]
    assert "(the dollar ceiling) in 1 turns" in stop["stopReason"], stop
    goal = goal_in_state(first)
    assert (goal["turn_count"], goal["status"]) == (1, "exhausted")
    assert [charge["usage"]["picousd"] for charge in _charges(first)] == [each * (calls + 1)]
    (rollout,) = codex.rollouts()
    by_hand, seen = codex_rollout_picos(_sealed(first), rollout)
    assert seen == calls + 1
    assert _charges(first)[0]["usage"]["picousd"] == by_hand == _head(first)["picousd"]
