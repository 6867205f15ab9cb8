"""A prompt the host sends on its own into a session whose goal has ended is held at
UserPromptSubmit: it never reaches the model, so the turn it would start costs nothing; a
person's prompt goes through.

The Stop inputs carry `session_crons` as Claude Code 2.1.337 sends them (measured: a
ScheduleWakeup's `{id, schedule, recurring: false, prompt}`); tests/host/
test_goal_self_started.py checks the real host.
"""

from __future__ import annotations

import pytest
from goal_support import Session, goal_of, goal_project_fixture, started_goal

from forge_runtime.goal.hosts import host_prompts
from forge_runtime.goal.store import sessions
from forge_runtime.hooks.goal_handlers import on_prompt, on_stop

project = goal_project_fixture()
OBJECTIVE = "the parser passes its tests"
WOKEN = "WOKEN-WAKEUP run the build again"
WAKEUP = {"id": "d6781d90", "schedule": "28 18 * * *", "recurring": False, "prompt": WOKEN}
NOTICE = ("<task-notification>\n<task-id>bwpjcsx46</task-id>\n<status>completed</status>\n"
          "</task-notification>")


def _ended(project, crons=(WAKEUP,)) -> Session:
    """A goal whose last turn spends its tranche, at a Stop that lists `crons`."""
    session = started_goal(project, OBJECTIVE, 19)
    session.work()
    reply = on_stop(session.event("Stop", stop_hook_active=True,
                                         session_crons=list(crons)))
    assert reply["stopReason"].startswith("FORGE_GOAL_BUDGET_EXHAUSTED: ")
    assert goal_of(project)["status"] == "exhausted"
    return session


def _submit(session: Session, prompt: str, **fields) -> dict | None:
    return on_prompt(session.event("UserPromptSubmit", prompt=prompt, **fields))


def _held(reply: dict | None) -> str:
    assert reply is not None and reply["decision"] == "block", reply
    return reply["reason"]


def test_a_wake_up_after_the_end_is_held_and_a_person_then_goes_through(project):
    session = _ended(project)
    reason = _held(_submit(session, WOKEN))
    lines = reason.splitlines()
    assert lines[0].startswith("FORGE_GOAL_ENDED_TURN: goal ")
    assert "a wake-up or cron this session scheduled" in lines[0]
    assert "held it before it reached the model" in lines[0]
    assert lines[-3:] == [f"Next: /goal {OBJECTIVE}", "  adds one more tranche of 20 turns",
                          "Or: /goal clear"]
    # the one-shot fired: the person typing the same words later is the person
    assert _submit(session, WOKEN) is None
    assert _submit(session, "thanks, what is left to do?") is None


def test_a_background_tasks_notice_after_the_end_is_held(project):
    session = _ended(project, crons=())
    assert "a background task's notice" in _held(_submit(session, "  " + NOTICE))


def test_a_recurring_cron_is_held_every_time_it_fires(project):
    session = _ended(project, crons=[{**WAKEUP, "recurring": True}])
    for _ in range(3):
        _held(_submit(session, WOKEN))


def test_while_the_goal_runs_the_hosts_prompts_reach_the_model(project):
    session = started_goal(project, OBJECTIVE, 3)
    session.work()
    assert on_stop(session.event("Stop", stop_hook_active=True,
                                        session_crons=[WAKEUP])) is None
    assert _submit(session, WOKEN) is None
    assert _submit(session, NOTICE) is None


def test_the_hosts_own_source_decides_where_it_says_so(project):
    session = _ended(project, crons=[{**WAKEUP, "recurring": True}])
    assert "its source is `loop_wakeup`" in _held(_submit(session, "anything at all",
                                                          source="loop_wakeup"))
    assert "its source is `poll_event`" in _held(_submit(session, "x", source="poll_event"))
    assert _submit(session, WOKEN, source="user") is None  # the person typed those words


def test_a_scheduled_prompt_the_host_cut_short_is_known_by_what_is_left(project):
    long = "WOKEN " + "y" * 1200
    listed = long[:1000] + f" \u2026 [+{len(long) - 1000} chars]"
    session = _ended(project, crons=[{**WAKEUP, "prompt": listed}])
    _held(_submit(session, long))


@pytest.mark.parametrize("prompt", [
    WOKEN + " please",  # more than was scheduled
    "please " + WOKEN,
    WOKEN[:-1],
    WOKEN.upper(),
    "<task-notification",  # not the host's tag
    "a person's words mentioning <task-notification> later on",
])
def test_a_persons_prompt_near_a_scheduled_one_goes_through(project, prompt):
    session = _ended(project)
    assert _submit(session, prompt) is None


@pytest.mark.parametrize("listed", [
    WOKEN[:10] + " \u2026 [+x chars]",  # a mark whose count is no number
    WOKEN[:10] + " [+12 chars]",  # no ellipsis: not the host's mark
    WOKEN[:10] + " \u2026 [+12 chars",
])
def test_only_the_hosts_own_cut_mark_widens_a_match(project, listed):
    session = _ended(project, crons=[{**WAKEUP, "prompt": listed}])
    assert _submit(session, WOKEN) is None


def test_the_list_is_the_newest_stops(project):
    session = _ended(project)
    session.prompt("go on with the next tranche?")  # a person's own turn after the end
    session.work()
    on_stop(session.event("Stop", stop_hook_active=False, session_crons=[]))
    binding = sessions.read_binding(project.ledger_root, session.id)
    assert host_prompts.CRONS not in binding
    assert _submit(session, WOKEN) is None


def test_malformed_crons_keep_nothing():
    binding = {}
    host_prompts.remember(binding, {"session_crons": [
        "WOKEN", {"prompt": 5}, {"id": "x"}, None, {"prompt": "ok", "recurring": "no"}]})
    assert binding == {host_prompts.CRONS: [{"prompt": "ok", "recurring": True}]}
    host_prompts.remember(binding, {"session_crons": "WOKEN"})
    assert binding == {}
