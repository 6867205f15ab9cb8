"""The terminal side of the channel, offline: what a typed line means, and what is shown."""

from __future__ import annotations

import asyncio
import io
import json
import os
import time

from forge_runtime.clarify.channel import HumanChannel
from forge_runtime.clarify.terminal import TerminalUI


def until(condition, limit=5.0):
    deadline = time.monotonic() + limit
    while not condition():
        assert time.monotonic() < deadline
        time.sleep(0.01)


def test_a_number_picks_text_answers_enter_declines_and_unasked_lines_go_to_the_inbox():
    read_end, write_end = os.pipe()
    typed = os.fdopen(write_end, "w")
    channel = HumanChannel(max_asks=5)
    screen = io.StringIO()
    ui = TerminalUI(channel, out=screen, lines_in=os.fdopen(read_end), show_quota=True)
    ui.start()
    typed.write("also the totals row\n")
    typed.flush()
    until(lambda: "noted" in screen.getvalue())

    async def ask(question, options, line):
        asking = asyncio.ensure_future(channel.ask(question, options))
        while channel.pending is None:
            await asyncio.sleep(0.01)
        typed.write(line + "\n")
        typed.flush()
        return json.loads((await asking)["content"][0]["text"])

    assert asyncio.run(ask("Which format?", ["CSV", "JSON"], "2"))["answer"] == "JSON"
    assert asyncio.run(ask("Which format?", ["CSV", "JSON"], "3"))["answer"] == "3"
    assert asyncio.run(ask("Who reads it?", [], "the finance team"))["answer"] == \
        "the finance team"
    assert asyncio.run(ask("Totals?", [], ""))["outcome"] == "declined"
    inbox = json.loads(asyncio.run(channel.inbox())["content"][0]["text"])
    assert inbox == {"messages": ["also the totals row"]}
    ui.stop()
    shown = screen.getvalue()
    assert "Question 1: Which format?\n  1. CSV\n  2. JSON\n  (4 questions left)\n" in shown
    assert "  -> JSON\n" in shown and "  -> the finance team\n" in shown
    assert "(left to the model: it records its assumption)" in shown
    assert "thinking" not in shown  # no progress line on something that is not a terminal
    assert channel.ui_errors == []


def test_nobody_at_the_screen_shows_the_question_and_what_the_model_was_told():
    channel = HumanChannel(timeout_s=0)
    screen = io.StringIO()
    TerminalUI(channel, out=screen, lines_in=io.StringIO(), nobody=True).start()
    asyncio.run(channel.ask("Which format?"))
    assert screen.getvalue() == ("Question 1: Which format?\n  (no answer in time: the model "
                                 "decides and records its assumption)\n")
