"""The drift check's reader of minified JavaScript: a bracket inside a string, a template or
a regular expression closes nothing; an object's keys include those a spread may add; only
an array of plain strings counts as a list of names."""

from __future__ import annotations

import pytest

from forge_runtime.host_drift import js


@pytest.mark.parametrize("source", [
    b'{a:"}",b:1}',
    b"{a:'{',b:`}${{c:1}}`}",
    b"{a:/[}\\]]+/g,b:/\\}/}",
    b"{a:x/2,b:(y)/3}",
    b'{a:"\\"}",b:[1,{c:2}]}',
    b"{a:function(){return/}/.test(q)}}",
])
def test_the_closing_bracket_is_found_past_literals(source):
    assert js.closing(source, 0) == len(source) - 1


def test_an_unbalanced_bracket_is_unreadable_not_a_guess():
    with pytest.raises(js.Unreadable):
        js.closing(b"{a:(1]}", 0)
    with pytest.raises(js.Unreadable):
        js.closing(b'{a:"never closed}', 0)


def test_keys_include_quoted_shorthand_and_spread_ones():
    source = b'{$schema:n(),"allowed-tools":r(),plain,...!1,...x&&{added:1},...f(a,{no:1})}'
    assert js.keys(source, 0) == ["$schema", "allowed-tools", "plain", "added"]


def test_a_value_is_found_by_its_key():
    source = b'{cost:{total:1,spent:2},model:"m"}'
    start, end = js.value(source, 0, "cost")
    assert js.keys(source, start) == ["total", "spent"] and source[end:end + 1] == b","


def test_the_innermost_enclosing_object_is_found():
    source = b'x={outer:{inner:{key:"}"},after:1}}'
    assert source[js.enclosing(source, source.index(b"key")):].startswith(b'{key:"}"}')


def test_only_arrays_of_plain_strings_are_lists_of_names():
    source = (b'a=["Read","Write",...[],"Bash"];b=["Read",{x:"Write"},"Bash"];'
              b'c=["Bash",...more,"Write","Read"];d=f("Read","Write","Bash")')
    found = js.string_arrays(source, "Read", "Write", "Bash")
    assert found == [["Read", "Write", "Bash"], ["Bash", "Write", "Read"]]
