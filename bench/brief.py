"""`forge brief check` on a messy brief of 10 KB and of 1 MB: the parser must be linear.

The brief is what a long, untidy model answer looks like: chatter, every heading style,
English, Chinese and Russian synonyms, code blocks (some with heading lines inside),
duplicated sections, block quotes and body lines that begin with heading words.
"""

from __future__ import annotations

from bench.scenarios import Plan, Scenario, expect_hint, require_command
from bench.workspace import Workspace

SIZES = {"10kb": 10_000, "1mb": 1_000_000}

_BLOCK = """Sure, here is what I understood so far.

## 1. Objective
Export the monthly reports as CSV files for the finance team.
Assumptions hold that the reports fit in memory.
> ## Boundaries (quoted, not a heading)
**Success criteria**:
- `report --csv` writes report.csv with a header row
- every column of the screen report appears, in the same order
```python
## Goal
print("not a heading: inside a fence")
```
__Out of scope__
- PDF and Excel exports; the screen report must not change
4) Open questions: who reads it? Assumed: finance, weekly.
目标：导出月度报表
验收标准：生成 report.csv
不做什么：PDF
假设：读者是财务
Цель: экспорт отчётов
Критерии приёмки: есть report.csv
Вне рамок: PDF
Допущения: читает бухгалтерия
~~~
Goal: also not a heading
~~~
Scope: reports only, nothing else in the {n}th block.
"""


def messy_brief(size: int) -> str:
    """A complete brief of about `size` bytes (UTF-8), built from repeated messy blocks."""
    parts, total, n = [], 0, 0
    while total < size:
        block = _BLOCK.format(n=n)
        parts.append(block)
        total += len(block.encode())
        n += 1
    return "".join(parts)


def brief_check(size: int):
    def prepare(space: Workspace) -> Plan:
        require_command("forge brief check --help")
        path = space.root / "brief.md"
        path.write_text(messy_brief(size), encoding="utf-8")
        return Plan(space.forge("brief", "check", str(path)), expect_hint,
                    note=f"{path.stat().st_size:,} bytes")
    return prepare


def scenarios() -> list[Scenario]:
    return [Scenario(f"brief-check-{name}", "CLI", f"forge brief check, messy brief of {name}",
                     brief_check(size)) for name, size in SIZES.items()]
