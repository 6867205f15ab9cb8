"""A command's text as pipelines of simple commands: what runs is found wherever it stands."""

from __future__ import annotations

import pytest

from forge_runtime.guard.shell.syntax import (
    LIFTED,
    SUBSHELL_CLOSE,
    SUBSHELL_OPEN,
    lift_substitutions,
    parse,
    strip_reserved,
)


@pytest.mark.parametrize("text, rest, bodies", [
    ('echo "$(rm -rf x)"', f'echo "{LIFTED}"', ["rm -rf x"]),
    ("echo `date` > f", f"echo {LIFTED} > f", ["date"]),
    ("diff <(sort a) >(tee b)", f"diff {LIFTED} {LIFTED}", ["sort a", "tee b"]),
    ("x=$(a $(b) c)", f"x={LIFTED}", ["a $(b) c"]),
    ("echo ')' $(echo ')')", f"echo ')' {LIFTED}", ["echo ')'"]),
    ("grep '$(' file", "grep '$(' file", []),
    ("echo \\$(not run)", "echo \\$(not run)", []),
    ("echo $(unclosed", f"echo {LIFTED}", ["unclosed"]),
])
def test_substitutions_are_lifted_out_except_in_single_quotes(text, rest, bodies):
    assert lift_substitutions(text) == (rest, bodies)


def test_pipelines_redirections_here_strings_and_subshells():
    pipelines = parse("(cd /tmp); ls -l | wc > out 2>&1 && bash <<< 'echo hi'")
    assert pipelines[0] == SUBSHELL_OPEN
    assert [s.words for s in pipelines[1]] == [["cd", "/tmp"]]
    assert pipelines[2] == SUBSHELL_CLOSE
    listing = pipelines[3]
    assert [s.words[0] for s in listing] == ["ls", "wc"]
    assert listing[1].writes == ["out"]  # `2>&1` duplicates a descriptor, writes no file
    assert pipelines[4][0].words == ["bash"] and pipelines[4][0].stdin == ["echo hi"]


def test_newlines_separate_commands_and_bad_quoting_is_unreadable():
    assert [p[0].words for p in parse("ls\nrm x")] == [["ls"], ["rm", "x"]]
    assert parse("echo 'unbalanced") is None


@pytest.mark.parametrize("words, command", [
    (["if", "rm", "x"], ["rm", "x"]),
    (["then", "{", "rm", "x"], ["rm", "x"]),
    (["function", "f", "{", "rm", "x"], ["rm", "x"]),
    (["!", "rm"], ["rm"]),
    (["echo", "if"], ["echo", "if"]),
])
def test_reserved_words_open_compound_commands(words, command):
    assert strip_reserved(words) == command
