"""The brief's tolerant parser, its canonical renderer and its amendments."""

from __future__ import annotations

from datetime import datetime

import pytest
from hypothesis import given, settings
from hypothesis import strategies as st

from forge_runtime.clarify.brief import PLACEHOLDER, Amendment, Brief
from forge_runtime.clarify.headings import ACCEPTANCE, BOUNDARIES, GOAL, SECTIONS, UNKNOWNS

CLEAN = """## Goal
Export reports as CSV.

## Acceptance criteria
- `report --csv` writes report.csv
- the header row names every column

## Boundaries
- no other formats

## Unknowns and assumptions
- Who reads it? Assumed: the finance team.
"""


def test_a_clean_brief_reads_back_section_by_section():
    brief = Brief.parse(CLEAN)
    assert brief.complete and brief.missing() == [] and brief.language == "en"
    assert brief[GOAL] == "Export reports as CSV."
    assert brief[ACCEPTANCE] == ("- `report --csv` writes report.csv\n"
                                 "- the header row names every column")
    assert Brief.parse(brief.to_markdown()) == brief
    assert brief.to_markdown().startswith("## Goal\n\nExport reports as CSV.\n\n## Acceptance")


def test_a_messy_brief_in_every_heading_style_and_synonym():
    messy = """Sure! Let me restate what I understood.

# 1. OBJECTIVE
Export reports as CSV.
**Success criteria**:
- it writes report.csv
__Out of scope__
- PDF
4) Open questions: who reads it?
Assumed: the finance team.
"""
    brief = Brief.parse(messy)
    assert brief.sections == {GOAL: "Export reports as CSV.",
                              ACCEPTANCE: "- it writes report.csv",
                              BOUNDARIES: "- PDF",
                              UNKNOWNS: "who reads it?\nAssumed: the finance team."}


@pytest.mark.parametrize("text, language", [
    ("目标：导出 CSV\n## 验收条件\n- 生成 report.csv\n**不做什么**\n- PDF\n"
     "1、未知项与假设：读者未知\n", "zh"),
    ("Цель: экспорт в CSV\n### Критерии готовности\n- есть report.csv\nВне рамок: PDF\n"
     "Открытые вопросы: кто читает?\n", "ru"),
    ("Goal: export CSV\nDefinition of done: report.csv exists\nNon-goals: PDF\n"
     "Assumptions: finance reads it\n", "en"),
])
def test_chinese_russian_and_english_headings(text, language):
    brief = Brief.parse(text)
    assert brief.complete, brief.sections
    assert brief.language == language


def test_missing_sections_are_named_in_the_briefs_language_and_in_english():
    assert Brief.parse("目标：导出\n验收：有文件\n").missing() == [
        "边界 (Boundaries)", "未知与假设 (Unknowns and assumptions)"]
    assert Brief.parse("Цель: экспорт\nДопущения: нет\n").missing() == [
        "Критерии приёмки (Acceptance criteria)", "Границы (Boundaries)"]
    assert Brief.parse("## Goal\nx\n").missing() == [ACCEPTANCE, BOUNDARIES, UNKNOWNS]


def test_code_blocks_are_stripped_before_headings_are_read():
    polluted = CLEAN.replace("## Boundaries", "```python\n## Boundaries\nprint('x')\n```\n"
                                              "~~~\nGoal: not this\n~~~\n## Boundaries")
    brief = Brief.parse(polluted)
    assert brief == Brief.parse(CLEAN)
    assert "print" not in brief.to_markdown()


@pytest.mark.parametrize("fence", ["```", "~~~~"])
def test_an_answer_cut_off_inside_a_code_block_cannot_pass(fence):
    cut = CLEAN.replace("## Boundaries", f"{fence}sh\nreport --csv\n## Boundaries")
    brief = Brief.parse(cut)
    assert not brief.complete
    assert brief.lacking == (BOUNDARIES, UNKNOWNS)


def test_a_fence_is_closed_only_by_its_own_kind_and_length():
    text = "## Goal\nx\n````\n```\n~~~\n## Boundaries\nnot a heading\n````\n## Boundaries\nb\n"
    brief = Brief.parse(text)
    assert brief[GOAL] == "x" and brief[BOUNDARIES] == "b"


def test_a_body_line_that_begins_with_a_heading_word_is_body_text():
    text = CLEAN.replace("- no other formats", "- no other formats\nAssumptions hold that the "
                         "export is small.\nGoal posts do not move.\nScope: reports only")
    brief = Brief.parse(text)
    assert brief[BOUNDARIES] == ("- no other formats\nAssumptions hold that the export is "
                                 "small.\nGoal posts do not move.\nScope: reports only")
    assert brief[UNKNOWNS] == "- Who reads it? Assumed: the finance team."


def test_block_quotes_and_list_items_never_open_a_section():
    text = "## Goal\n> ## Boundaries\n> quoted\n- Assumptions: listed\n* Goal: bullet\n"
    brief = Brief.parse(text)
    assert brief[GOAL] == "> ## Boundaries\n> quoted\n- Assumptions: listed\n* Goal: bullet"
    assert brief.lacking == (ACCEPTANCE, BOUNDARIES, UNKNOWNS)


def test_a_section_written_twice_keeps_its_first_non_empty_body():
    text = "## Goal\n\n## Goal\nfirst\n## Acceptance criteria\na\n## Goal\nsecond\n"
    brief = Brief.parse(text)
    assert brief[GOAL] == "first" and brief[ACCEPTANCE] == "a"


def test_the_placeholder_of_an_empty_section_reads_back_as_empty():
    brief = Brief({GOAL: "g", ACCEPTANCE: "a", BOUNDARIES: "b"})
    markdown = brief.to_markdown()
    assert f"## Unknowns and assumptions\n\n{PLACEHOLDER}\n" in markdown
    again = Brief.parse(markdown)
    assert again == brief and again.lacking == (UNKNOWNS,)


def test_an_unknown_heading_ends_the_section_and_chatter_is_dropped():
    text = CLEAN + "\n## Next steps\nI can start now if you like.\n"
    brief = Brief.parse(text)
    assert brief == Brief.parse(CLEAN)


def test_amendments_stay_apart_from_the_four_sections():
    brief = Brief.parse(CLEAN).amended("Also export the totals row.", at="2026-12-01 10:00:00 UTC")
    brief = brief.amended("## Goal\nnot a new goal", at="2026-12-01 10:05:00 UTC")
    again = Brief.parse(brief.to_markdown())
    assert again == brief
    assert again[GOAL] == "Export reports as CSV."
    assert again.amendments == (Amendment("2026-12-01 10:00:00 UTC", "Also export the totals row."),
                                Amendment("2026-12-01 10:05:00 UTC", "## Goal\nnot a new goal"))
    assert "## Amendments\n\n### 2026-12-01 10:00:00 UTC\n" in brief.to_markdown()
    assert "Amendments (newer than the sections above; they win):" in brief.prompt_block()


def test_prompt_block_is_compact_and_goal_condition_lists_the_criteria():
    brief = Brief.parse(CLEAN)
    block = brief.prompt_block()
    assert "\n\n" not in block and PLACEHOLDER not in block
    assert block.splitlines()[0] == "Goal: Export reports as CSV."
    assert brief.goal_condition == ("every acceptance criterion of the brief holds: "
                                    "`report --csv` writes report.csv; the header row names "
                                    "every column")


def test_a_brief_names_only_its_four_sections_and_stamps_amendments():
    with pytest.raises(ValueError, match="no section 'Notes'"):
        Brief({"Notes": "x"})
    with pytest.raises(ValueError, match="an amendment's time"):
        Brief({}, [Amendment("yesterday", "x")])


_HEADINGISH = st.sampled_from([
    "## Goal", "Goal: x", "**Boundaries**", "Scope: x", "# Notes", "### Details", "```",
    "~~~", "```python", "> quoted", "- item", "\\## Goal", "\\\\Goal: y", "Assumptions hold",
    "目标：x", "Цель: y", "### 2026-12-01 10:00:00 UTC", "## Amendments", PLACEHOLDER,
    "1. Goal", "   ## Goal", "\tGoal:", "", "   ", "**Goal:** x", "__Scope__: y", "(1) Goal",
    "I. Goals", "Goal (one line)", "\\```", "## **Risks**", "验收标准（可测试）：z", "#", "# "])
_LINE = st.one_of(_HEADINGISH, st.text(st.characters(blacklist_categories=("Cs",),
                                                     blacklist_characters="\r\n"), max_size=30))
_BODY = st.lists(_LINE, max_size=6).map("\n".join)
_STAMP = st.datetimes(min_value=datetime(2000, 1, 1)).map(
    lambda moment: moment.strftime("%Y-%m-%d %H:%M:%S UTC"))


@settings(max_examples=300, deadline=None)
@given(st.fixed_dictionaries({name: _BODY for name in SECTIONS}),
       st.lists(st.tuples(_STAMP, _BODY), max_size=3))
def test_parse_of_to_markdown_is_the_same_brief_for_any_brief(sections, amendments):
    brief = Brief(sections, [Amendment(at, text) for at, text in amendments])
    assert Brief.parse(brief.to_markdown()) == brief
