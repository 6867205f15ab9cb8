"""What a `goal_status` attachment says (goal/hosts/native_goal.py): every shape the host
writes, and the unknown read safe: a shape forge has not seen ends forge's goal, and asked
whether the native goal still runs it says "it may"."""

from __future__ import annotations

import pytest

from forge_runtime.goal.hosts.native_goal import (
    CLEARED,
    IMPOSSIBLE,
    MET,
    RUNNING,
    UNKNOWN,
    may_run,
    still_running,
    verdict,
)

CONDITION = "the parser passes its tests"
RESULT = {"condition": CONDITION, "reason": "done", "iterations": 3, "durationMs": 5120,
          "tokens": 48210}

# As the host's writers make them (Claude Code 2.1.332 and 2.1.337)
HOST_SHAPES = [
    ({"met": False, "sentinel": True, "condition": CONDITION}, RUNNING),  # set
    ({"met": False, "condition": CONDITION, "reason": "tests fail"}, RUNNING),  # not met
    ({"met": True, "sentinel": True, "condition": CONDITION}, CLEARED),  # `/goal clear`
    ({"met": True, "sentinel": True}, CLEARED),
    ({"met": True, **RESULT}, MET),
    ({"met": False, "failed": True, **RESULT}, IMPOSSIBLE),  # the evaluator's impossible
]

# What no writer of the host makes: each is an end forge does not know, never "running"
NOT_THE_HOSTS = [
    {"met": False, "impossible": True, "condition": CONDITION},  # the evaluator's answer's key
    {"met": False, "condition": CONDITION, "iterations": 2},  # a result field on not-met
    {"met": False, "failed": False, "condition": CONDITION},
    {"met": "false", "condition": CONDITION},
    {"met": 0, "condition": CONDITION},
    {"met": None, "condition": CONDITION},
    {"condition": CONDITION},
    {},
    {"met": False, "sentinel": "true", "condition": CONDITION},
    {"met": False, "sentinel": 1, "condition": CONDITION},
    {"met": False, "condition": ["a list"]},
    {"met": False, "condition": CONDITION, "reason": 7},
    {"met": True, **RESULT, "tokens": "48210"},
    {"met": True, **RESULT, "iterations": True},
    {"met": False, "failed": True, "condition": CONDITION, "paused": True},
    {"met": False, "condition": CONDITION, "status": "running"},
    {"met": True, "sentinel": True, "condition": CONDITION, "reason": "x"},
    {"met": False, "sentinel": True, "failed": True, "condition": CONDITION},
]


@pytest.mark.parametrize("attachment, says", HOST_SHAPES)
def test_every_shape_the_host_writes_says_what_it_means(attachment, says):
    assert verdict({"type": "goal_status", **attachment}) == says


@pytest.mark.parametrize("attachment", NOT_THE_HOSTS)
def test_a_shape_no_writer_of_the_host_makes_is_unknown(attachment):
    attachment = {"type": "goal_status", **attachment}
    assert verdict(attachment) == UNKNOWN
    assert still_running(attachment) is None  # it grants no running goal to a binding
    condition = attachment.get("condition")
    assert may_run(attachment) == (condition if isinstance(condition, str) else "")


def test_an_entry_the_host_marks_as_another_sessions_is_unknown():
    attachment = {"type": "goal_status", "met": False, "condition": CONDITION}
    assert verdict(attachment, {"type": "attachment", "remoteSourced": True}) == UNKNOWN
    assert verdict(attachment, {"type": "attachment", "remoteSourced": False}) == RUNNING


@pytest.mark.parametrize("attachment, says", HOST_SHAPES)
def test_only_a_running_shape_runs(attachment, says):
    attachment = {"type": "goal_status", **attachment}
    running = CONDITION if says == RUNNING else None
    assert still_running(attachment) == running
    assert may_run(attachment) == running
