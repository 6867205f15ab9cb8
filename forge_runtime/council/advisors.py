"""Who sits on a council: five advisors with distinct perspectives, and a chairman.

Each is a plugin agent (`agents/advisor-<perspective>.md`, `agents/council-chair.md`) and a
read-only role of the guard of the same name. The runtime's SDK sessions use the agent's
own instructions as their system prompt, so Claude Code's subagents and `forge council` ask
the same advisors the same way.
"""

from __future__ import annotations

from collections import namedtuple

from forge_runtime import resources
from forge_runtime.guard.roles import COUNCIL_PERSPECTIVES, DEFAULT_ROLES

CHAIR = "council-chair"


class Member(namedtuple("Member", "role perspective")):
    """A seat on the council: its guard role (and agent name) and what it speaks for."""

    __slots__ = ()

    @property
    def tools(self) -> tuple[str, ...]:
        return DEFAULT_ROLES[self.role].tools

    @property
    def agent_type(self) -> str:
        """How Claude Code addresses the plugin agent."""
        return f"forge:{self.role}"

    def instructions(self) -> str:
        """The agent file's body: the system prompt of this member's sessions."""
        text = (resources.bundle_root() / "agents" / f"{self.role}.md").read_text("utf-8")
        return text.split("---", 2)[2].strip() if text.startswith("---") else text.strip()


ADVISORS = tuple(Member(f"advisor-{p}", p) for p in COUNCIL_PERSPECTIVES)
CHAIRMAN = Member(CHAIR, "chairman")
