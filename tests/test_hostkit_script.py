"""Script rules: validation with precise errors, content-based matching, counters, placeholders."""

from __future__ import annotations

import json

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_runtime.hostkit.script import (
    EVALUATOR_SYSTEM_MARK,
    Request,
    Script,
    ScriptError,
    expand,
)


def user(text):
    return {"role": "user", "content": text}


def tool_result(content, is_error=False):
    return {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
                                         "content": content, "is_error": is_error}]}


def request(*messages, system="You are Claude Code.", tools=("Bash", "Write")):
    return Request({"model": "m", "system": [{"type": "text", "text": system}],
                    "tools": [{"name": t} for t in tools], "messages": list(messages),
                    "thinking": {"type": "adaptive"}, "context_management": {}})


def rule_for(script, req):
    rule, reply = script.answer(req)
    return (rule.name if rule else None), reply


def test_the_first_matching_rule_answers():
    script = Script({"rules": [
        {"name": "after tool", "when": {"last_is_tool_result": True}, "reply": {"text": "b"}},
        {"name": "first", "reply": {"text": "a"}},
    ]})
    assert rule_for(script, request(user("go"))) == ("first", {"text": "a"})
    assert rule_for(script, request(user("go"), tool_result("ok")))[0] == "after tool"


def test_system_messages_after_the_last_turn_do_not_hide_a_tool_result():
    script = Script({"rules": [{"name": "t", "when": {"last_is_tool_result": True},
                                "reply": {"text": "x"}}]})
    trailing_system = {"role": "system", "content": [{"type": "text", "text": "Today is..."}]}
    assert rule_for(script, request(user("go"), tool_result("ok"), trailing_system))[0] == "t"


@pytest.mark.parametrize("content", ["DENIED here", [{"type": "text", "text": "DENIED here"}]])
def test_tool_result_content_may_be_a_string_or_a_list_of_blocks(content):
    script = Script({"rules": [{"name": "denied", "when": {
        "last_tool_result_contains": "DENIED", "last_tool_result_is_error": True},
        "reply": {"text": "x"}}]})
    assert rule_for(script, request(user("go"), tool_result(content, is_error=True)))[0] == \
        "denied"
    assert rule_for(script, request(user("go"), tool_result(content)))[0] is None


def test_times_limits_a_rule_then_later_rules_answer():
    script = Script({"rules": [{"name": "once", "times": 1, "reply": {"error": {"status": 529}}},
                               {"name": "always", "reply": {"text": "ok"}}]})
    assert [rule_for(script, request(user("go")))[0] for _ in range(3)] == \
        ["once", "always", "always"]


def test_reset_lets_a_used_up_rule_answer_again():
    script = Script({"rules": [{"name": "once", "times": 1, "reply": {"text": "first"}},
                               {"name": "always", "reply": {"text": "ok"}}]})
    assert rule_for(script, request(user("go")))[0] == "once"
    assert rule_for(script, request(user("go")))[0] == "always"
    script.reset()
    assert rule_for(script, request(user("go")))[0] == "once"


def test_only_rules_that_ask_for_it_answer_the_goal_evaluator():
    script = Script({"rules": [
        {"name": "plain", "reply": {"text": "not a verdict"}},
        {"name": "judge", "when": {"goal_evaluator": True},
         "reply": {"verdict": {"ok": False, "reason": "no"}}},
    ]})
    by_system = request(user("transcript"), system=EVALUATOR_SYSTEM_MARK + ". Answer JSON.",
                        tools=())
    by_question = request(user("Based on the conversation transcript above, has the following "
                               "stopping condition been satisfied? Condition: x"), tools=())
    assert rule_for(script, by_system)[0] == "judge"
    assert rule_for(script, by_question)[0] == "judge"
    assert rule_for(script, request(user("hello")))[0] == "plain"


def test_conversation_and_tool_conditions():
    script = Script({"rules": [
        {"name": "lacks", "when": {"conversation_lacks": "MARK"}, "reply": {"text": "1"}},
        {"name": "both", "when": {"conversation_contains": ["MARK", "go"],
                                  "tools_present": "Bash", "tools_absent": ["Agent"]},
         "reply": {"text": "2"}},
        {"name": "system", "when": {"system_contains": "special"}, "reply": {"text": "3"}},
    ]})
    assert rule_for(script, request(user("go")))[0] == "lacks"
    assert rule_for(script, request(user("go"), user("MARK")))[0] == "both"
    assert rule_for(script, request(user("go"), user("MARK"), tools=("Agent",)))[0] is None
    assert rule_for(script, request(user("MARK"), system="a special prompt",
                                    tools=("Agent",)))[0] == "system"


def test_no_matching_rule_answers_with_the_fallback():
    script = Script({"rules": [{"when": {"last_is_tool_result": True}, "reply": {"text": "x"}}],
                     "fallback": {"text": "nothing to say"}})
    assert rule_for(script, request(user("go"))) == (None, {"text": "nothing to say"})


def test_placeholders_fill_known_names_and_leave_other_braces():
    reply = {"tool_calls": [{"name": "Write", "input": {
        "file_path": "{cwd}/done.txt", "content": '{"a": 1} {unknown}'}}]}
    assert expand(reply, {"cwd": "/p"})["tool_calls"][0]["input"] == {
        "file_path": "/p/done.txt", "content": '{"a": 1} {unknown}'}


@given(st.recursive(st.text() | st.integers() | st.booleans(),
                    lambda inner: st.lists(inner) | st.dictionaries(st.text(), inner)))
def test_expanding_without_variables_changes_nothing(value):
    assert expand(value, {}) == value


@pytest.mark.parametrize(("data", "expected"), [
    ({}, "script: 'rules' is a required property"),
    ({"rules": []}, "script.rules: [] should be non-empty"),
    ({"rules": [{"reply": {"text": "x"}, "when": {"nope": 1}}]},
     "script.rules[0].when: Additional properties are not allowed ('nope' was unexpected)"),
    ({"rules": [{"reply": {"error": {"status": 418}}}]},
     "script.rules[0].reply.error.status: 418 is not one of"),
    ({"rules": [{"reply": {"text": "x", "error": {"status": 529}}}]},
     "script.rules[0].reply: a reply is exactly one of"),
    ({"rules": [{"reply": {}}]}, "script.rules[0].reply: {} should be non-empty"),
    ({"rules": [{"reply": {"text": "x"}}], "fallback": {"hang": True, "text": "x"}},
     "script.fallback: a reply is exactly one of"),
])
def test_bad_scripts_are_refused_with_the_place_and_the_problem(data, expected):
    with pytest.raises(ScriptError) as caught:
        Script(data, source="s.yaml")
    assert str(caught.value).startswith("s.yaml: ")
    assert expected in str(caught.value)


def test_scripts_load_from_yaml_and_json_files(tmp_path):
    (tmp_path / "s.yaml").write_text("rules:\n  - reply: {text: hi}\n")
    (tmp_path / "s.json").write_text(json.dumps({"rules": [{"reply": {"text": "hi"}}]}))
    for name in ("s.yaml", "s.json"):
        assert Script.load(tmp_path / name).rules[0].reply == {"text": "hi"}


def test_unreadable_or_malformed_files_say_so(tmp_path):
    with pytest.raises(ScriptError, match="cannot read the script"):
        Script.load(tmp_path / "missing.yaml")
    with pytest.raises(ScriptError, match="not valid YAML or JSON"):
        Script.parse("rules: [", source="bad.yaml")
