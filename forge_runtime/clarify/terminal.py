"""The person's side of a `HumanChannel` in a terminal: questions shown, lines read.

A question shows its options numbered; a number picks one, other text is the answer in the
person's own words, and an empty line (Enter) leaves it to the model, which then records
its assumption. A line typed while no question waits goes to the model's inbox. While the
model thinks, one progress line counts the seconds.
"""

from __future__ import annotations

import sys
import threading
import time
from typing import TextIO

from forge_runtime.clarify.channel import ANSWERED, DECLINED, OVER_QUOTA, TIMED_OUT, Question

PROMPT = "answer (a number, your own words, or Enter to let the model decide): "
SETTLED = {
    DECLINED: "left to the model: it records its assumption",
    TIMED_OUT: "no answer in time: the model decides and records its assumption",
    OVER_QUOTA: "no questions left: the model decides and records its assumption",
}
TICK_S = 0.5


class TerminalUI:
    """Shows a channel's questions on `out` and feeds it the lines read from `lines_in`."""

    def __init__(self, channel, *, out: TextIO | None = None, lines_in: TextIO | None = None,
                 show_quota: bool = False, nobody: bool = False) -> None:
        self.channel = channel
        self.out = out or sys.stdout
        self.lines_in = lines_in or sys.stdin
        self.show_quota = show_quota
        self.nobody = nobody
        self._lock = threading.Lock()
        self._thinking_since: float | None = None
        self._progress_shown = False
        self._stop = threading.Event()
        channel.on_question = self.show_question
        channel.on_settled = self.show_settled

    def start(self) -> None:
        """Start the progress line and, unless nobody is at the screen, the line reader."""
        self._thinking_since = time.monotonic()
        if getattr(self.out, "isatty", lambda: False)():  # a pipe gets no progress line
            threading.Thread(target=self._progress, name="forge-clarify-progress",
                             daemon=True).start()
        if not self.nobody:
            threading.Thread(target=self._read, name="forge-clarify-input", daemon=True).start()

    def stop(self) -> None:
        self._stop.set()
        with self._lock:
            self._clear_progress()

    # -- channel callbacks (called on the session's thread) --------------------------------

    def show_question(self, question: Question) -> None:
        with self._lock:
            self._thinking_since = None
            self._clear_progress()
            lines = [f"Question {question.number}: {question.text}"]
            lines += [f"  {n}. {option}" for n, option in enumerate(question.options, 1)]
            if self.show_quota:
                left = question.remaining
                lines.append(f"  ({left} question{'' if left == 1 else 's'} left)")
            self._write("\n".join(lines) + "\n" + ("" if self.nobody else PROMPT))

    def show_settled(self, question: Question, outcome: str, answer: str | None) -> None:
        with self._lock:
            if outcome == ANSWERED:
                self._write(f"  -> {answer}\n")
            else:
                if outcome == OVER_QUOTA:
                    self._clear_progress()
                    self._write(f"Question {question.number}: {question.text}\n")
                self._write(f"\n  ({SETTLED[outcome]})\n" if outcome == TIMED_OUT
                            and not self.nobody else f"  ({SETTLED[outcome]})\n")
            self._thinking_since = time.monotonic()

    # -- threads ---------------------------------------------------------------------------

    def _read(self) -> None:
        for line in self.lines_in:
            text = line.strip()
            question = self.channel.pending
            if question is None:
                if text:
                    self.channel.send(text)
                    with self._lock:
                        self._clear_progress()
                        self._write("  (noted: the model reads it in its inbox)\n")
                continue
            if text.isdigit() and 1 <= int(text) <= len(question.options):
                self.channel.answer(question.options[int(text) - 1])
            elif text:
                self.channel.answer(text)
            else:
                self.channel.decline()

    def _progress(self) -> None:
        while not self._stop.wait(TICK_S):
            with self._lock:
                if self._thinking_since is None:
                    continue
                seconds = int(time.monotonic() - self._thinking_since)
                self._write(f"\r... the model is thinking ({seconds} s)")
                self._progress_shown = True

    def _clear_progress(self) -> None:
        if self._progress_shown:
            self._write("\r\033[K")
            self._progress_shown = False

    def _write(self, text: str) -> None:
        self.out.write(text)
        self.out.flush()
