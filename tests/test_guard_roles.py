"""Roles: an allow-list becomes the set of tools denied, and agents match their roles."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from forge_runtime.guard.decide import WRITING_TOOLS
from forge_runtime.guard.roles import DEFAULT_ROLES, NOTHING, Role, role_name_of_agent

AGENTS_DIR = Path(__file__).resolve().parents[1] / "agents"


@pytest.mark.parametrize("name", sorted(DEFAULT_ROLES))
def test_every_default_role_denies_every_writing_tool(name):
    role = DEFAULT_ROLES[name]
    for tool in WRITING_TOOLS:
        assert not role.allows(tool), f"{name} may use {tool}"
    assert not role.allows("mcp__files__write_file")
    assert not role.allows("Agent") and not role.allows("Task")
    assert role.allows("Read") and role.allows("Grep") and role.allows("Glob")


def test_the_denied_set_is_everything_outside_the_allow_list():
    role = Role("r", ("Read", "Bash", "mcp__docs__*"))
    assert role.allows("Bash") and role.allows("Read")
    assert role.allows("mcp__docs__search") and role.allows("mcp__docs__fetch")
    assert not role.allows("mcp__files__write")
    assert not role.allows("mcp__docs")
    assert {t for t in (*WRITING_TOOLS, "WebFetch") if not role.allows(t)} == (
        set(WRITING_TOOLS) - {"Bash"}) | {"WebFetch"}


def test_matching_is_exact_not_by_prefix_or_case():
    role = Role("r", ("Read",))
    assert not role.allows("read") and not role.allows("ReadWrite") and not role.allows("")


def test_a_role_can_only_be_narrowed():
    clarifier = DEFAULT_ROLES["clarifier"]
    narrowed = clarifier.narrowed_to(("Read", "Write", "Bash"))
    assert narrowed.tools == ("Read",)


def test_nothing_allows_only_reading():
    """Reads are never a role's to refuse (the plugin's hook does not even see them)."""
    assert not any(NOTHING.allows(t) for t in ("Bash", "Write", "Edit", "mcp__a__b", "LS"))
    assert all(NOTHING.allows(t) for t in ("Read", "Grep", "Glob"))


@pytest.mark.parametrize("agent_type, role", [
    ("forge:clarifier", "clarifier"), ("forge:made-up", "made-up"), ("clarifier", None),
    ("general-purpose", None), ("other:clarifier", None),
])
def test_plugin_agents_name_their_role(agent_type, role):
    assert role_name_of_agent(agent_type) == role


@pytest.mark.parametrize("name", sorted(DEFAULT_ROLES))
def test_agent_front_matter_lists_exactly_the_roles_tools(name):
    text = (AGENTS_DIR / f"{name}.md").read_text(encoding="utf-8")
    front = yaml.safe_load(text.split("---")[1])
    assert front["name"] == name
    listed = tuple(tool.strip() for tool in front["tools"].split(","))
    assert listed == DEFAULT_ROLES[name].tools
