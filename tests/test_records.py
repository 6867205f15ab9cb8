"""forge_runtime.records: the hot path's named tuples behave as named tuples do."""

import copy

import pytest

from forge_runtime.records import record

Point = record("Point", "x y label", defaults=("origin",))


def test_fields_by_name_by_position_and_by_keyword():
    point = Point(1, y=2)
    assert (point.x, point.y, point.label) == (1, 2, "origin") == tuple(point)
    assert Point(1, 2, "a") == (1, 2, "a")
    assert repr(point) == "Point(x=1, y=2, label='origin')"
    assert Point._fields == ("x", "y", "label")


def test_fields_are_read_only_and_copies_are_equal():
    point = Point(1, 2)
    with pytest.raises(AttributeError):
        point.x = 5
    assert copy.deepcopy(point) == point and type(copy.copy(point)) is Point


@pytest.mark.parametrize("args, kwargs", [((1,), {}), ((1, 2, 3, 4), {}),
                                          ((1, 2), {"z": 3}), ((1,), {"label": "a"})])
def test_a_wrong_set_of_fields_is_refused(args, kwargs):
    with pytest.raises(TypeError):
        Point(*args, **kwargs)
