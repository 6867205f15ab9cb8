"""forge_runtime.fastjson must read and write exactly what `json` does."""

import json
import math

import pytest
from hypothesis import given
from hypothesis import strategies as st

from forge_runtime import fastjson

SCALARS = st.none() | st.booleans() | st.integers() | st.floats() | st.text()
VALUES = st.recursive(SCALARS, lambda inner: st.lists(inner, max_size=4)
                      | st.dictionaries(st.text(), inner, max_size=4), max_leaves=20)


def same(a, b) -> bool:
    return json.dumps(a, sort_keys=True) == json.dumps(b, sort_keys=True) or (
        isinstance(a, float) and math.isnan(a) and math.isnan(b))


@given(VALUES)
def test_dumps_is_json_dumps_byte_for_byte(value):
    assert fastjson.dumps(value) == json.dumps(value)


@given(VALUES)
def test_loads_reads_what_json_writes(value):
    for text in (json.dumps(value), json.dumps(value, indent=2, ensure_ascii=False)):
        assert same(fastjson.loads(text.encode("utf-8")), json.loads(text))


@pytest.mark.parametrize("text", ["", "  ", "{", "{not json", '{"a": 1} x', "[1,]",
                                  '"\\ud800', "\ufeff{}", "{'a': 1}", '{"a": "tab\there"}',
                                  "01", "nul"])
def test_loads_refuses_what_json_refuses(text):
    with pytest.raises(ValueError):
        json.loads(text)
    with pytest.raises(ValueError):
        fastjson.loads(text.encode("utf-8"))


def test_loads_refuses_bytes_that_are_not_utf8():
    with pytest.raises(ValueError):  # UnicodeDecodeError is a ValueError
        fastjson.loads(b"\xff\xfe{}")


def test_loads_keeps_duplicate_keys_last_and_nesting():
    assert fastjson.loads(b' {"a": 1, "a": [2, {"b": null}]}\n') == {"a": [2, {"b": None}]}


def test_dumps_refuses_what_json_cannot_write():
    with pytest.raises(TypeError):
        fastjson.dumps({"a": object()})


SETTINGS = [{"sort_keys": True, "separators": (",", ":"), "ensure_ascii": False},
            {"ensure_ascii": False},
            {"sort_keys": True},
            {"separators": (",", ":")}]


@pytest.mark.parametrize("settings", SETTINGS)
@given(value=VALUES)
def test_dumps_with_settings_is_json_dumps_byte_for_byte(settings, value):
    """The settings forge hashes and stores with: ledger records (sorted, compact, UTF-8),
    state.md's goal line, gate definitions and gate files."""
    try:
        expected = json.dumps(value, **settings)
    except TypeError:  # keys of mixed types cannot be sorted: both refuse
        with pytest.raises(TypeError):
            fastjson.dumps(value, **settings)
        return
    assert fastjson.dumps(value, **settings) == expected


def test_dumps_writes_tuples_as_lists_as_json_does():
    value = [[(True, "é ✓"), (False, "b")], None]
    assert fastjson.dumps(value, ensure_ascii=False) == json.dumps(value, ensure_ascii=False)
