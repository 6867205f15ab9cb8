"""The hint contract: markers, rendering, JSON, sanitisation, placeholder detection."""

from __future__ import annotations

import io
import json
import unicodedata

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_runtime import hints
from forge_runtime.cli.render import emit, hint_text
from forge_runtime.errors import ForgeError
from forge_runtime.result import Result


def test_next_renders_command_rationale_and_fallbacks_in_contract_order():
    hint = hints.next_("forge doctor", "check the install", or_=["forge init"])
    assert hint.lines() == ["Next: forge doctor", "  check the install", "Or: forge init"]
    assert hint.next_action == "forge doctor"


def test_wait_has_a_condition_and_no_next_action():
    hint = hints.wait("the ledger lock is free")
    assert hint.render() == "Wait: the ledger lock is free"
    assert hint.next_action is None
    assert hint.as_json()["_hint"] == {"marker": "Wait", "condition": "the ledger lock is free",
                                       "rationale": None}


def test_done_is_terminal_and_carries_no_command():
    hint = hints.done("nothing left")
    assert hint.lines() == ["Done.", "  nothing left"]
    assert hint.as_json() == {"_next_action": None,
                              "_hint": {"marker": "Done", "rationale": "nothing left"}}


def test_error_is_followed_by_its_fix_and_the_fix_is_the_next_action():
    hint = hints.error("the state file is missing", "forge init")
    assert hint.lines() == ["Error: the state file is missing", "Fix: forge init"]
    assert hint.as_json() == {"_next_action": "forge init",
                              "_hint": {"marker": "Fix", "command": "forge init",
                                        "error": "the state file is missing",
                                        "rationale": None}}


def test_forge_error_renders_code_fix_and_fallbacks():
    exc = ForgeError("record 3 does not match", "forge doctor", exit_code=2,
                     code="FORGE_GOAL_LEDGER_TAMPERED", or_=["forge init"])
    assert exc.hint().lines() == [
        "Error: FORGE_GOAL_LEDGER_TAMPERED: record 3 does not match",
        "Fix: forge doctor", "Or: forge init"]


@pytest.mark.parametrize("bad", [
    dict(marker="Or", text="forge init"),        # Or is only ever a fallback line
    dict(marker="Done", text="forge init"),      # Done carries no command
    dict(marker="Next", text=None),              # Next needs one
    dict(marker="Fix", text="forge init"),       # Fix needs its error
    dict(marker="Next", text="forge init", error="boom"),
])
def test_a_hint_that_breaks_the_contract_cannot_be_built(bad):
    with pytest.raises(ValueError):
        hints.Hint(**bad)


def test_text_and_json_carry_the_same_content():
    result = Result(hints.next_("forge doctor", "why", or_=["forge init"]),
                    lines=["body"], data={"n": 1})
    out, err = io.StringIO(), io.StringIO()
    emit(result, as_json=False, out=out, err=err)
    assert out.getvalue() == "body\nNext: forge doctor\n  why\nOr: forge init\n"
    out = io.StringIO()
    emit(result, as_json=True, out=out, err=err)
    payload = json.loads(out.getvalue())
    assert payload["n"] == 1
    assert payload["_next_action"] == "forge doctor"
    assert payload["_hint"] == {"marker": "Next", "command": "forge doctor",
                                "rationale": "why", "or": ["forge init"]}


def test_a_json_list_stays_a_bare_array_and_its_hint_goes_to_stderr():
    out, err = io.StringIO(), io.StringIO()
    emit(Result(hints.done(), data=[1, 2]), as_json=True, out=out, err=err)
    assert json.loads(out.getvalue()) == [1, 2]
    assert err.getvalue() == "Done.\n"


def test_an_error_with_no_body_goes_to_stderr():
    out, err = io.StringIO(), io.StringIO()
    code = emit(Result(hints.error("bad", "forge doctor"), exit_code=1), False, out, err)
    assert (code, out.getvalue(), err.getvalue()) == (1, "", "Error: bad\nFix: forge doctor\n")


def test_colour_only_paints_the_marker():
    painted = hint_text(hints.next_("forge doctor"), colour=True)
    assert painted == "\033[32mNext:\033[0m forge doctor"


@pytest.mark.parametrize("raw, clean", [
    ("forge init\n--force", "forge init --force"),                 # newline
    ("forge\u200b init", "forge init"),                            # zero-width space
    ("forge init \u202egnp.exe", "forge init gnp.exe"),            # right-to-left override
    ("a\x1b[31mb", "a[31mb"),                                       # escape sequence
    ("  spaced\t\tout  ", "spaced out"),
    ("naïve — ok", "naïve — ok"),                                   # ordinary Unicode stays
])
def test_sanitize_removes_control_zero_width_and_bidi_characters(raw, clean):
    assert hints.sanitize(raw) == clean


def test_user_data_cannot_smuggle_a_second_line_into_a_hint():
    hint = hints.next_("forge goal status", "objective: ship it\nNext: rm -rf /")
    assert hint.render().count("\n") == 1
    assert [marker for marker, _ in hints.parse_lines(hint.render())] == ["Next"]


@given(st.text())
def test_sanitize_never_returns_control_or_format_characters(text):
    cleaned = hints.sanitize(text)
    assert all(unicodedata.category(ch) not in {"Cc", "Cf"} for ch in cleaned)
    assert "\n" not in cleaned and cleaned == cleaned.strip()


def test_sanitize_keeps_and_drops_each_ascii_character_by_its_unicode_category():
    """ASCII is judged without the Unicode table, as the table would judge it."""
    for code in range(128):
        char = chr(code)
        expected = " " if char in "\t\n\r\v\f" else (
            "" if unicodedata.category(char) in {"Cc", "Cf", "Zl", "Zp", "Co", "Cs", "Cn"}
            else char)
        assert hints.sanitize(f"a{char}b") == " ".join(f"a{expected}b".split())


@pytest.mark.parametrize("command", [
    "forge goal status <id>", "forge ledger verify {nonce}", "forge goal history ...",
    "forge fix TODO", "forge x XXX",
])
def test_placeholders_are_detected(command):
    assert hints.has_placeholder(command)


@pytest.mark.parametrize("command", [
    "forge goal status", "forge ledger verify 3f9a2c1e", "/goal make the test suite pass",
    "git -C /tmp/x checkout -- hooks/hooks.json", "python3 -m pip install 'pyyaml>=6.0'",
])
def test_real_commands_are_not_placeholders(command):
    assert not hints.has_placeholder(command)


def test_parse_lines_finds_each_marker_in_order():
    text = "body\nError: boom\nFix: forge init\nOr: forge doctor\nDone.\nNext: x"
    assert hints.parse_lines(text) == [("Error", "boom"), ("Fix", "forge init"),
                                       ("Or", "forge doctor"), ("Done", ""), ("Next", "x")]


def test_commands_of_lists_the_runnable_command_and_its_fallbacks():
    assert hints.commands_of(hints.error("e", "forge init", or_=["forge doctor"])) == [
        "forge init", "forge doctor"]
    assert hints.commands_of(hints.wait("a lock", or_=["forge doctor"])) == ["forge doctor"]
    assert hints.commands_of(hints.done()) == []


@pytest.mark.parametrize("hint", [
    hints.next_("forge goal status", "see the budget", or_=["/goal clear"]),
    hints.wait("a person runs /goal", or_=["forge mode exit --session abc-1"]),
    hints.done("nothing left"),
    hints.done(),
    hints.error("FORGE_GOAL_LEDGER_TAMPERED: record 3", "forge goal verify", "fails closed",
                or_=["forge doctor"]),
])
def test_a_rendered_hint_splits_back_into_its_body_and_the_same_hint(hint):
    assert hints.split_rendered("FORGE_X: a head line\n" + hint.render()) == (
        ["FORGE_X: a head line"], hint)


@pytest.mark.parametrize("text", ["just words", "Error: boom", "Next: a\nbody after"])
def test_split_rendered_refuses_text_that_does_not_end_with_a_hint(text):
    with pytest.raises(ValueError):
        hints.split_rendered(text)
