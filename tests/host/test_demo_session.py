"""`forge demo` end to end: the real host, the bundled script, the report a newcomer reads."""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys

import pytest

pytestmark = pytest.mark.host


def forge(*args, cwd, env=None):
    return subprocess.run([sys.executable, "-m", "forge_runtime", *args], cwd=cwd, env=env,
                          capture_output=True, text=True, timeout=120)


def test_demo_runs_a_real_goal_session_and_keeps_the_project(tmp_path, claude_bin):
    kept = tmp_path / "demo"
    done = forge("demo", "--keep", str(kept), "--json", cwd=tmp_path)

    assert done.returncode == 0, done.stdout + done.stderr
    report = json.loads(done.stdout)
    assert report["_hint"] == {"marker": "Done", "rationale": f"the demo project is kept in {kept}"}
    goal = report["sessions"]["goal"]
    assert goal["terminal_reason"] == "completed"
    assert set(goal["hooks"]) == {"SessionStart", "UserPromptSubmit", "PreToolUse", "Stop",
                                  "SessionEnd"}
    titles = [section["title"] for section in report["sections"]]
    assert titles[1] == "A person types: /goal the file done.txt exists"
    assert titles[-1] == "Every forge output ends with one next step"
    recorded = "\n".join(report["sections"][2]["lines"])
    assert "turns charged 2 of 20" in recorded
    assert "priced $0.0" in recorded and "at API prices (genai-prices " in recorded
    budget = "\n".join(report["sections"][3]["lines"])
    assert titles[3] == "A goal that is never met: /goal every test passes on the first try"
    assert "20 of 20 turns, status exhausted" in budget
    assert "FORGE_GOAL_BUDGET_EXHAUSTED" in budget and "stop_hook_prevented" in budget
    assert "Next: /goal every test passes on the first try" in budget
    assert "Checkpoint: 1 of 3 steps done; next unchecked step: fix the parser" in budget
    assert re.search(r"20/20 ([·-]) [0-9.]+k tok \1 1/3 steps \1 budget spent \1 next: fix "
                     r"the parser", budget), budget
    follows = "\n".join(report["sections"][4]["lines"])
    assert titles[4] == "The budget follows the goal to a fresh clone"
    assert "used 40 of 40 turns (2 x 20)" in follows and "count from  the remote" in follows
    money = "\n".join(report["sections"][5]["lines"])
    assert titles[5] == "Money and the plan's allowance"
    assert "FORGE_GOAL_BUDGET_EXHAUSTED: the first turn of /goal the cost report is written " \
           "spent $1." in money and "of $1.00 (the dollar ceiling)" in money
    assert "the goal is exhausted there" in money
    assert "usage limit the host stopped a turn for its plan's usage limit" in money
    guard = "\n".join(report["sections"][6]["lines"])
    assert "the clarifier role may not use Write" in guard
    assert "Bash deletes the goal ledger" in guard
    assert titles[7] == "/forge:clarify: a frozen brief before the work"
    clarify = "\n".join(report["sections"][7]["lines"])
    assert "Next: /goal every acceptance criterion of the brief holds: report --csv writes " \
           "report.csv; its header names every column" in clarify
    assert "forge brief show -> Next" in "\n".join(report["sections"][-1]["lines"])
    earned = "\n".join(report["sections"][8]["lines"])
    assert titles[8] == "A PRD earns its activation with evidence"
    assert "Error: PRD-001 has R_eff 0" in earned and "active, R_eff 1.00" in earned
    gates = "\n".join(report["sections"][9]["lines"])
    assert "docs stale, result fresh" in gates and "Next: forge gate run docs" in gates
    verified = "\n".join(report["sections"][10]["lines"])
    assert titles[10] == "Done means verified: /goal the parser is fixed"
    assert "unit-tests never-run" in verified and "Next: forge gate run unit-tests" in verified
    assert "FORGE_GOAL_VERIFIED: goal " in verified and "verify-gates` exits 0" in verified
    team = "\n".join(report["sections"][-2]["lines"])
    assert titles[-2] == "A team's goals through the git remote"
    assert re.search(r"    Ada <ada@example\.com>  \d+ goal\(s\) · \d+ turns · ", team), team
    assert re.search(r"    Ben <ben@example\.com>  1 goal\(s\) · 20 turns · ", team), team
    assert "by Ada <ada@example.com>, Ben <ben@example.com>  on main" in team
    assert "the same " in team and " turns the two ledgers count" in team
    assert "forge goal report --remote origin --html " in "\n".join(
        report["sections"][-1]["lines"])
    truth = "\n".join(report["sections"][titles.index("The host's truth")]["lines"])
    assert "every surface is classified by forge's host contract" in truth
    assert "status cancelled (ended: impossible), 1 turn charged" in truth
    told = "\n".join(report["sections"][-3]["lines"])
    assert titles[-3] == "A goal's end reaches the person, wherever they are"
    assert "Title: forge: goal stopped at the usage limit · Priority: high" in told
    assert "Ended: usage limit (FORGE_GOAL_USAGE_LIMIT)" in told
    assert "Next: /goal the weekly report is sent" in told
    assert "`forge notify test` sends a sample through every channel: sent    webhook " in told
    project = kept / "project"
    assert (project / "done.txt").read_text() == "done\n"
    assert (project / ".forge" / "local" / "state.md").is_file()
    assert any((project / ".git" / "forge-goals").iterdir())
    assert (project / ".forge" / "notes" / "brief.md").is_file()


def test_demo_text_report_ends_with_a_hint_and_leaves_nothing_behind(tmp_path, claude_bin):
    temp = tmp_path / "tmp"
    temp.mkdir()
    done = forge("demo", cwd=tmp_path, env={**os.environ, "TMPDIR": str(temp)})

    assert done.returncode == 0, done.stdout + done.stderr
    lines = done.stdout.splitlines()
    assert lines[0].startswith("forge demo: the real Claude Code 2.1.")
    assert lines[-2:] == ["Next: forge demo --keep forge-demo",
                          "  run it again and keep the project to look inside"]
    assert "forge's hooks fired with the host's real input" in done.stdout
    assert "temporary directory" in done.stdout
    assert list(temp.iterdir()) == []


def test_without_a_checkout_the_demo_builds_a_plugin_the_host_loads(
        tmp_path, claude_bin, claude_host, project, monkeypatch):
    from forge_runtime import resources

    monkeypatch.setattr(resources, "plugin_root", lambda: None)  # as in a wheel install
    built = resources.host_plugin_dir(tmp_path)
    host = claude_host({"rules": [{"reply": {"text": "hi"}}]}, plugin_dirs=[built])
    session = host.run("hi", cwd=project)

    assert session.plugin_errors() == []
    assert [p["path"] for p in session.init["plugins"] if p["name"] == "forge"] == [str(built)]
    assert [h.event for h in session.hooks] == ["SessionStart", "UserPromptSubmit", "Stop",
                                                "SessionEnd"]
