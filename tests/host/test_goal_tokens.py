"""Tokens against the real Claude Code: what each turn spent, subagents included, and the
token ceiling of `.forge/guard.yaml` stopping a goal.

The scripted model reports usage on every response: the main session delegates to a
subagent (the Agent tool), the subagent runs Bash once and reports, the main session ends
its turn. The host's /goal evaluator never says met, so only forge's ceilings end the run.
"""

from __future__ import annotations

import json
import re
import shutil
import time
from pathlib import Path

import pytest
from goal_support import goal_in_state
from session_support import bash, guard_goal, stop_reasons, tool_denials, working_until_denied

from forge_runtime.goal.budget import usage
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.project import find_project

pytestmark = pytest.mark.host

OBJECTIVE = "the file never.txt exists"
DELEGATING = {"input_tokens": 200, "output_tokens": 20, "cache_read_input_tokens": 500,
              "cache_creation_input_tokens": 14}
SCRIPT = f"""
rules:
  - name: evaluator says not yet
    when: {{goal_evaluator: true}}
    reply: {{verdict: {{ok: false, reason: "GOAL-NOT-MET: keep working"}},
             usage: {{input_tokens: 7, output_tokens: 3}}}}
  - name: subagent reports
    when: {{last_tool_result_contains: "SUBAGENT-BASH"}}
    reply:
      text: "SUBAGENT-DONE"
      usage: {{input_tokens: 5000, output_tokens: 50, cache_read_input_tokens: 9000,
               cache_creation_input_tokens: 11}}
  - name: subagent works
    when: {{last_user_text_contains: "SUBAGENT-TASK"}}
    reply:
      text: "running it"
      tool_calls: [{{name: Bash, input: {{command: "echo SUBAGENT-BASH"}}}}]
      usage: {{input_tokens: 4000, output_tokens: 40, cache_read_input_tokens: 8000,
               cache_creation_input_tokens: 12}}
  - name: main finishes
    when: {{last_is_tool_result: true}}
    reply:
      text: "MAIN-DONE"
      usage: {{input_tokens: 300, output_tokens: 30, cache_read_input_tokens: 1000,
               cache_creation_input_tokens: 13}}
  - name: model works
    reply:
      text: "delegating"
      tool_calls:
        - name: Agent
          input: {{description: d, prompt: "SUBAGENT-TASK: run it",
                   subagent_type: general-purpose, run_in_background: false}}
      usage: {json.dumps(DELEGATING)}
"""
# per turn: the delegating and the finishing response, and the subagent's two
PER_TURN = (200 + 20 + 14 + 500 // 10) + (300 + 30 + 13 + 1000 // 10) + \
    (4000 + 40 + 12 + 8000 // 10) + (5000 + 50 + 11 + 9000 // 10)
NO_BLOCK_CAP = {"CLAUDE_CODE_STOP_HOOK_BLOCK_CAP": "100"}
ARGS = ["--allowedTools", "Bash,Agent"]


def _distinct_responses(path: Path) -> dict[str, dict]:
    """Every response of a transcript file, once per message id, as the test reads it."""
    found = {}
    for line in path.read_text().splitlines():
        entry = json.loads(line)
        message = entry.get("message")
        if entry.get("type") == "assistant" and isinstance(message, dict) and \
                "usage" in message:
            found[message["id"]] = message["usage"]
    return found


def _counted(responses: dict[str, dict]) -> int:
    return sum(spent["input_tokens"] + spent["output_tokens"]
               + spent["cache_creation_input_tokens"]
               + spent["cache_read_input_tokens"] // 10 for spent in responses.values())


def check_priced(project: Path, model: str, spent: dict, picousd: int) -> None:
    """The charge's dollars are its tokens priced with the goal's sealed table, and, by
    genai-prices' own arithmetic, what a model it knows costs, or, for one it does not (the
    host kit's models are made up), never less than any model of its family."""
    from decimal import Decimal

    from genai_prices import Usage, calc_price

    from forge_runtime.goal.budget import pricing

    forge = find_project(project)
    goal = Ledger(forge.ledger_root, goal_in_state(project)["nonce"]).current().goal
    table = pricing.sealed(forge.ledger_root, goal["prices"])
    assert picousd == table.picos(model, spent) > 0
    whole = spent["input"] + spent["cache_read"] + spent["cache_creation"]
    usage = Usage(input_tokens=whole, output_tokens=spent["output"],
                  cache_read_tokens=spent["cache_read"], cache_write_tokens=spent["cache_creation"])
    dollars = Decimal(picousd) / pricing.PICO
    if table.estimate(model) is None:
        assert dollars == calc_price(usage, model).total_price
        return
    family = pricing.family_of(model)
    peers = [(entry["id"], entry["provider"]) for entry in table.table["models"]
             if entry["family"] == family and pricing.matches(entry["match"], entry["id"])]
    assert peers, f"{model}: no model of family {family} to compare with"
    for peer, provider in peers:
        assert dollars >= calc_price(usage, peer, provider_id=provider).total_price, peer


def _charges(project: Path) -> list[dict]:
    goal = goal_in_state(project)
    ledger = Ledger(find_project(project).ledger_root, goal["nonce"])
    return [record for record in ledger.history() if record["kind"] == "charge"]


def test_a_token_ceiling_stops_the_goal_and_the_ledger_holds_every_response(claude_host,
                                                                           project):
    guard_goal(project, f"tranche: {{tokens: {3 * PER_TURN}}}")  # reached as turn 3 ends
    host = claude_host(SCRIPT)
    session = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=120, args=ARGS,
                       env=NO_BLOCK_CAP)
    assert session.terminal_reason == "stop_hook_prevented", session.result
    reasons = stop_reasons(session)
    assert len(reasons) == 1 and "FORGE_GOAL_BUDGET_EXHAUSTED" in reasons[0], reasons
    assert "the token ceiling" in reasons[0] and "in 3 turns" in reasons[0], reasons[0]
    goal = goal_in_state(project)
    assert (goal["turn_count"], goal["status"]) == (3, "exhausted")

    # the subagents wrote their own transcripts; none of their responses is in the main one
    main = session.transcript_path
    helpers = sorted(Path(usage.subagent_dir(str(main))).glob("agent-*.jsonl"))
    assert len(helpers) == 3
    responses = _distinct_responses(main)
    for helper in helpers:
        responses.update(_distinct_responses(helper))
    charges = _charges(project)
    assert [charge["usage"]["counted"] for charge in charges] == [PER_TURN] * 3
    assert sum(charge["usage"]["counted"] for charge in charges) == _counted(responses)
    (model,) = charges[0]["usage"]["by_model"]
    spent = dict(charges[0]["usage"]["by_model"][model])
    picousd = spent.pop("picousd")
    assert spent == {"input": 9500, "output": 140, "cache_creation": 50, "cache_read": 18500}
    head = Ledger(find_project(project).ledger_root, goal["nonce"]).current()
    check_priced(project, model, spent, picousd)
    assert head.goal["token_count"] == 3 * PER_TURN

    # resuming the session resets nothing: its Stop is refused, the count stays
    resumed = host.run("go on", cwd=project, resume=session.session_id, timeout=120,
                       args=ARGS, env=NO_BLOCK_CAP)
    assert "FORGE_GOAL_BUDGET_EXHAUSTED" in stop_reasons(resumed)[0]
    again = Ledger(find_project(project).ledger_root, goal["nonce"]).current().goal
    assert (again["token_count"], again["token_ceiling"]) == (3 * PER_TURN, 3 * PER_TURN)


def test_a_deleted_subagent_transcript_fails_closed(claude_host, project):
    host = claude_host(SCRIPT)
    first = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=120, args=ARGS + [
        "--max-turns", "2"])
    assert len(_charges(project)) == 1
    for helper in Path(usage.subagent_dir(str(first.transcript_path))).glob("agent-*.jsonl"):
        helper.unlink()
    shutil.rmtree(Path(usage.subagent_dir(str(first.transcript_path))))
    again = host.run("go on", cwd=project, resume=first.session_id, timeout=120, args=ARGS
                     + ["--max-turns", "2"])
    reasons = stop_reasons(again)
    assert reasons and "FORGE_GOAL_LEDGER_TAMPERED" in reasons[0], reasons
    assert "subagent transcript" in reasons[0]
    assert len(_charges(project)) == 1


# How many of its last responses `claude -p` may not have written to the transcript when it
# starts a PreToolUse: measured one, and two once on a loaded CI machine (4d8a424). forge
# counts what the transcript holds, so the denial comes that many calls late.
HOST_LAG = 2
# every response of the budget scripts: 1,000 tokens
THOUSAND = {"input_tokens": 1000, "output_tokens": 0, "cache_read_input_tokens": 0,
            "cache_creation_input_tokens": 0}
MID_TURN = working_until_denied(THOUSAND, calls=None, first_turn=True)


def _run_to_the_token_ceiling(claude_host, project, script):
    """A Claude Code `/goal` under a 5k token ceiling, run until forge stops it: (the
    session, the PreToolUse denials, how many `echo step` calls ran)."""
    guard_goal(project, "tranche: {tokens: 5000}")
    session = claude_host(script).run(f"/goal {OBJECTIVE}", cwd=project, timeout=120,
                                      args=["--allowedTools", "Bash"], env=NO_BLOCK_CAP)
    assert session.terminal_reason == "stop_hook_prevented", session.result
    return (session, *tool_denials(session))


def test_a_turn_that_crosses_the_token_ceiling_is_stopped_at_its_next_tool_call(claude_host,
                                                                               project):
    session, denials, ran = _run_to_the_token_ceiling(claude_host, project, MID_TURN)
    # turn 1 charged 1,000; in turn 2 each response is a tool call of 1,000. The 4th
    # reaches 5,000: its call is denied, or a later one's (HOST_LAG: PreToolUse can start
    # before the host has written its own response to the transcript)
    assert len(denials) == 1, denials
    assert 3 <= ran <= 3 + HOST_LAG, ran
    assert denials[0].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: ")
    # it counted what the transcript held then: 1,000 charged and 4 or 5 responses
    assert re.search(r"used [56]k of 5k tokens \(the token ceiling\)", denials[0]), denials[0]
    assert "forge denies this tool call so the turn ends" in denials[0]
    assert denials[0].splitlines()[1].startswith("Checkpoint: ")
    reasons = stop_reasons(session)
    assert len(reasons) == 1 and "the token ceiling" in reasons[0], reasons
    goal = goal_in_state(project)
    assert (goal["turn_count"], goal["status"]) == (2, "exhausted")
    # the Stop charged every response of the turn: the calls that ran, the denied one, the
    # closing text
    assert [charge["usage"]["counted"] for charge in _charges(project)] == \
        [1000, 1000 * (ran + 2)]


FIRST_TURN = working_until_denied(THOUSAND)


def test_the_first_turn_of_a_goal_is_stopped_at_its_token_ceiling(claude_host, project):
    """The ceilings hold from the first tool call, before a Stop confirmed the goal (without
    them all 12 calls of the one long turn would run, and the first Stop charge 13k against
    a 5k ceiling)."""
    session, denials, ran = _run_to_the_token_ceiling(claude_host, project, FIRST_TURN)
    # each response is a call of 1,000: the 5th reaches 5,000, so its call is denied, or a
    # later one's (HOST_LAG: the host may start PreToolUse before it wrote its response)
    assert len(denials) == 1, denials
    assert 4 <= ran <= 4 + HOST_LAG, ran
    assert denials[0].startswith(f"FORGE_GOAL_BUDGET_EXHAUSTED: the first turn of /goal "
                                 f"{OBJECTIVE} used "), denials[0]
    assert re.search(r"used [56]k of 5k tokens \(the token ceiling\)", denials[0]), denials[0]
    assert f"\nNext: /goal {OBJECTIVE}" in denials[0], denials[0]
    reasons = stop_reasons(session)
    assert len(reasons) == 1 and "the token ceiling" in reasons[0], reasons
    goal = goal_in_state(project)
    assert (goal["turn_count"], goal["status"]) == (1, "exhausted")
    # the first Stop charged the whole first turn, as before
    assert [charge["usage"]["counted"] for charge in _charges(project)] == [1000 * (ran + 2)]


CODEX_WORKS = """
rules:
  - name: model works
    reply:
      text: "Working on it."
      usage: {input_tokens: 100, cache_read_input_tokens: 900, output_tokens: 50}
"""
CODEX_TURN = 100 + 50 + 900 // 10  # OpenAI's input holds the 900 cached: 100 fresh


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_a_codex_goal_stops_at_its_token_ceiling_and_a_claude_session_continues_the_count(
        claude_host, codex_host, project, tmp_path):
    from codex_support import PROMPT, model_turns, run_goal_to_exhaustion
    from tui_support import Tui

    guard_goal(project, f"tranche: {{tokens: {5 * CODEX_TURN}}}")
    codex = codex_host(CODEX_WORKS)
    codex.install_forge(project)
    tui = Tui(codex, project, tmp_path / "codex")
    try:
        tui.wait_for(lambda: PROMPT in tui.screen(), "Codex's prompt")
        reply = run_goal_to_exhaustion(codex, tui)
    finally:
        tui.close()
    assert "used 1.2k of 1.2k tokens (the token ceiling) in 5 turns" in reply["stopReason"]
    assert model_turns(codex) == 5
    charges = _charges(project)
    assert [charge["usage"]["counted"] for charge in charges] == [CODEX_TURN] * 5
    (model,) = charges[0]["usage"]["by_model"]
    spent = dict(charges[0]["usage"]["by_model"][model])
    picousd = spent.pop("picousd")
    assert spent == {"input": 100, "output": 50, "cache_creation": 0, "cache_read": 900}
    check_priced(project, model, spent, picousd)

    # Claude Code, the same objective: one more tranche of tokens, the count carried over
    claude = claude_host(SCRIPT)
    session = claude.run(f"/goal {OBJECTIVE}", cwd=project, timeout=120, args=ARGS,
                         env=NO_BLOCK_CAP)
    reasons = stop_reasons(session)
    assert len(reasons) == 1 and "of 2.4k tokens (the token ceiling) in 6 turns" in reasons[0]
    goal = Ledger(find_project(project).ledger_root, goal_in_state(project)["nonce"]).current()
    assert goal.goal["token_count"] == sum(charge["usage"]["counted"]
                                           for charge in _charges(project))
    assert goal.goal["token_count"] > 5 * CODEX_TURN


CODEX_FIRST_TURN = working_until_denied({"input_tokens": 1000, "output_tokens": 0},
                                        evaluator=False)


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_the_first_turn_of_a_codex_goal_is_stopped_at_its_token_ceiling(codex_host, project,
                                                                        tui_factory):
    """Codex fires no hook at a TUI `/goal`: its first tool call finds the goal in Codex's
    goal store and the person's `/goal` in the rollout, and holds the turn to its ceilings
    (without that all 12 calls would run before the first Stop)."""
    from codex_support import denial_reasons, exhausted_stops, start_goal

    guard_goal(project, "tranche: {tokens: 5000}")
    _, tui = start_goal(codex_host, project, tui_factory, CODEX_FIRST_TURN)
    tui.wait_for(lambda: exhausted_stops(tui), "forge to stop the goal", timeout=60)
    calls = tui.hooks("PreToolUse")
    denials = denial_reasons(tui)
    # each response is a call of 1,000: the 5th reaches 5,000 (its call or the next denied)
    assert len(denials) == 1 and len(calls) in (5, 6), (denials, len(calls))
    assert denials[0].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: the first turn of /goal ")
    assert re.search(r"used [56]k of 5k tokens \(the token ceiling\)", denials[0]), denials[0]
    stop = exhausted_stops(tui)[0]
    assert "the token ceiling" in stop["stopReason"] and "in 1 turns" in stop["stopReason"]
    goal = goal_in_state(project)
    assert (goal["turn_count"], goal["status"]) == (1, "exhausted")
    assert [charge["usage"]["counted"] for charge in _charges(project)] == \
        [1000 * (len(calls) + 1)]


# a minute's sleep (the host refuses a plain `sleep 61`), then `echo next` once it ran
SLOW_TURN = working_until_denied(
    calls=None, call=bash("python3 -c 'import time; time.sleep(61)'; echo SLEPT"),
    before=({"name": "the model goes on after a long command",
             "when": {"last_tool_result_contains": "SLEPT"},
             "reply": {"tool_calls": [bash("echo next")]}},))
CODEX_SLOW_TURN = working_until_denied(evaluator=False, calls=40, call=bash("sleep 4; echo tick"))


def test_the_first_turn_past_the_time_ceiling_is_stopped_at_its_next_tool_call(
        claude_host, codex_host, project, tmp_path, tui_factory):
    """The one real minute of the time ceiling, spent in the goal's first turn on both
    hosts at once: no Stop has confirmed the goal yet, and its clock runs from the person's
    prompt (without that the first turn would have no ceiling: `echo next` would run and
    the turn go on). Codex's goal runs in its TUI while Claude Code's session waits its minute."""
    from codex_support import denial_reasons, exhausted_stops, start_goal

    from forge_runtime.hostkit.projects import init_git_project

    codex_tui = None
    if shutil.which("tmux") is not None:
        codex_project = init_git_project(tmp_path / "codex-project")
        guard_goal(codex_project, "tranche: {minutes: 1}")
        _, codex_tui = start_goal(codex_host, codex_project, tui_factory, CODEX_SLOW_TURN)
    guard_goal(project, "tranche: {minutes: 1}")
    host = claude_host(SLOW_TURN)
    session = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=150,
                       args=["--allowedTools", "Bash"], env=NO_BLOCK_CAP)
    assert session.terminal_reason == "stop_hook_prevented", session.result
    denials = [hook.reply["hookSpecificOutput"]["permissionDecisionReason"]
               for hook in session.hooks_for("PreToolUse") if hook.reply]
    assert len(denials) == 1 and len(session.hooks_for("PreToolUse")) == 2, denials
    assert re.search(r"the first turn of /goal .* ran 1 of 1 minutes \(the time ceiling\)",
                     denials[0]), denials[0]
    reasons = stop_reasons(session)
    assert len(reasons) == 1 and "minutes (the time ceiling)" in reasons[0], reasons
    assert "in 1 turns" in reasons[0], reasons[0]
    goal = goal_in_state(project)
    assert (goal["turn_count"], goal["status"]) == (1, "exhausted")
    # the tranche's clock started when the prompt arrived, before the first turn's minute
    prompted = session.hooks_for("UserPromptSubmit")[0]
    started = Ledger(find_project(project).ledger_root, goal["nonce"]).current().goal[
        "tranche_started"]
    assert started <= time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(prompted.started + 1))

    if codex_tui is None:
        return
    codex_tui.wait_for(lambda: exhausted_stops(codex_tui), "forge to stop Codex's goal",
                       timeout=60)
    calls = codex_tui.hooks("PreToolUse")
    denied = denial_reasons(codex_tui)
    # each call sleeps 4 s: the first one after the minute is denied, none before it
    assert len(denied) == 1 and len(calls) >= 10, (denied, len(calls))
    assert re.search(r"the first turn of /goal .* ran 1 of 1 minutes \(the time ceiling\)",
                     denied[0]), denied[0]
    stop = exhausted_stops(codex_tui)[0]
    assert "minutes (the time ceiling)" in stop["stopReason"], stop
    assert goal_in_state(codex_project)["turn_count"] == 1
