"""A goal's dollars through the hooks: `goal: {tranche: {usd: N}}`, each charge priced
with the table its activation sealed, the ceiling at a Stop and before a tool call, and a
ledger that fails closed on dollars that do not add up or a table changed on disk."""

from __future__ import annotations

import json
from decimal import Decimal

import pytest
from genai_prices import Usage, calc_price
from goal_support import (
    Session,
    assert_transition,
    crossing_in_two_turns,
    goal_again,
    goal_project_fixture,
    running_goal,
)

from forge_runtime.goal.budget import pricing
from forge_runtime.goal.store import layout, state_file
from forge_runtime.goal.store.ledger import Ledger

OBJECTIVE = "the invoice totals add up"
MODEL = "claude-opus-4-5"  # $5 / $25 per million, cache reads $0.50, writes $6.25 / $10

project = goal_project_fixture()


def _dollar_goal(project, usd: str) -> Session:
    """A person's goal (typed, no Stop yet) under a tranche of `usd` dollars."""
    (project.root / ".forge").mkdir(exist_ok=True)
    (project.root / ".forge" / "guard.yaml").write_text(
        f"goal: {{require_sandbox: false, tranche: {{usd: {usd}}}}}\n")
    return running_goal(project, OBJECTIVE)


def _spend(session: Session, message_id: str, model: str = MODEL, hour: int = 0, **tokens):
    api = {"input_tokens": tokens.get("input", 0), "output_tokens": tokens.get("output", 0),
           "cache_creation_input_tokens": tokens.get("cache_creation", 0),
           "cache_read_input_tokens": tokens.get("cache_read", 0),
           "cache_creation": {"ephemeral_5m_input_tokens":
                              tokens.get("cache_creation", 0) - hour,
                              "ephemeral_1h_input_tokens": hour}}
    for block in ({"type": "text", "text": "working"},
                  {"type": "tool_use", "id": "t", "name": "Bash", "input": {}}):
        session._append({"type": "assistant", "message": {
            "id": message_id, "model": model, "role": "assistant", "stop_reason": "tool_use",
            "usage": api, "content": [block]}})


def _ledger(project) -> Ledger:
    return Ledger(project.ledger_root, state_file.read(project.state_path).goal["nonce"])


def _by_hand(model: str, hour: int = 0, **tokens) -> Decimal:
    """genai-prices' own price of one response, with none of forge's code."""
    whole = tokens.get("input", 0) + tokens.get("cache_read", 0) + tokens.get("cache_creation", 0)
    return calc_price(Usage(input_tokens=whole, output_tokens=tokens.get("output", 0),
                            cache_read_tokens=tokens.get("cache_read", 0),
                            cache_write_tokens=tokens.get("cache_creation", 0),
                            cache_write_1h_tokens=hour),
                      model, provider_id="anthropic").total_price


def test_every_charge_carries_its_dollars_and_the_goal_their_exact_sum(project):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    spent = [dict(input=1000, output=2000, cache_read=50_000, cache_creation=8000, hour=3000),
             dict(input=300_000, output=10),  # one long request
             dict(input=10, output=1)]
    for n, tokens in enumerate(spent):
        _spend(session, f"msg_{n}", **tokens)
        assert session.turn() is None
    ledger = _ledger(project)
    charges = [record for record in ledger.history() if record["kind"] == "charge"]
    dollars = [Decimal(record["usage"]["picousd"]) / pricing.PICO for record in charges]
    assert dollars == [_by_hand(MODEL, **tokens) for tokens in spent]
    goal = ledger.current().goal
    assert goal["picousd"] == sum(record["usage"]["picousd"] for record in charges)
    assert goal["prices"]["version"].startswith("genai-prices ")
    ledger.verify()


def test_a_dollar_ceiling_exhausts_the_tranche_and_a_new_goal_adds_one_more(project):
    session = _dollar_goal(project, "0.05")
    # $0.03, then $0.025
    text = crossing_in_two_turns(session, _spend, {"input": 6000}, {"output": 1000})
    assert "spent $0.06 of $0.05 (the dollar ceiling) in 2 turns" in text
    assert "adds one more tranche of 20 turns and $0.05" in text
    assert _ledger(project).history()[-1]["ceiling"] == "usd"
    goal = goal_again(session, OBJECTIVE)
    assert (goal["status"], goal["usd_ceiling"], goal["activation_count"]) == \
        ("active", 10 * 10**10, 2)


def _tool_call(session: Session) -> dict | None:
    """forge's PreToolUse for a Read the model asks for: its reply, None when allowed."""
    from forge_runtime.hooks import pre_tool_use

    return pre_tool_use.handle(session.event("PreToolUse", tool_name="Read",
                                             tool_input={"file_path": "a"}))


def _turn_ends_the_goal_at_a_dollar(project, session: Session) -> None:
    """The model ends the turn forge denied a call of: its Stop ends the goal, the ledger
    holding the dollar spent."""
    session._append({"type": "assistant", "message": {"role": "assistant",
                                                      "stop_reason": "end_turn", "content": []}})
    assert session.stop()["continue"] is False
    assert _ledger(project).current().goal["picousd"] == 10**12


def test_a_turn_past_the_dollar_ceiling_is_denied_its_next_tool_call(project):
    session = _dollar_goal(project, "1")
    _spend(session, "msg_1", input=100_000)  # $0.50
    # at $0.50 a turn, the next reaches the ceiling: the model hears it is the last
    assert session.turn()["systemMessage"].startswith("FORGE_GOAL_LAST_TURN: ")
    _spend(session, "msg_2", output=10_000)  # $0.25
    assert _tool_call(session) is None
    _spend(session, "msg_3", output=10_000)  # $0.25: $1.00 in all
    reply = _tool_call(session)["hookSpecificOutput"]
    assert reply["permissionDecision"] == "deny"
    assert "spent $1.00 of $1.00 (the dollar ceiling)" in reply["permissionDecisionReason"]
    _turn_ends_the_goal_at_a_dollar(project, session)


def test_an_unknown_model_is_charged_as_the_dearest_of_its_family(project):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    _spend(session, "msg_1", model="claude-opus-99", input=1_000_000)
    assert session.turn() is None
    charge = [r for r in _ledger(project).history() if r["kind"] == "charge"][-1]
    assert charge["usage"]["picousd"] == 15 * 10**12  # Opus 4.0/4.1's $15, not 4.5's $5


def test_a_sealed_table_changed_on_disk_fails_the_next_charge_closed(project):
    session = Session(project)
    session.person_goal(OBJECTIVE)
    _spend(session, "msg_1", input=1000)
    assert session.turn() is None
    prices = _ledger(project).current().goal["prices"]
    path = project.ledger_root / layout.PRICES_DIR / f"{prices['digest']}.json"
    table = json.loads(path.read_bytes())
    for entry in table["models"]:
        entry["prices"] = dict.fromkeys(entry["prices"], 0)
    path.write_bytes(pricing.encode(table))
    pricing._loaded.clear()
    _spend(session, "msg_2", input=1000)
    reply = session.turn()
    assert reply["continue"] is False
    assert "FORGE_GOAL_LEDGER_TAMPERED" in reply["stopReason"]
    assert "price table" in reply["stopReason"]


BEFORE = {"seq": 3, "kind": "charge", "goal": {
    "nonce": "n" * 32, "objective": "o", "objective_hash": "h", "repository": "r",
    "status": "active", "turn_count": 0, "turn_ceiling": 20, "activation_count": 1,
    "activation_id": "a", "token_count": 0, "picousd": 0, "usd_ceiling": 10**12,
    "tranche_usd": 10**12, "prices": {"digest": "d" * 64, "version": "genai-prices x"}}}
USAGE = {"by_model": {MODEL: {"input": 10, "output": 0, "cache_creation": 0, "cache_read": 0,
                              "picousd": 50_000_000}}, "counted": 10, "picousd": 50_000_000}


def _charge(**changes) -> dict:
    goal = {**BEFORE["goal"], "turn_count": 1, "token_count": 10, "picousd": 50_000_000}
    record = {"seq": 4, "kind": "charge", "turn": "t", "usage": USAGE, "goal": goal}
    for key, value in changes.items():
        if key in goal:
            goal[key] = value
        else:
            record[key] = value
    return record


@pytest.mark.parametrize(("record", "why"), [
    (_charge(), None),
    (_charge(picousd=0), "dollar count"),
    (_charge(usage={**USAGE, "picousd": 1}), "does not add up"),
    (_charge(usd_ceiling=10**15), "outside an activation"),
    (_charge(prices={"digest": "e" * 64, "version": "cheaper"}), "outside an activation"),
    (_charge(picousd=-5), "not a count"),
])
def test_a_record_cannot_forge_dollars_or_move_the_dollar_ceiling_or_table(record, why):
    assert_transition(BEFORE, record, why)


def test_a_dollar_ceiling_with_no_price_table_refuses_the_goal(project, monkeypatch):
    from forge_runtime.goal.budget import price_table

    def no_table(path=None):
        raise ImportError("No module named 'genai_prices'")

    monkeypatch.setattr(price_table, "compiled_path",
                        lambda: project.root / "nowhere" / "forge-prices.json")
    monkeypatch.setattr(price_table, "write", no_table)
    monkeypatch.setattr(price_table, "compile_table", no_table)
    session = _dollar_goal(project, "5")
    reply = session.turn()
    text = json.dumps(reply)
    assert "FORGE_GOAL_PRICES_UNAVAILABLE" in text
    assert "Fix: forge goal prices --compile" in text


# -- where a person looks ----------------------------------------------------------------

cli_project = goal_project_fixture(cli=True)


def _priced_run(project) -> Session:
    """A goal with a dollar ceiling, two models, a stuck run, spent to its ceiling."""
    session = _dollar_goal(project, "0.1")
    for n in range(8):
        _spend(session, f"msg_{n}", input=2000 + 500 * n, output=300)
        _spend(session, f"helper_{n}", model="claude-haiku-4-5", input=5000, output=100)
        if (session.turn() or {}).get("continue") is False:
            break
    return session


def test_status_and_report_give_dollars_per_turn_model_and_the_table(cli_project, capsys):
    from goal_support import run_cli

    _priced_run(cli_project)
    code, text = run_cli(capsys, "goal", "status")
    assert "dollars     $0.1" in text and "of $0.10 (at API prices, genai-prices " in text
    assert f"model       {MODEL}" in text and "· $0." in text
    code, text = run_cli(capsys, "goal", "report")
    assert "prices      genai-prices " in text
    assert "tranche 1" in text and "ceilings: $0.10" in text
    assert "exhausted on its dollar ceiling" in text
    code, data = _json(capsys, "goal", "status")
    assert data["budget"]["usd"]["ceiling"] == 0.1 and data["budget"]["usd"]["used"] >= 0.1


def _json(capsys, *argv):
    from forge_runtime.cli.main import main

    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def _chromium() -> str | None:
    import shutil

    return shutil.which("chromium") or shutil.which("chromium-browser")


@pytest.mark.skipif(_chromium() is None, reason="needs chromium (.ci/run installs it)")
def test_the_html_report_opens_in_a_real_browser_and_shows_the_run(cli_project, capsys,
                                                                 tmp_path):
    import subprocess

    _priced_run(cli_project)
    page = tmp_path / "goal.html"
    code, data = _json(capsys, "goal", "report", "--html", str(page))
    assert code == 0 and data["html"] == str(page)
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([_chromium(), *flags, "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    turns = data["tranches"][0]["turns"]
    assert f"exhausted at {len(turns)} of 20 turns" in dom
    assert dom.count('<rect x="') == 2 * 2 * len(turns)  # two charts, two models a turn
    assert "exhausted on its dollar ceiling" in dom
    assert MODEL in dom and "claude-haiku-4-5" in dom and "genai-prices" in dom
    shot = tmp_path / "goal.png"
    subprocess.run([_chromium(), *flags, f"--screenshot={shot}", "--window-size=1000,900",
                    page.as_uri()], capture_output=True, timeout=120, check=True)
    assert shot.stat().st_size > 10_000  # a drawn page, not a blank one


def test_the_html_report_escapes_what_the_ledger_holds():
    from forge_runtime.goal.views.report_html import render

    told = {"goal": {"nonce": "n" * 32, "objective": "<script>alert(1)</script>",
                     "status": "active", "turn_count": 0, "turn_ceiling": 20},
            "tranches": [], "by_model": {"<img src=x>": {"input": 1}}}
    page = render(told)
    assert "<script>" not in page and "&lt;script&gt;" in page
    assert "<img src=x>" not in page
    assert "default-src 'none'" in page


def test_the_first_turn_is_held_to_the_dollar_ceiling_before_its_stop(project):
    """The ceilings hold from a goal's first tool call, dollars too."""
    session = _dollar_goal(project, "1")
    _spend(session, "msg_1", input=100_000)  # $0.50
    assert _tool_call(session) is None
    _spend(session, "msg_2", output=20_000)  # $0.50: $1.00 in all, no Stop yet
    reason = _tool_call(session)["hookSpecificOutput"]["permissionDecisionReason"]
    assert reason.startswith(f"FORGE_GOAL_BUDGET_EXHAUSTED: the first turn of /goal "
                             f"{OBJECTIVE} spent $1.00 of $1.00 (the dollar ceiling) before")
    _turn_ends_the_goal_at_a_dollar(project, session)
