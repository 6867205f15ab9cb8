"""Next steps named once, said on every surface: the same hint as a CLI command or an MCP tool.

Core operations do not write `forge activate PRD-001` or `activate {"id": "PRD-001"}`
themselves: they return a `Call` (operation name and arguments), and each surface renders
it in its own words through `forge_runtime.operations`. So a CLI hint always names a CLI
command that parses and an MCP hint always names a tool the server lists, and both say the
same thing. A step that is not a forge operation (`/goal ...`, a wait condition) is a plain
string, shown alike everywhere.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

from forge_runtime import hints
from forge_runtime.errors import EXIT_OK, EXIT_USAGE


@dataclass(frozen=True)
class Call:
    """One operation of the table with its arguments, e.g. `Call("activate", {"id": ...})`."""

    op: str
    args: dict = field(default_factory=dict)

    def __hash__(self) -> int:
        return hash((self.op, tuple(sorted(self.args.items(), key=lambda item: item[0]))))


Step = Call | str


def call(op: str, **args) -> Call:
    """`call("activate", id="PRD-001")`; arguments left as None are dropped."""
    return Call(op, {name: value for name, value in args.items() if value is not None})


@dataclass(frozen=True)
class Say:
    """A surface-neutral hint: the marker and the step, rendered by `to_hint`."""

    marker: str
    step: Step | None = None
    rationale: str | None = None
    error: str | None = None
    alternatives: tuple[Step, ...] = ()

    def to_hint(self, render: Callable[[Call], str]) -> hints.Hint:
        def word(step: Step) -> str:
            return render(step) if isinstance(step, Call) else step

        alternatives = [word(step) for step in self.alternatives]
        if self.marker == hints.FIX:
            return hints.error(self.error or "", word(self.step), self.rationale,
                               or_=alternatives)
        if self.marker == hints.DONE:
            return hints.done(self.rationale)
        if self.marker == hints.WAIT:
            return hints.wait(word(self.step), self.rationale, or_=alternatives)
        return hints.next_(word(self.step), self.rationale, or_=alternatives)

    def steps(self) -> list[Step]:
        return ([self.step] if self.step is not None else []) + list(self.alternatives)


def next_(step: Step, rationale: str | None = None, *, or_: list[Step] | None = None) -> Say:
    return Say(hints.NEXT, step, rationale, None, tuple(or_ or ()))


def wait(condition: str, rationale: str | None = None, *,
         or_: list[Step] | None = None) -> Say:
    return Say(hints.WAIT, condition, rationale, None, tuple(or_ or ()))


def done(rationale: str | None = None) -> Say:
    return Say(hints.DONE, None, rationale)


@dataclass
class Reply:
    """What a core operation returns: its data (the JSON), text lines, and the hint."""

    say: Say
    lines: list[str] = field(default_factory=list)
    data: dict | list | None = None
    exit_code: int = EXIT_OK


class OpError(Exception):
    """A refusal from a core operation: what went wrong and the step that fixes it.

    The surface-neutral twin of `ForgeError`: its `fix` and `or_` are steps, so the CLI
    answers with a command and MCP with a tool. `code` (FORGE_...) and `data` go into the
    error's JSON; the text says `Error: <message>` alone, as people read it.
    """

    def __init__(self, message: str, fix: Step, *, or_: list[Step] | None = None,
                 code: str | None = None, rationale: str | None = None,
                 exit_code: int = EXIT_USAGE, data: dict | None = None) -> None:
        super().__init__(message)
        self.message = message
        self.code = code
        self.exit_code = exit_code
        self.data = data or {}
        self.say = Say(hints.FIX, fix, rationale, message, tuple(or_ or ()))

    def reply(self) -> Reply:
        data = {"error": self.message, "code": self.code, **self.data}
        return Reply(self.say, [], data, self.exit_code)
