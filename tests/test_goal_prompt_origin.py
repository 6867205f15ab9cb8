"""Who started a turn: a prompt is a person's only when every field the host wrote says so.

The measured entries (tests/data/claude-code-2.1.337-prompt-entries.jsonl) are the prompt
entries Claude Code 2.1.337 wrote in `claude -p` and in its TUI; the shaped ones follow the
binary's own prompt-row writers for routes a test cannot drive offline (the Desktop app's
scheduled tasks and resumes, another session's message, a mod's rewrite, a silent resend,
the fixed "go on" after an interruption). The hostile corpus is entries that try to pass as
a person's while the host's own fields say otherwise.
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from forge_runtime.goal.hosts import transcript
from forge_runtime.goal.hosts.transcript import HOST, PERSON, prompt_origin

MEASURED = Path(__file__).parent / "data" / "claude-code-2.1.337-prompt-entries.jsonl"
ROWS = [json.loads(line) for line in MEASURED.read_text().splitlines()]
TYPED = next(row["entry"] for row in ROWS if row["how"].startswith("TUI: typed"))
SDK = ROWS[0]["entry"]


@pytest.mark.parametrize("row", ROWS, ids=[row["how"] for row in ROWS])
def test_the_entries_the_host_wrote_read_as_who_sent_them(row):
    assert prompt_origin(row["entry"]) == {"person": PERSON, "host": HOST}[row["origin"]]


def _shaped(base: dict, **fields) -> dict:
    return {**base, **fields}


# The host's prompt-row writers (2.1.337), with the fields each route sets on the entry.
SHAPED = {
    "Desktop scheduled task": _shaped(TYPED, hostInitiator="scheduled-task",
                                      turnOrigin="scheduled"),
    "Desktop resume after sleep": _shaped(TYPED, hostInitiator="sleep-auto-resume",
                                          turnOrigin="auto_continuation"),
    "an initiator the host lists as `other`": _shaped(TYPED, hostInitiator="side-session-wake"),
    "another session's message": _shaped(TYPED, fromAnotherSession=True),
    "a mod's rewrite of the prompt": _shaped(TYPED, modWritten=True),
    "the fixed go-on after an interruption": _shaped(
        SDK, isMeta=True, askedToGoOn=True, rowSource="harness",
        carriesOnTurnOf="0b3b2f4e-6f55-4d0e-9a53-0d2c35a0c7a1",
        message={"role": "user", "content": "Continue from where you left off."}),
    "a silent resend of a prompt": _shaped(TYPED, silentResendOf="5e4b7c1d-3a9f-4e6b-8c2d"),
    "a wake-up's text as scheduled": _shaped(SDK, wakeupText="as_scheduled"),
    "the usage-limit continuation": _shaped(SDK, isMeta=True, promptSource="system",
                                            origin={"kind": "auto-continuation"}),
    "a monitor's result ending in a waiting note": _shaped(SDK, resultEndsInWaitingNote=True),
    "a connector's message": _shaped(TYPED, fromConnector=True),
}


@pytest.mark.parametrize("name", SHAPED)
def test_prompts_the_host_sent_on_its_own_are_the_hosts(name):
    assert prompt_origin(SHAPED[name]) == HOST


def test_the_desktop_apps_own_person_is_a_person():
    assert prompt_origin(_shaped(TYPED, hostInitiator="user")) == PERSON


# Each entry keeps every person-looking field and changes one thing the host would have
# written otherwise, the way a forged or misread entry would try to pass.
HOSTILE = {
    "turnOrigin says scheduled": _shaped(TYPED, turnOrigin="scheduled"),
    "turnOrigin says unknown": _shaped(SDK, turnOrigin="unknown"),
    "turnOrigin in capitals": _shaped(TYPED, turnOrigin="HUMAN"),
    "rowSource recorded": _shaped(SDK, rowSource="recorded"),
    "rowSource harness": _shaped(SDK, rowSource="harness"),
    "promptSource in capitals": _shaped(TYPED, promptSource="Typed"),
    "promptSource with a space": _shaped(TYPED, promptSource="typed "),
    "isMeta as the number 1": _shaped(TYPED, isMeta=1),
    "isMeta as the string false": _shaped(TYPED, isMeta="false"),
    "typedByPerson as a string": _shaped(TYPED, typedByPerson="yes"),
    "origin as a bare string": _shaped(TYPED, origin="human"),
    "origin kind with a space": _shaped(TYPED, origin={"kind": "human "}),
    "origin kind a list": _shaped(TYPED, origin={"kind": ["human"]}),
    "origin kind of a notice": _shaped(TYPED, origin={"kind": "task-notification"}),
    "a wake-up source without isMeta": _shaped(TYPED, wakeupSource="loop_wakeup"),
    "a scheduled task id of 0": _shaped(TYPED, scheduledTaskId=0),
    "a scheduled fire id": _shaped(TYPED, scheduledFireId="f1"),
    "text not typed as the string true": _shaped(TYPED, textNotTyped="true"),
    "askedToGoOn without isMeta": _shaped(TYPED, askedToGoOn=True),
    "carries another turn on": _shaped(TYPED, carriesOnTurnOf="u1"),
    "hostInitiator a new value": _shaped(TYPED, hostInitiator="cloud-routine"),
    "a field forge has not classified": _shaped(TYPED, spawnedByAgent="a1"),
    "an unclassified field set to false": _shaped(TYPED, autoSent=False),
    "an unclassified field set to null": _shaped(SDK, relayedFrom=None),
    "a notice under a person's fields": _shaped(TYPED, message={
        "role": "user", "content": "  \n<task-notification><status>done</status>"}),
    "a notice in a text block": _shaped(SDK, message={"role": "user", "content": [
        {"type": "text", "text": "<task-notification>done</task-notification>"}]}),
}


@pytest.mark.parametrize("name", HOSTILE)
def test_an_entry_that_looks_like_a_persons_but_is_not_reads_as_the_hosts(name):
    assert prompt_origin(HOSTILE[name]) == HOST


def test_the_person_fields_of_the_measured_entries_are_all_classified():
    """Every field of every measured prompt entry is in one of the rule's tables: a field in
    none would turn a person's prompts into the host's."""
    classified = transcript.PROMPT_ENVELOPE | set(transcript.PROMPT_PERSON_VALUES) | \
        transcript.PROMPT_HOST_MARKS | {"origin"}
    fields = {key for row in ROWS for key in row["entry"]}
    assert fields <= classified, sorted(fields - classified)


def test_each_field_has_one_meaning():
    tables = [transcript.PROMPT_ENVELOPE, set(transcript.PROMPT_PERSON_VALUES),
              transcript.PROMPT_HOST_MARKS, {"origin"}]
    for index, table in enumerate(tables):
        for other in tables[index + 1:]:
            assert not (set(table) & set(other)), set(table) & set(other)
