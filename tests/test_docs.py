"""README.md and docs/: what a reader copies works, what a page links to exists, and every
figure names the bench row it comes from.

- Every forge command a page shows parses with forge's own parser, and every synopsis names
  a real command and only options its `--help` lists (`hint_audit.document_commands`).
- Every relative link resolves to a file, and an `#anchor` to a heading of that file.
- A measured figure (a number with `ms`, `x` or `%`; or a decimal or range with `s`, `kB` or
  `MB`) stands in a paragraph, list item or table row that cites its bench row as
  `[bench: ROW, ...](../bench/RESULTS.md)`; each ROW is a scenario key, a section or `targets` of
  bench/results.json, and each figure is one of the numbers recorded there for those rows.
- README.md links every page of docs/, and every page ends with its reference.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

from forge_runtime.hint_audit import command_problem, document_commands, synopsis_problem

REPO = Path(__file__).resolve().parents[1]
PAGES = sorted((REPO / "docs").glob("*.md"))
DOCUMENTS = [REPO / "README.md", *PAGES]
RESULTS = json.loads((REPO / "bench" / "results.json").read_text(encoding="utf-8"))

_LINK = re.compile(r"(?<!!)\[[^\]]*\]\(([^)\s]+)\)")
_CITATION = re.compile(r"\[bench: ([^\]]+)\]\(([^)]+)\)")
_NUMBER = r"\d[\d,]*(?:\.\d+)?"
_FIGURE = re.compile(
    rf"(?<![\w.,/-])({_NUMBER})(?:\s?-\s?({_NUMBER}))?(?:(x)\b|\s?(ms|%)(?!\w)"
    rf"|\s(s|kB|MB)\b)")
_FENCE = re.compile(r"^\s*(?:```|~~~)")
_BLOCK_START = re.compile(r"^\s*(?:[-*]|\d+\.|\|)\s")


def _shown(path: Path) -> str:
    return path.relative_to(REPO).as_posix()


def _prose_blocks(text: str) -> list[tuple[int, str]]:
    """(first line, text) of each paragraph, list item and table row outside code blocks."""
    blocks: list[tuple[int, list[str]]] = []
    in_code = False
    for number, line in enumerate(text.splitlines(), start=1):
        if _FENCE.match(line):
            in_code = not in_code
            blocks.append((number, []))
        elif in_code or not line.strip():
            blocks.append((number, []))
        elif _BLOCK_START.match(line) or not blocks or not blocks[-1][1]:
            blocks.append((number, [line]))
        else:
            blocks[-1][1].append(line)
    return [(number, " ".join(lines)) for number, lines in blocks if lines]


def _numbers(value) -> list[float]:
    """Every number a results entry holds, those inside its strings ("< 300 ms") too."""
    if isinstance(value, bool):
        return []
    if isinstance(value, int | float):
        return [float(value)]
    if isinstance(value, str):
        return [float(n.replace(",", "")) for n in re.findall(_NUMBER, value)]
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) \
        else []
    return [number for item in items for number in _numbers(item)]


def _rows() -> dict[str, list[float]]:
    """Row name -> its recorded numbers: each scenario key (over both passes, with the
    targets that name it) and each top-level section (`concurrency`, `artifacts` ...)."""
    rows: dict[str, list[float]] = {}
    for run in RESULTS["passes"]:
        for scenario in run["scenarios"]:
            targets = [t for t in run["targets"]
                       if scenario["title"] in t["subject"] or scenario["key"] in t["subject"]]
            rows.setdefault(scenario["key"], []).extend(_numbers([scenario, targets]))
    for section in ("concurrency", "artifacts", "adversarial", "host_latency"):
        rows[section] = _numbers(RESULTS[section])
    rows["targets"] = _numbers([run["targets"] for run in RESULTS["passes"]])
    return rows


ROWS = _rows()


def figure_problems(block: str) -> list[str]:
    """Why the figures of one paragraph are not backed by the bench rows it cites."""
    figures = []
    for match in _FIGURE.finditer(_CITATION.sub("", block)):
        unit = next(group for group in match.groups()[2:] if group)
        if unit in ("s", "kB", "MB") and "." not in match.group(0) and not match.group(2):
            continue  # an integer of seconds or bytes is a setting or a size, not a measure
        figures.extend(n for n in match.groups()[:2] if n)
    if not figures:
        return []
    cited = [row.strip() for found in _CITATION.findall(block) for row in found[0].split(",")]
    if not cited:
        return [f"figures {figures} cite no bench row"]
    unknown = [row for row in cited if row not in ROWS]
    if unknown:
        return [f"no bench row {unknown} in bench/results.json"]
    recorded = [number for row in cited for number in ROWS[row]]
    problems = []
    for figure in figures:
        digits = len(figure.partition(".")[2])
        value = float(figure.replace(",", ""))
        if not any(round(number, digits) == value for number in recorded):
            problems.append(f"{figure} is not a number rows {cited} recorded")
    return problems


@pytest.mark.parametrize("document", DOCUMENTS, ids=_shown)
def test_every_forge_command_a_page_shows_parses(document):
    commands, synopses = document_commands(document.read_text(encoding="utf-8"))
    problems = [f"{number}: `{command}` {problem}" for number, command in commands
                if (problem := command_problem(command))]
    problems += [f"{number}: `{synopsis}`: {problem}" for number, synopsis in synopses
                 if (problem := synopsis_problem(synopsis))]
    assert problems == []


def _anchors(path: Path) -> set[str]:
    """GitHub's heading anchors: lower case, punctuation dropped, spaces to hyphens."""
    headings = re.findall(r"^#+\s+(.+)$", path.read_text(encoding="utf-8"), flags=re.M)
    return {re.sub(r"[^\w\- ]", "", h.strip().lower()).replace(" ", "-") for h in headings}


def link_problems(document: Path) -> list[str]:
    """Each relative link of a page that names no file, or a heading its file lacks."""
    problems = []
    for target in _LINK.findall(document.read_text(encoding="utf-8")):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        file, _, anchor = target.partition("#")
        path = (document.parent / file).resolve() if file else document
        if not path.exists():
            problems.append(f"{target}: no such file")
        elif anchor and path.suffix == ".md" and anchor not in _anchors(path):
            problems.append(f"{target}: no heading #{anchor} in {path.name}")
    return problems


@pytest.mark.parametrize("document", DOCUMENTS, ids=_shown)
def test_every_relative_link_resolves(document):
    assert link_problems(document) == []


def test_the_link_check_catches_a_missing_file_and_a_missing_heading(tmp_path):
    (tmp_path / "other.md").write_text("# Other\n\n## The kernel layer\n")
    page = tmp_path / "page.md"
    page.write_text("[ok](other.md#the-kernel-layer) [web](https://example.invalid/x) "
                    "[gone](gone.md) [moved](other.md#the-guard) [here](#nope)\n# Page\n")
    assert link_problems(page) == ["gone.md: no such file",
                                   "other.md#the-guard: no heading #the-guard in other.md",
                                   "#nope: no heading #nope in page.md"]


@pytest.mark.parametrize("document", DOCUMENTS, ids=_shown)
def test_every_figure_names_the_bench_row_it_comes_from(document):
    problems = [f"{_shown(document)}:{number}: {problem}"
                for number, block in _prose_blocks(document.read_text(encoding="utf-8"))
                for problem in figure_problems(block)]
    assert problems == []


def test_the_figure_check_catches_an_unbacked_a_wrong_and_an_unknown_row():
    row = RESULTS["passes"][1]["scenarios"][4]          # a lean-pass hook scenario
    ratio = f"{row['ratio_to_floor']:.2f}x"
    cite = f"[bench: {row['key']}](../bench/RESULTS.md)"
    assert figure_problems(f"It takes {ratio} {cite}.") == []
    assert figure_problems(f"It takes {ratio}.") == [f"figures ['{ratio[:-1]}'] cite no bench "
                                                     "row"]
    assert figure_problems(f"It takes 97.13 ms {cite}.") == [
        f"97.13 is not a number rows ['{row['key']}'] recorded"]
    assert figure_problems("It takes 3 ms [bench: nope](x).") == [
        "no bench row ['nope'] in bench/results.json"]
    assert figure_problems("A 30 s timeout and a 1 MB brief.") == []   # settings and sizes


def test_readme_maps_every_page_and_every_page_ends_with_its_reference():
    readme = (REPO / "README.md").read_text(encoding="utf-8")
    assert PAGES
    assert [page.name for page in PAGES if f"(docs/{page.name})" not in readme] == []
    for page in PAGES:
        headings = re.findall(r"^## (.+)$", page.read_text(encoding="utf-8"), flags=re.M)
        assert headings and headings[-1].startswith("Reference"), page.name


def test_the_artifacts_page_states_the_scoring_constants_forge_uses():
    from forge_runtime.artifacts import score

    page = " ".join((REPO / "docs" / "artifacts.md").read_text(encoding="utf-8").split())
    tables = {**score.VERDICT, **score.CONGRUENCE, **score.EVIDENCE_TYPE}
    stated = {name: float(value) for name, value in
              re.findall(rf"\b({'|'.join(tables)}) ({_NUMBER})", page)}
    assert stated == tables
    assert f"or {score.EXPIRED_FACTOR} once `valid_until` has passed" in page
