"""The guard against slow input: the worst PreToolUse time over a corpus built to be slow.

Every entry is a tool call of a few kB to a few MB that once kept a shell or path analysis
busy (runs of commas, braces nested or hidden in comments, repeated `${a-`, brace lists of
deep globs, thousands of statements or `cd`s, an MCP call with a great many or very long
strings, a huge Edit of state.md). Each one runs through the real launcher, as the host runs
it, and must come back answered (allowed, or denied with a reason) with status 0. The target
is the slowest single run over the whole corpus: under 3 s, whatever the input, because the
host lets a hook through once its own timeout passes. The hook's 2 s watchdog is what makes
that hold for inputs no analysis bounds.
"""

from __future__ import annotations

import json
import statistics
from collections.abc import Callable
from pathlib import Path

from bench.measure import run_once
from bench.scenarios import expect_hook_ran
from bench.suite import INVALID, MEASURED, Settings
from bench.workspace import Workspace

LIMIT_MS = 3000.0
LEDGER = ".git/forge-goals"


def _bash(command: str) -> tuple[str, dict]:
    return "Bash", {"command": command, "description": "adversarial input"}


def _mcp(arguments: dict) -> tuple[str, dict]:
    return "mcp__files__write_file", arguments


# name -> (project root -> (tool name, tool input)); every name is a row of the report.
CORPUS: dict[str, Callable[[Path], tuple[str, dict]]] = {
    "quoted run of commas": lambda root: _bash(f"echo '{',' * 6000}' > {LEDGER}/x"),
    "double-quoted run of escapes": lambda root: _bash(
        'echo "' + "\\x" * 45000 + '" > ' + LEDGER + "/x"),
    "brace run of commas": lambda root: _bash("echo {" + "," * 3000 + "} > " + LEDGER + "/x"),
    "nested braces in a comment": lambda root: _bash("ls # " + "{a," * 1500 + "}" * 1500),
    "deeply nested braces": lambda root: _bash("echo " + "{a," * 400 + "b" + "}" * 400),
    "repeated ${a-": lambda root: _bash("rm -rf " + "${a-" * 2000 + "}" * 2000),
    "brace list of deep globs": lambda root: _bash(
        "rm -rf {" + ",".join(["**/*/**/.*/*"] * 300) + "}"),
    "brace product": lambda root: _bash("touch " + "{a,b}" * 24 + f" {LEDGER}"),
    "sequence of a hundred million": lambda root: _bash("touch {1..99999999}"),
    "two thousand cd": lambda root: _bash(
        " && ".join(["cd ../x/../.git"] * 2000) + " && rm -rf forge-goals"),
    "nested substitutions": lambda root: _bash("echo " + "$(echo " * 500 + "x" + ")" * 500),
    "eight thousand statements": lambda root: _bash(
        "; ".join(f"rm -f a{i} b{i}" for i in range(8000))),
    "a word of fifty thousand parts": lambda root: _bash("cat " + "a/" * 50000),
    "heredoc of substitutions": lambda root: _bash("cat <<EOF\n" + "$(x)\n" * 20000 + "EOF"),
    "MCP call, 200,000 strings": lambda root: _mcp({"paths": [f"x/{i}" for i in range(200000)]}),
    "MCP call, 2,000 long paths": lambda root: _mcp({"paths": ["a/" * 1000] * 2000}),
    "MCP call nested 900 deep": lambda root: _mcp({"a": json.loads("[" * 900 + "]" * 900)}),
    "Edit of state.md, 100 kB": lambda root: ("Edit", {
        "file_path": str(root / ".forge/local/state.md"), "old_string": "a" * 100000,
        "new_string": "b"}),
}


def events(space: Workspace) -> dict[str, dict]:
    """Each corpus entry as the PreToolUse event the host would send in `space`."""
    found = {}
    for name, build in CORPUS.items():
        tool, tool_input = build(space.root)
        found[name] = space.event("PreToolUse", tool_name=tool, tool_input=tool_input,
                                  tool_use_id="toolu_bench_adversarial")
    return found


def measure(settings: Settings, base: Path, runs: int) -> dict:
    """Every entry `runs` times through the launcher: the slowest run of each, and overall."""
    space = Workspace.create(settings.plugin_root, settings.python, base, "adversarial")
    rows, problems = [], []
    for name, event in events(space).items():
        command = space.hook(event)
        walls = []
        for _ in range(runs):
            run = run_once(command)
            problem = expect_hook_ran(run)
            if problem:
                problems.append(f"{name}: {problem}")
                break
            walls.append(run.wall_ms)
        if walls:
            reply = run.stdout.decode(errors="replace")
            rows.append({"input": name, "kb": len(json.dumps(event)) // 1000,
                         "answer": "deny" if '"deny"' in reply else "allow",
                         "median_ms": round(statistics.median(walls), 1),
                         "max_ms": round(max(walls), 1)})
    if problems:
        return {"status": INVALID, "reason": problems[0], "rows": rows}
    worst = max(rows, key=lambda row: row["max_ms"])
    return {"status": MEASURED, "runs": runs, "rows": rows, "worst_input": worst["input"],
            "worst_ms": worst["max_ms"], "limit_ms": LIMIT_MS,
            "met": worst["max_ms"] < LIMIT_MS}


def line(result: dict) -> str:
    """One sentence for the report."""
    if result.get("status") != MEASURED:
        return f"Slow input: {result.get('status')}: {result.get('reason')}"
    verdict = "met" if result["met"] else "MISSED"
    return (f"Slow input: the slowest of {len(result['rows'])} adversarial PreToolUse inputs "
            f"({result['runs']} runs each) took {result['worst_ms']:.0f} ms "
            f"({result['worst_input']}); limit {result['limit_ms']:.0f} ms: {verdict}")


def table(result: dict) -> list[str]:
    """The per-input rows as Markdown."""
    out = ["| Input | kB | Answer | Median ms | Max ms |", "|---|---:|---|---:|---:|"]
    out += [f"| {row['input']} | {row['kb']} | {row['answer']} | {row['median_ms']:.0f} | "
            f"{row['max_ms']:.0f} |" for row in result.get("rows", [])]
    return out
