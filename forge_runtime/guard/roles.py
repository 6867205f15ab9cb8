"""Roles: who may use which tools, and how a hook event names its role.

A role is an allow-list of tool names; everything else is denied while the role is in force
(the host's own `allowed_tools` is only a pre-approval list, so the guard is what makes an
allow-list binding). Roles come from two places, and both only ever restrict:

- a subagent's `agent_type` in the hook input (forge's plugin agents arrive as
  `forge:clarifier`; any `forge:` agent is guarded, so an unknown one is denied everything);
- the main session's guarded mode (`forge mode enter clarifier --session ID`), see `modes`.

The defaults below must list exactly the tools in the front matter of `agents/<role>.md`
(a test holds them together).

Reading is never refused by a role: every role allows Read, Grep and Glob (`READ_ONLY`), an
unknown one too. So the guard answers those tools without a role's mode or rules
(decide.py): only the gate receipts' key is refused to them (gate_files.py), and a goal's
budget (goal/events/tool_call.py) holds them like every other call.
"""

from forge_runtime.guard import READ_ONLY
from forge_runtime.records import record

PLUGIN_PREFIX = "forge:"


class Role(record("Role", "name tools description", defaults=("",))):
    """A named allow-list of tools; `*` patterns match tool families such as `mcp__docs__*`.

    A record (forge_runtime/records.py) rather than a dataclass or a named tuple: the
    guard's allow path must not import `dataclasses` (`inspect`) or `collections`.
    """

    __slots__ = ()

    def allows(self, tool_name: str) -> bool:
        return tool_name in READ_ONLY or any(
            tool_name == allowed or ("*" in allowed and _matches(tool_name, allowed))
            for allowed in self.tools
        )

    def narrowed_to(self, tools: tuple[str, ...]) -> "Role":
        """This role with only the tools both lists name: a project file may narrow a default."""
        return Role(self.name, tuple(t for t in self.tools if t in tools), self.description)


# A council's five perspectives (forge_runtime/council/), each its own read-only role
COUNCIL_PERSPECTIVES = ("simplicity", "scale", "pragmatism", "contrarian", "maintainer")

DEFAULT_ROLES: dict[str, Role] = {
    role.name: role
    for role in (
        Role("clarifier", (*READ_ONLY, "WebFetch", "WebSearch", "AskUserQuestion"),
             "turns a request into questions and a brief; reads and asks, never writes"),
        Role("reviewer", READ_ONLY, "reviews a change and reports findings; never edits"),
        Role("advisor", READ_ONLY, "a council advisor: reads and gives an opinion; never edits"),
        *(Role(f"advisor-{perspective}", READ_ONLY,
               f"the council's {perspective} advisor: reads and gives an opinion; never edits")
          for perspective in COUNCIL_PERSPECTIVES),
        Role("council-chair", READ_ONLY,
             "the council's chairman: reads the opinions, gives the verdict; never edits"),
    )
}

# A role name that matches no rule: deny everything but reading (an unknown guarded role
# fails closed; reads are never a role's to refuse).
NOTHING = Role("unknown", (), "a guarded role forge has no rules for: only reading is allowed")


def role_name_of_agent(agent_type: str) -> str | None:
    """The role an agent type asks for: `forge:clarifier` -> `clarifier`; others -> None."""
    if agent_type.startswith(PLUGIN_PREFIX):
        return agent_type[len(PLUGIN_PREFIX):]
    return None


def _matches(tool_name: str, pattern: str) -> bool:
    """fnmatch's case-sensitive match, imported only for a role that names a pattern
    (`fnmatch` imports `re`)."""
    from fnmatch import fnmatchcase

    return fnmatchcase(tool_name, pattern)
