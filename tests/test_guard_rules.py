"""The project rule file `.forge/guard.yaml`: extends, never widens, errors name the line."""

from __future__ import annotations

import json
import re

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.guard import rules
from forge_runtime.guard.roles import NOTHING
from forge_runtime.protected import guard_file


@pytest.fixture
def files(tmp_path):
    return tmp_path / "guard.yaml", tmp_path / "cache"


def load(files, text: str | None):
    rule_file, cache = files
    if text is not None:
        rule_file.write_text(text)
    return rules.load(str(rule_file), str(cache))


def test_no_file_means_the_defaults(files):
    loaded = load(files, None)
    assert loaded is rules.DEFAULT_RULES
    assert loaded.role_for_agent("forge:clarifier").name == "clarifier"
    assert loaded.role_for_agent("general-purpose") is None
    assert loaded.role_for_agent("forge:nonexistent") is NOTHING


def test_a_project_adds_roles_agents_and_protected_paths(files):
    loaded = load(files, """
roles:
  security-reviewer:
    tools: [Read, Grep]
    agents: [security-reviewer, acme:sec]
protected: [secrets/]
""")
    assert loaded.roles["security-reviewer"].tools == ("Read", "Grep")
    assert loaded.role_for_agent("acme:sec").name == "security-reviewer"
    assert loaded.role_for_agent("security-reviewer").name == "security-reviewer"
    assert loaded.protected == ("secrets/",)


def test_a_project_cannot_widen_a_default_role(files):
    loaded = load(files, "roles:\n  clarifier:\n    tools: [Read, Write, Bash]\n")
    assert loaded.roles["clarifier"].tools == ("Read",)


@pytest.mark.parametrize("text, line, words", [
    ("roles:\n  a:\n    tools: [Read\n", 4, "not valid YAML"),
    ("roles:\n  ok:\n    tools: [Read]\n  Bad Name:\n    tools: [Read]\n", 4, "roles"),
    ("roles:\n  r:\n    tools: Read\n", 3, "roles/r/tools"),
    ("roles:\n  r:\n    tool: [Read]\n", 2, "roles/r"),
    ("protected:\n  - ok\n  - 7\n", 3, "protected/1"),
    ("unknown: true\n", 1, "top level"),
    ("goal:\n  tranche:\n    tokens: 0\n", 3, "goal/tranche/tokens"),
    ("goal:\n  tranche:\n    minutes: soon\n", 3, "goal/tranche/minutes"),
    ("goal:\n  tranche:\n    turns: 40\n", 2, "goal/tranche"),
    ("- a list\n", 1, "top level"),
])
def test_a_broken_file_is_an_error_naming_its_line(files, text, line, words):
    with pytest.raises(ForgeError) as raised:
        load(files, text)
    error = raised.value
    assert error.code == guard_file.INVALID and error.exit_code == EXIT_REFUSED
    assert f"guard.yaml:{line} " in error.message, error.message
    assert words in error.message
    assert error.fix == "forge guard roles"


def test_goal_ceilings_per_tranche_are_read_beside_require_sandbox(files):
    loaded = load(files, "goal:\n  require_sandbox: true\n  tranche: {tokens: 3000000, "
                         "minutes: 240}\n")
    assert loaded.goal == {"require_sandbox": True,
                           "tranche": {"tokens": 3000000, "minutes": 240}}


def test_a_file_that_is_not_utf8_is_an_error(files):
    files[0].write_bytes(b"roles: \xff\n")
    with pytest.raises(ForgeError, match="not UTF-8"):
        rules.load(str(files[0]), str(files[1]))


def test_the_validated_form_is_cached_by_content(files, monkeypatch):
    text = "roles:\n  auditor:\n    tools: [Read]\n"
    load(files, text)
    cache = json.loads((files[1] / guard_file.CACHE_NAME).read_text())
    assert cache["rules"] == {"roles": {"auditor": {"tools": ["Read"]}}}

    def no_validation(*args):
        raise AssertionError("validated again although the file did not change")

    monkeypatch.setattr(guard_file, "validate", no_validation)
    assert load(files, None).roles["auditor"].tools == ("Read",)
    monkeypatch.undo()
    changed = load(files, "roles:\n  auditor:\n    tools: [Grep]\n")
    assert changed.roles["auditor"].tools == ("Grep",)


@pytest.mark.parametrize("text", [
    "goal: {tranche: {usd: 5}}\n", "goal: {tranche: {usd: 0.25, tokens: 3000000}}\n",
    "goal: {plan: {five_hour: 80, seven_day: 40, seven_day_spend: 10}}\n",
    "goal: {after_usage_limit: continue}\n", "goal: {remote: origin, require_sandbox: false}\n",
])
def test_every_goal_setting_is_read_from_the_cache_once_validated(files, monkeypatch, text):
    """A rule file with `usd` (or `plan`, `after_usage_limit`) is read from its cache: a
    cache check that knew no `number` nor `enum` would make every guarded call of such a
    project import yaml and jsonschema and validate the file again (about 100 ms)."""
    first = load(files, text)

    def no_validation(*args):
        raise AssertionError("validated again although the file did not change")

    monkeypatch.setattr(guard_file, "validate", no_validation)
    assert load(files, None) == first


def test_an_unwritable_cache_only_costs_time(files, tmp_path):
    blocker = tmp_path / "blocker"
    blocker.write_text("a file where the cache dir should be")
    files[0].write_text("roles:\n  auditor:\n    tools: [Read]\n")
    loaded = rules.load(str(files[0]), str(blocker / "cache"))
    assert loaded.roles["auditor"].tools == ("Read",)


def test_a_forge_agent_mapped_to_a_wider_role_keeps_only_its_own_tools(files):
    loaded = load(files, "roles:\n  wide:\n    tools: [Read, Write, Bash]\n"
                         "    agents: ['forge:clarifier', 'forge:planner', 'acme:helper']\n")
    assert set(loaded.role_for_agent("forge:clarifier").tools) == {"Read"}
    assert loaded.role_for_agent("forge:planner").tools == ()  # no default role: nothing
    assert loaded.role_for_agent("acme:helper").tools == ("Read", "Write", "Bash")


@pytest.mark.parametrize("forged", [
    {"roles": {"clarifier": {"tools": "Bash"}}},
    {"roles": {"Bad Name": {"tools": ["Bash"]}}},
    {"roles": {"x": {"tools": ["Bash"], "agents": ["forge:x"], "grants": "all"}}},
    {"protected": [7]},
    {"protected": "not a list"},
    ["a", "list"],
    {"roles": {"x": {"agents": ["forge:clarifier"]}}},
])
def test_a_cache_written_by_hand_is_validated_like_the_file(files, forged):
    """The cache stands for the rule file: one that no valid file could give is ignored,
    and the file itself is read again."""
    import hashlib

    text = "roles:\n  auditor:\n    tools: [Read]\n"
    load(files, text)
    digest = hashlib.sha256(text.encode()).hexdigest()
    (files[1] / guard_file.CACHE_NAME).write_text(json.dumps({"sha256": digest, "rules": forged}))
    loaded = load(files, None)
    assert loaded.roles["auditor"].tools == ("Read",)
    assert set(loaded.roles) == set(rules.DEFAULT_ROLES) | {"auditor"}


def test_the_stdlib_check_agrees_with_jsonschema():
    import jsonschema

    samples = [{}, {"roles": {}}, {"roles": {"a": {"tools": []}}}, {"roles": {"a": {}}},
               {"roles": {"a": {"tools": [""]}}}, {"protected": ["x"]}, {"protected": [""]},
               {"roles": {"a-b": {"tools": ["R"], "agents": ["x"], "description": "d"}}},
               {"roles": {"a": {"tools": ["R"], "description": 3}}}, {"x": 1}, [],
               {"goal": {"require_sandbox": True, "tranche": {"tokens": 3, "minutes": 1}}},
               {"goal": {"require_sandbox": 1}}, {"goal": {"tranche": {"tokens": 0}}},
               {"goal": {"tranche": {"tokens": True}}}, {"goal": {"tranche": {"days": 1}}},
               {"goal": {"tranche": {"minutes": "1"}}},
               {"goal": {"tranche": {"usd": 5}}}, {"goal": {"tranche": {"usd": 0.25}}},
               {"goal": {"tranche": {"usd": 0}}}, {"goal": {"tranche": {"usd": -1}}},
               {"goal": {"tranche": {"usd": 1000000}}}, {"goal": {"tranche": {"usd": 1e6 + 1}}},
               {"goal": {"tranche": {"usd": True}}}, {"goal": {"tranche": {"usd": "5"}}},
               {"goal": {"plan": {"five_hour": 80, "seven_day": 40.5}}},
               {"goal": {"plan": {"seven_day_spend": 10}}}, {"goal": {"plan": {}}},
               {"goal": {"plan": {"five_hour": 101}}}, {"goal": {"plan": {"weekly": 1}}},
               {"goal": {"after_usage_limit": "continue"}}, {"goal": {"after_usage_limit": "x"}},
               {"goal": {"after_usage_limit": 1}}, {"goal": {"remote": "origin"}},
               {"goal": {"remote": "up/stream.x-1"}}, {"goal": {"remote": "-x"}},
               {"goal": {"remote": "a b"}}, {"goal": {"remote": ""}}]
    validator = jsonschema.Draft202012Validator(guard_file.SCHEMA)
    for sample in samples:
        assert guard_file.conforms(sample, guard_file.SCHEMA) == validator.is_valid(sample), sample


@settings(max_examples=1000, deadline=None)
@given(st.one_of(st.text(max_size=70),
                 st.text(alphabet="az09-_A\n\u00e9", max_size=70),
                 st.sampled_from(["a", "a" * 64, "a" * 65, "0a", "-a", "a-", "ab\n", "ab\n\n",
                                  "\n", "", "a\nb", "\u00e9"])))
def test_role_names_are_checked_as_jsonschema_checks_their_pattern(name):
    """The cache check reads role names without `re`, as the schema's regex reads them."""
    import jsonschema

    validator = jsonschema.Draft202012Validator(guard_file.SCHEMA)
    sample = {"roles": {name: {"tools": ["Read"]}}}
    assert guard_file.conforms(sample, guard_file.SCHEMA) == validator.is_valid(sample)
    assert guard_file._matches(guard_file.ROLE_NAME, name) == \
        (re.search(guard_file.ROLE_NAME, name) is not None)
