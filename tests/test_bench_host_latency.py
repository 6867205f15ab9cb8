"""The host-latency mode's parts: reading hook times out of Claude Code's debug log, the
reference plugin, and the table. The log excerpt is a real one (Claude Code 2.1.332, its
paths replaced); the mode itself runs against the real host in tests/host/.
"""

from __future__ import annotations

import json
from pathlib import Path

from bench import host_latency, report
from bench.hostlog import HookRun, hook_runs

ROOT = Path(__file__).resolve().parent.parent
EXCERPT = Path(__file__).parent / "data" / "claude-code-2.1.332-debug-excerpt.log"


def test_every_finished_hook_is_read_with_its_event_matcher_plugin_status_and_time():
    runs = hook_runs(EXCERPT.read_text(encoding="utf-8"))

    assert [(run.name, run.plugin, run.status, run.ms) for run in runs] == [
        ("SessionStart:startup", "forge", 0, 264),
        ("UserPromptSubmit", "forge", 0, 219),
        ("PostToolUse:Agent", "forge", 0, 224),
        ("Stop", "forge", 0, 118),
        ("UserPromptSubmit", "probe", 1, 144),
        ("UserPromptSubmit", "probe", 0, 221),
        ("UserPromptSubmit", "probe", 0, 472),
        ("PreToolUse:Bash", "probe", None, 1026),
        ("PreToolUse:Read", "bare-python", 0, 370),
    ]
    assert runs[0].command == "/opt/plugins/forge/hooks/forge-hook SessionStart"
    assert runs[0].at == "2026-12-01T13:04:06.450Z"
    assert runs[-1].command == \
        "/opt/lean-env/bin/python -I -c import sys; sys.stdin.buffer.read()"


def test_lines_that_only_look_like_hooks_are_not_timings():
    text = EXCERPT.read_text(encoding="utf-8")
    found = {run.event for run in hook_runs(text)}
    # the host's native modules ("hooks module ... settled in 12.7ms"), its polling line and
    # the SessionEnd line (no duration) all mention hooks; none is a hook run
    assert "hooks module" in text and "checkForNewResponses" in text and "SessionEnd" in text
    assert "SessionEnd" not in found
    assert len(hook_runs(text)) == text.count("finished with status") + \
        text.count(") timed out after")


def test_windows_line_ends_and_a_command_with_brackets_still_parse():
    line = ("2026-12-01T13:04:06.450Z [DEBUG] Hooks: PreToolUse:Bash [/p [x] (y)/hook "
            "PreToolUse] (plugin forge@inline) finished with status 2 (7ms)\r\n")
    (run,) = hook_runs(line)
    assert (run.command, run.status, run.ms) == ("/p [x] (y)/hook PreToolUse", 2, 7)


def test_the_reference_plugin_has_forges_events_matchers_and_timeouts_in_exec_form(tmp_path):
    forge_hooks = ROOT / "hooks" / "hooks.json"
    plugin = host_latency.bare_plugin(tmp_path / "bare", "/opt/py", forge_hooks)

    forge = json.loads(forge_hooks.read_text())["hooks"]
    bare = json.loads((plugin / "hooks" / "hooks.json").read_text())["hooks"]
    manifest = json.loads((plugin / ".claude-plugin" / "plugin.json").read_text())
    assert manifest["name"] == host_latency.BARE_NAME
    assert bare.keys() == forge.keys()
    for event, groups in forge.items():
        assert [g.get("matcher") for g in bare[event]] == [g.get("matcher") for g in groups]
        for forge_group, bare_group in zip(groups, bare[event], strict=True):
            for forge_hook, bare_hook in zip(forge_group["hooks"], bare_group["hooks"],
                                             strict=True):
                assert bare_hook["command"] == "/opt/py"
                assert bare_hook["args"] == ["-I", "-c", host_latency.BARE_CODE]
                assert {k: v for k, v in bare_hook.items() if k not in ("command", "args")} \
                    == {k: v for k, v in forge_hook.items() if k not in ("command", "args")}


def _run(name: str, ms: int) -> HookRun:
    event, _, query = name.partition(":")
    return HookRun(event, query, "cmd", "p", 0, ms, "t")


def test_the_table_has_a_row_per_event_and_per_tool_of_pretooluse():
    forge = [_run("SessionStart:startup", 300), _run("PreToolUse:Read", 60),
             _run("PreToolUse:Bash", 90), _run("PreToolUse:Bash", 110),
             _run("Stop", 40)]
    bare = [_run("SessionStart:startup", 100), _run("PreToolUse:Read", 30),
            _run("PreToolUse:Bash", 50), _run("Stop", 20)]
    rows = {row["hook"]: row for row in host_latency.summarise(forge, bare)}

    assert list(rows) == ["SessionStart", "UserPromptSubmit", "PreToolUse", "PreToolUse:Read",
                          "PreToolUse:Bash", "PostToolUse", "Stop"]
    assert rows["SessionStart"] == {
        "hook": "SessionStart", "forge_median_ms": 300, "bare_median_ms": 100, "ratio": 3.0,
        "over_bare_ms": 200, "forge_samples": 1, "bare_samples": 1}
    assert (rows["PreToolUse"]["forge_median_ms"], rows["PreToolUse"]["bare_median_ms"]) \
        == (90, 40)
    assert rows["PreToolUse:Bash"]["forge_samples"] == 2
    assert rows["PostToolUse"]["ratio"] is None and rows["PostToolUse"]["forge_samples"] == 0
    table = host_latency.table({"rows": list(rows.values())})
    assert table[2] == "| SessionStart | 300.0 | 100.0 | 3.00 | +200.0 | 1 / 1 |"
    assert "| PostToolUse | - | - | - | - | 0 / 0 |" in table


def test_nothing_measured_gives_a_reason_and_no_table():
    result = {"status": "not available", "reason": "no Claude Code binary"}
    assert host_latency.table(result) == []
    assert host_latency.line(result) == \
        "Host-measured latency: not available: no Claude Code binary"


def test_the_report_prints_and_writes_the_host_table(tmp_path):
    rows = host_latency.summarise([_run("Stop", 40)], [_run("Stop", 20)])
    result = {"status": "measured", "sessions": 3, "warmup": 1, "host_version": "2.1.332",
              "isolation": "none", "session_wall_ms": {"forge": 4000.0, "bare-python": 3000.0},
              "interpreter": {"python": "3.11.7", "implementation": "CPython"}, "rows": rows}
    done = report.Report([], mode="full", runs=1, warmup=0, host_latency=result)

    printed = report.text(done)
    assert "3 Claude Code 2.1.332 sessions" in printed
    assert any(line.split() == ["Stop", "40.0", "20.0", "2.00", "+20.0", "1", "/", "1"]
               for line in printed.splitlines())
    assert "| Stop | 40.0 | 20.0 | 2.00 | +20.0 | 1 / 1 |" in report.markdown(done)
    report.write_json(done, tmp_path / "results.json")
    written = json.loads((tmp_path / "results.json").read_text())["host_latency"]
    assert written["rows"] == rows and written["session_wall_ms"]["forge"] == 4000.0
