"""`Workbench`, `Step` and `Workflow`: run steps in order, each in a session of its own.

A step is a prompt for a new session plus three decisions:
- `when(bench)`: run the step at all? A skipped step may still hand something on
  (`skipped(bench)`), as clarify does with a brief frozen earlier;
- `gate(bench, reply)`: None lets the reply through; otherwise the text of the follow-up
  that the *same* session gets (at most `retries` times), so it is asked only for what is
  missing, with everything it already learnt;
- `reduce(bench, reply)`: what the next steps see in `bench.context[step.name]`, instead
  of the raw reply.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from forge_runtime.clarify.store import brief_path
from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.project import FORGE_DIR, find_project


class Session(Protocol):
    """What a step talks to: `SdkSession`, or a scripted stand-in in tests."""

    session_id: str | None

    def send(self, prompt: str) -> Awaitable[str]: ...


@dataclass
class Workbench:
    """A project's `.forge/` folders, and what steps handed on so far (`context`)."""

    root: Path
    context: dict[str, str] = field(default_factory=dict)

    @property
    def forge_dir(self) -> Path:
        return self.root / FORGE_DIR

    @property
    def notes_dir(self) -> Path:
        return self.forge_dir / "notes"

    @property
    def local_dir(self) -> Path:
        return self.forge_dir / "local"

    @property
    def brief_path(self) -> Path:
        return brief_path(self.forge_dir)

    @classmethod
    def for_project(cls, start: str | Path | None = None) -> Workbench:
        return cls(find_project(start).root)


class StepFailed(ForgeError):
    """A step's gate still refused its reply after every retry."""


def _always(bench: Workbench) -> bool:
    return True


def _nothing(bench: Workbench) -> str | None:
    return None


def _passes(bench: Workbench, reply: str) -> str | None:
    return None


def _as_is(bench: Workbench, reply: str) -> str:
    return reply


@dataclass
class Step:
    """One step: `session(bench)` makes its session, `prompt(bench)` its first prompt."""

    name: str
    prompt: Callable[[Workbench], str]
    session: Callable[[Workbench], Session]
    when: Callable[[Workbench], bool] = _always
    gate: Callable[[Workbench, str], str | None] = _passes
    reduce: Callable[[Workbench, str], str] = _as_is
    skipped: Callable[[Workbench], str | None] = _nothing
    retries: int = 2
    fix: str = "forge doctor"  # the command offered when the gate never passes


@dataclass
class Ran:
    """What happened to a step: skipped, or run with this many follow-ups."""

    name: str
    skipped: bool
    follow_ups: int = 0


@dataclass
class Workflow:
    """Steps in order. `run` fills `bench.context` and says what each step did."""

    steps: list[Step]

    async def run(self, bench: Workbench) -> list[Ran]:
        done: list[Ran] = []
        for step in self.steps:
            if not step.when(bench):
                handed = step.skipped(bench)
                if handed is not None:
                    bench.context[step.name] = handed
                done.append(Ran(step.name, True))
                continue
            session = step.session(bench)
            reply = await session.send(step.prompt(bench))
            follow_ups = 0
            while (follow_up := step.gate(bench, reply)) is not None:
                if follow_ups == step.retries:
                    raise StepFailed(f"step {step.name}: the reply still fails its check after "
                                     f"{step.retries} follow-up(s): {follow_up}", step.fix,
                                     exit_code=EXIT_REFUSED, code="FORGE_STEP_GATE")
                follow_ups += 1
                reply = await session.send(follow_up)
            bench.context[step.name] = step.reduce(bench, reply)
            done.append(Ran(step.name, False, follow_ups))
        return done
