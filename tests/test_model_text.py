"""What a model says is untrusted input: every parser of a model's free text accepts any
text without raising, and keeps what it cannot shape.

One property test per parser, each fed arbitrary text plus the shapes models really send:
nothing, a megabyte, headings in other languages, Markdown fences, some of the sections,
the sections twice, control characters.
"""

from __future__ import annotations

import json

import pytest
import yaml
from goal_support import make_project
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from forge_runtime.clarify.brief import Brief
from forge_runtime.council import advisors, convene, replay, sdk
from forge_runtime.errors import ForgeError
from forge_runtime.hooks import subagent_stop

FRAGMENTS = [
    "", "\n", "Verdict: SQLite.\n", "## Verdict\n", "**Verdict**: CSV\n", "Reasons:\n",
    "# Reasons\nrows are queried\n", "Minority report: scale disagrees\n",
    "### Minority report\n\n", "Вердикт: да\n", "结论：是\n", "```\nVerdict: fenced\n",
    "```\n", "~~~\n", "\x00\x07\x1b[31m", "\u202e\u200b", "Verdict:", "Verdict: again\n",
    "## Goal\n", "Acceptance criteria:\n- it works\n", "**Boundaries**\n", "目标：快\n",
    "Цель: быстро\n", "Unknowns and assumptions\n", "> Goal: quoted\n", "- Goal: listed\n",
    "---\n", "\r\n", "\\## Goal\n", "1. Goal: numbered\n", "\t\t", "|a|b|\n",
]
MODEL_TEXT = st.one_of(
    st.text(),
    st.lists(st.sampled_from(FRAGMENTS), max_size=30).map("".join),
    st.lists(st.one_of(st.sampled_from(FRAGMENTS), st.text(max_size=20)), max_size=20)
    .map("".join),
)
HUGE = ("Verdict: " + "x" * 1_000_000, "\n" * 200_000, "Reasons:" * 100_000,
        "```\n" * 50_000, "## Goal\n" * 50_000)
FUZZ = settings(max_examples=300, deadline=None)


@FUZZ
@given(MODEL_TEXT)
def test_the_chairmans_sections_never_raise(text):
    said = convene.sections(text)
    assert set(said) <= set(convene.SHAPE) and all(isinstance(v, str) and v for v in
                                                    said.values())
    assert convene.missing_shape(said) == [s for s in convene.SHAPE if s not in said]


@pytest.mark.parametrize("text", HUGE, ids=["long verdict", "blank lines", "headings only",
                                            "fences", "briefs"])
def test_huge_answers_are_read_in_time_without_raising(text):
    convene.sections(text)
    Brief.parse(text)


def test_a_heading_written_twice_keeps_its_first_body():
    said = convene.sections("Verdict:\nVerdict: first\nReasons: r\nVerdict: second")
    assert said == {"verdict": "first", "reasons": "r"}


@FUZZ
@given(MODEL_TEXT)
def test_a_brief_parses_from_any_text(text):
    brief = Brief.parse(text)
    assert isinstance(brief.missing(), list)
    Brief.parse(brief.to_markdown())


@pytest.fixture(scope="module")
def project(tmp_path_factory):
    return make_project(tmp_path_factory.mktemp("model-text"))


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(MODEL_TEXT, min_size=11, max_size=11), st.integers(0, 12))
def test_a_council_records_whatever_its_seats_say(project, texts, failing):
    """Any answers, and any one seat's session failing (12: none), give a record whose front
    matter YAML reads, with every answer given kept as said."""
    def ask(member, prompt, cwd):
        index = 10 if member is advisors.CHAIRMAN else advisors.ADVISORS.index(member) + (
            5 if "Peer review:" in prompt else 0)
        if index == failing:
            raise ForgeError("the session failed (API error 400)", "forge doctor")
        return sdk.Answer(member.role, texts[index], 1, 10, 5, None, [])

    held = convene.convene(project, "Rows in SQLite or in CSV?", ask=ask)
    record = (project.root / held["record"]).read_text(encoding="utf-8")
    front = yaml.safe_load(record.split("---\n", 2)[1])
    assert front["id"] == held["id"] and front["status"] == held["status"]
    assert held["status"] in ("complete", "incomplete", "unshaped")
    given_opinions = {o["perspective"]: o["text"] for o in held["opinions"]}
    for index, member in enumerate(advisors.ADVISORS):
        if index != failing:
            assert given_opinions[member.perspective] == texts[index]  # kept as said
    if held["status"] != "complete":
        assert held["missing"]


@FUZZ
@given(st.recursive(st.none() | st.booleans() | st.integers() | st.text(max_size=8),
                    lambda inner: st.lists(inner, max_size=4)
                    | st.dictionaries(st.sampled_from(["opinions", "reviews", "verdict",
                                                       "scale", "simplicity"]), inner,
                                      max_size=5), max_leaves=30))
def test_a_subagent_council_file_holding_any_json_is_an_error_or_a_council(tmp_path_factory,
                                                                           value):
    path = tmp_path_factory.mktemp("replay") / "council.json"
    path.write_text(json.dumps(value))
    try:
        ask = replay.replaying(str(path))
    except ForgeError:
        return
    for member in [*advisors.ADVISORS, *advisors.ADVISORS, advisors.CHAIRMAN]:
        assert isinstance(ask(member, "", "").text, str)


@FUZZ
@given(st.lists(st.one_of(st.text(), st.builds(json.dumps, st.recursive(
    st.none() | st.integers() | st.text(max_size=6) | st.sampled_from(["assistant", "text"]),
    lambda inner: st.lists(inner, max_size=3) | st.dictionaries(
        st.sampled_from(["type", "message", "content", "text"]), inner, max_size=4),
    max_leaves=20))), max_size=8))
def test_a_clarifiers_transcript_holding_any_lines_gives_text_or_none(tmp_path_factory,
                                                                      lines):
    path = tmp_path_factory.mktemp("transcript") / "agent.jsonl"
    path.write_text("\n".join(lines), encoding="utf-8", errors="surrogatepass")
    said = subagent_stop._last_answer(str(path))
    assert said is None or isinstance(said, str)


@settings(max_examples=60, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(MODEL_TEXT)
def test_a_clarifiers_answer_of_any_text_is_frozen_or_kept_as_a_draft(project, text):
    hint = subagent_stop.freeze_answer(text, project)
    assert hint.render().splitlines()[0].startswith("Next: ")
