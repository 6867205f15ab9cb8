"""HumanChannel: every situation a question can end in, offline."""

from __future__ import annotations

import asyncio
import json
import threading

import pytest

from forge_runtime.clarify.brief import Brief
from forge_runtime.clarify.channel import (
    ANSWERED,
    ASK_TOOL,
    DECLINED,
    INBOX_TOOL,
    OVER_QUOTA,
    TIMED_OUT,
    HumanChannel,
    dialogue,
)
from forge_runtime.clarify.store import freeze

DECIDE = "record this question and the assumption you make in its place under 'Unknowns and " \
         "assumptions'"


def reply(result: dict) -> dict:
    return json.loads(result["content"][0]["text"])


def ask_while(channel: HumanChannel, person, question="Which format?", options=None) -> dict:
    """Ask on the event loop while `person(channel)` acts from another thread."""
    async def go():
        asking = asyncio.ensure_future(channel.ask(question, options))
        while channel.pending is None and not asking.done():
            await asyncio.sleep(0.005)
        await asyncio.to_thread(person, channel)
        return await asking
    return asyncio.run(go())


def test_an_answer_from_another_thread_reaches_the_model(tmp_path):
    log = tmp_path / "dialogue.jsonl"
    seen = []
    channel = HumanChannel(max_asks=3, log_path=log, on_question=seen.append)
    result = ask_while(channel, lambda c: c.answer("CSV"), options=["CSV", "JSON", " "])
    assert reply(result) == {"outcome": ANSWERED, "answer": "CSV", "remaining": 2}
    assert seen[0].options == ("CSV", "JSON") and seen[0].number == 1
    (entry,) = dialogue(log)
    assert entry["question"] == "Which format?" and entry["answer"] == "CSV"
    assert channel.pending is None and channel.answer("late") is False


def test_a_question_nobody_answers_times_out_and_tells_the_model_to_decide(tmp_path):
    settled = []
    channel = HumanChannel(timeout_s=0.05, log_path=tmp_path / "log.jsonl",
                           on_settled=lambda q, outcome, answer: settled.append(outcome))
    result = reply(asyncio.run(channel.ask("Who reads it?")))
    assert result["outcome"] == TIMED_OUT and DECIDE in result["instruction"]
    assert "do not ask it again, and do not stop" in result["instruction"]
    assert result["remaining"] == -1 and settled == [TIMED_OUT]
    assert channel.answer("too late") is False
    assert dialogue(tmp_path / "log.jsonl")[0]["outcome"] == TIMED_OUT


def test_timeout_zero_answers_at_once_and_none_waits_for_the_person():
    assert reply(asyncio.run(HumanChannel(timeout_s=0).ask("q")))["outcome"] == TIMED_OUT
    forever = HumanChannel(timeout_s=None)
    assert reply(ask_while(forever, lambda c: c.answer("yes")))["answer"] == "yes"


def test_a_decline_tells_the_model_the_same_as_a_timeout():
    channel = HumanChannel()
    result = reply(ask_while(channel, lambda c: c.decline()))
    assert result["outcome"] == DECLINED and DECIDE in result["instruction"]


def test_over_quota_the_model_is_told_to_decide_and_zero_forbids_asking():
    channel = HumanChannel(max_asks=1, timeout_s=0)
    assert reply(asyncio.run(channel.ask("one")))["remaining"] == 0
    over = reply(asyncio.run(channel.ask("two")))
    assert over["outcome"] == OVER_QUOTA and DECIDE in over["instruction"]
    assert channel.asked == 1
    seen = []
    never = HumanChannel(max_asks=0, on_question=seen.append)
    assert reply(asyncio.run(never.ask("q")))["outcome"] == OVER_QUOTA and seen == []


def test_the_three_idle_answers_can_be_worded_by_the_caller():
    channel = HumanChannel(timeout_s=0, timeout_text="T", quota_text="Q", declined_text="D")
    assert reply(asyncio.run(channel.ask("q")))["instruction"] == "T"


def test_an_empty_question_is_refused_and_costs_no_quota():
    channel = HumanChannel(max_asks=1, timeout_s=0)
    refused = asyncio.run(channel.ask("   "))
    assert refused["is_error"] is True and "empty" in refused["content"][0]["text"]
    assert channel.asked == 0 and channel.remaining == 1


def test_a_ui_callback_that_raises_is_collected_and_the_run_goes_on():
    def broken(*args):
        raise RuntimeError("screen gone")
    channel = HumanChannel(on_question=broken, on_settled=broken)
    result = reply(ask_while(channel, lambda c: c.answer("still here")))
    assert result["answer"] == "still here"
    assert [str(e) for e in channel.ui_errors] == ["screen gone", "screen gone"]


def test_answer_and_decline_race_safely_from_many_threads():
    channel = HumanChannel()

    def crowd(c: HumanChannel):
        wins = []
        threads = [threading.Thread(target=lambda i=i: wins.append(
            c.answer(f"a{i}") if i % 2 else c.decline())) for i in range(16)]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()
        assert wins.count(True) == 1
    result = reply(ask_while(channel, crowd))
    assert result["outcome"] in (ANSWERED, DECLINED)


def test_the_inbox_hands_over_what_the_person_sent_and_amends_a_frozen_brief(tmp_path):
    path = tmp_path / "brief.md"
    freeze(Brief.parse("Goal: g\nAcceptance: a\nScope: b\nAssumptions: c\n"), path)
    channel = HumanChannel(amend_path=path, log_path=tmp_path / "log.jsonl")
    channel.send("Also the totals row.")
    channel.send("  ")
    assert reply(asyncio.run(channel.inbox())) == {"messages": ["Also the totals row."]}
    assert reply(asyncio.run(channel.inbox())) == {"messages": []}
    brief = Brief.load(path)
    assert [a.text for a in brief.amendments] == ["Also the totals row."]
    assert brief["Goal"] == "g"


def test_the_server_is_named_human_with_ask_and_inbox():
    server = HumanChannel().server()
    assert server["name"] == "human" and server["type"] == "sdk"
    assert (ASK_TOOL, INBOX_TOOL) == ("mcp__human__ask", "mcp__human__inbox")


def test_a_negative_quota_is_refused():
    with pytest.raises(ValueError):
        HumanChannel(max_asks=-1)
