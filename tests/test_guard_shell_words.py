"""One shell word's values: braces, sequences, `~`, parameters, all bounded before they expand."""

from __future__ import annotations

import pytest

from forge_runtime.guard.shell.words import (
    SELF,
    VARIANTS_LIMIT,
    braces,
    fields,
    literal,
    value,
    values,
)


@pytest.mark.parametrize("word, expected", [
    ("{a,b}", ["a", "b"]),
    ("x{a,{b,c}}y", ["xay", "xby", "xcy"]),
    (".gi{s..u}", [".gis", ".git", ".giu"]),
    ("{1..9..4}", ["1", "5", "9"]),
    ("{3..1}", ["3", "2", "1"]),
    ("{01..03}", ["01", "02", "03"]),
    (".g{i,}t", [".git", ".gt"]),
    ("{mode,}", ["mode"]),
    ("{}", ["{}"]),
    ("{a}", ["{a}"]),
    ("${HOME}", ["${HOME}"]),
    ("{a..c..}", ["{a..c..}"]),
])
def test_braces_expand_as_bash_does(word, expected):
    assert braces(word) == expected


@pytest.mark.parametrize("word", [
    "{a,b}" * 9,                 # 512 words
    "{1..100000000}",            # a sequence counted, never listed
    "{a..z}{a..z}",              # 676
    "{" * 5000 + "," * 5000,     # nested deeper than followed
])
def test_a_word_wider_than_the_limit_is_unknown_not_expanded(word):
    assert braces(word) is None
    assert values(word, {}) == [None]


@pytest.mark.parametrize("word, env, expected", [
    ("$D/x", {"D": ".git"}, ".git/x"),
    ("${D}x", {"D": "a"}, "ax"),
    ("${D:-.git}", {"D": ""}, ".git"),
    ("${D-.git}", {"D": ""}, ""),
    ("${D-.git}", {"D": None}, ".git"),   # unset by the command
    ("${D:+.git}", {"D": "x"}, ".git"),
    ("${D-${E-.git}}", {"D": None, "E": None}, ".git"),
    ("$D", {}, None),                     # not known: never the hook's own environment
    ("${D:-x}", {}, None),
    ("$1", {}, None), ("$@", {}, None), ("$#", {}, None), ("$_", {}, None),
    ("${D%x}", {"D": "a"}, None), ("${#D}", {"D": "a"}, None), ("${!D}", {"D": "a"}, None),
    ("${A[0]}", {"A": "x"}, None),
    ("$D", {"D": "`?`"}, None),           # a value made by a substitution
    ("~/x", {"HOME": "/h"}, "/h/x"),
    ("~+/x", {"PWD": "/p"}, "/p/x"),
    ("~-/x", {"OLDPWD": "/o"}, "/o/x"),
    ("~-/x", {}, None),
    ("/proc/$$/cwd", {}, f"/proc/{SELF}/cwd"),
    ("/proc/$BASHPID/cwd", {}, f"/proc/{SELF}/cwd"),
    ("${a-" * 100 + "x" + "}" * 100, {}, None),
])
def test_parameters_are_valued_only_from_what_is_known(word, env, expected):
    assert value(word, env) == expected


def test_fields_follow_ifs():
    assert fields("rm -rf .git", None) == ["rm", "-rf", ".git"]
    assert fields("rm/-rf/.git", "/") == ["rm", "-rf", ".git"]
    assert fields("a b", "") == ["a b"]


def test_the_literal_part_of_a_word_drops_every_expansion():
    assert literal("$X/.git/${Y:-z}") == " /.git/ "


def test_the_limit_is_what_the_module_says():
    assert braces("{a,b}" * 8) is not None and len(braces("{a,b}" * 8)) == VARIANTS_LIMIT
