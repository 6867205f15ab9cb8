"""The roles in force for a project: forge's defaults, extended by `.forge/guard.yaml`.

The project file (protected/guard_file.py reads and checks it) can add roles (and the
agent types that take them), narrow a default role, and add protected paths. It cannot
widen a default role: where it names one, the role keeps only the tools both lists name,
and a forge agent (`forge:clarifier`) mapped to another role keeps only the tools of its
own default role too.
"""

from forge_runtime.guard.roles import DEFAULT_ROLES, NOTHING, Role, role_name_of_agent
from forge_runtime.protected import guard_file, paths
from forge_runtime.records import record


class Rules(record("Rules", "roles agents protected goal", defaults=((), {}))):
    """Roles by name, which agent types take which role (`agents`), extra protected paths,
    and the project's goal settings (`goal.require_sandbox: false`, in so many words: a
    person's /goal may run without the host's kernel sandbox, which it otherwise needs;
    sandbox/posture.py; `goal.tranche`: token, minute and dollar ceilings per tranche;
    `goal.plan`: shares of the plan's windows; `goal.after_usage_limit`).

    A record, not a dataclass, to keep `inspect` out of the hook (see `roles.Role`).
    """

    __slots__ = ()

    def role_for_agent(self, agent_type: str) -> Role | None:
        """The role of a subagent; None when the agent type is not guarded at all.

        A forge agent keeps at most the tools of its default role, whatever role the
        project maps it to (an unknown forge agent has none).
        """
        own = role_name_of_agent(agent_type)
        name = self.agents.get(agent_type) or own
        if name is None:
            return None
        role = self.roles.get(name, NOTHING)
        ceiling = DEFAULT_ROLES.get(own, NOTHING).tools if own is not None else None
        if ceiling is not None and not set(role.tools) <= set(ceiling):
            role = role.narrowed_to(ceiling)
        return role


DEFAULT_RULES = Rules(dict(DEFAULT_ROLES), {})


def for_project(project) -> Rules:
    """The rules in force in a `forge_runtime.project.Project` (or `locate()`'s strings):
    its rule file, cached in its guard directory."""
    return load(paths.rule_file(project), paths.guard_dir(project))


def load(rule_file: str, cache_dir: str) -> Rules:
    """The project's rules; raises ForgeError (exit 2) naming the line of a broken file."""
    document = guard_file.read(rule_file, cache_dir)
    return DEFAULT_RULES if document is None else _merge(document)


def _merge(document: dict) -> Rules:
    roles = dict(DEFAULT_ROLES)
    agents: dict[str, str] = {}
    for name, spec in (document.get("roles") or {}).items():
        tools = tuple(spec["tools"])
        if name in roles:
            roles[name] = roles[name].narrowed_to(tools)
        else:
            roles[name] = Role(name, tools, spec.get("description", ""))
        for agent_type in spec.get("agents", ()):
            agents[agent_type] = name
    return Rules(roles, agents, tuple(document.get("protected") or ()),
                 dict(document.get("goal") or {}))

