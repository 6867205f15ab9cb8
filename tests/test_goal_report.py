"""`forge goal report`, and tokens in `forge goal status` and `history` (goal/views/report.py)."""

from __future__ import annotations

import json

from goal_support import Session, goal_project_fixture, run_cli

from forge_runtime.cli.main import main
from forge_runtime.goal.views import report

OBJECTIVE = "the parser passes its tests"


project = goal_project_fixture(cli=True)


def _spend(session: Session, message_id: str, model: str, **api) -> None:
    session._append({"type": "assistant", "message": {
        "id": message_id, "model": model, "role": "assistant", "stop_reason": "end_turn",
        "usage": api, "content": [{"type": "text", "text": "working"}]}})


def _goal_that_spent_its_tokens(project) -> Session:
    (project.root / ".forge").mkdir(exist_ok=True)
    (project.root / ".forge" / "guard.yaml").write_text(
        "goal: {require_sandbox: false, tranche: {tokens: 2000}}\n")
    session = Session(project)
    session.person_goal(OBJECTIVE)
    _spend(session, "m1", "claude-big", input_tokens=1200, cache_read_input_tokens=3000)
    session.stop()
    session.work()  # a turn whose own Stop died: charged late by the next one
    _spend(session, "m2", "claude-small", output_tokens=500)
    session.stop()
    return session


def test_report_tells_the_goals_story_with_each_turns_tokens(project, capsys):
    _goal_that_spent_its_tokens(project)
    code, text = run_cli(capsys, "goal", "report")
    assert code == 0, text
    lines = text.splitlines()
    assert lines[2].startswith("status      exhausted at 3 of 20 turns, 2k tokens counted, $")
    assert lines[3].startswith("prices      genai-prices ")
    assert lines[4].startswith("tranche 1   from ") and "3 turns · 2k tok · $" in lines[4]
    assert "(ceilings: 2k tok)" in lines[4]
    assert " 1.5k tok  " in lines[5] and lines[6].endswith("charged late")
    assert " 500 tok  " in lines[7]
    assert lines[8] == "  exhausted on its tokens ceiling (1 late)"
    # claude-big is no model genai-prices knows: priced as the dearest Claude
    assert any(line.startswith("claude-big  1.2k in · 0 out · 0 cache write · 3k cache read · $")
               for line in lines)
    assert lines[-1] == "Or: /goal clear"


def test_report_json_holds_the_tranches_turns_and_models(project, capsys):
    _goal_that_spent_its_tokens(project)
    assert main(["goal", "report", "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    (tranche,) = data["tranches"]
    assert [(turn["tokens"], turn["late"]) for turn in tranche["turns"]] == \
        [(1500, False), (0, True), (500, False)]
    assert tranche["ended"]["how"] == "exhausted" and tranche["ended"]["ceiling"] == "tokens"
    assert data["by_model"]["claude-small"]["output"] == 500
    assert data["_next_action"]


def test_status_and_history_show_tokens_per_goal_model_and_run(project, capsys):
    _goal_that_spent_its_tokens(project)
    code, text = run_cli(capsys, "goal", "status")
    assert "tokens      2k of 2k (input, output and cache writes; cache reads at a tenth)" \
        in text
    assert "model       claude-small  0 in · 500 out · 0 cache write · 0 cache read" in text
    assert "adds one more tranche of 20 turns and 2k tokens" in text
    main(["goal", "status", "--json"])
    budget = json.loads(capsys.readouterr().out)["budget"]
    assert budget["tokens"] == {"used": 2000, "ceiling": 2000}
    code, text = run_cli(capsys, "goal", "history")
    assert "turn 1, 1.5k tok" in text and "turn 2, charged late\n" in text
    assert "budget spent (tokens)" in text


def test_a_story_without_usage_reads_as_before():
    records = [{"kind": "activate", "at": "2026-01-01T00:00:00Z", "goal": {
        "activation_count": 1, "turn_count": 0, "turn_ceiling": 20}},
        {"kind": "charge", "at": "2026-01-01T00:05:00Z", "goal": {
            "activation_count": 1, "turn_count": 1, "turn_ceiling": 20}}]
    told = report.story(records)
    assert told["tranches"][0]["minutes"] == 5 and told["tranches"][0]["tokens"] == 0
    assert told["by_model"] == {}


def test_the_page_draws_each_running_total_against_the_ceiling_it_had(project, capsys,
                                                                       tmp_path):
    """Where the goal stopped is seen: the token line meets its dashed ceiling at
    the last record, and a ceiling the goal never had (dollars) gets no chart."""
    import re
    import shutil
    import subprocess

    _goal_that_spent_its_tokens(project)
    page = tmp_path / "goal.html"
    assert main(["goal", "report", "--html", str(page), "--json"]) == 0
    data = json.loads(capsys.readouterr().out)
    assert [point["tokens"] for point in data["running"]][-1] == [2000, 2000]
    chromium = shutil.which("chromium") or shutil.which("chromium-browser")
    assert chromium, "needs chromium (.ci/run installs it)"
    dom = subprocess.run([chromium, "--headless", "--no-sandbox", "--disable-gpu",
                          "--no-first-run", "--disable-background-networking",
                          f"--user-data-dir={tmp_path / 'profile'}", "--dump-dom",
                          page.as_uri()], capture_output=True, text=True, timeout=120,
                         check=True).stdout
    charts = dict(re.findall(r'<h3 id="ceiling-([a-z-]+)">[^<]*</h3>(<svg.*?</svg>)', dom))
    assert set(charts) == {"turns", "tokens"}
    tokens = charts["tokens"]
    total = re.search(r'<polyline points="([^"]+)" class="total"', tokens).group(1).split()
    limit = re.search(r'<polyline points="([^"]+)" class="limit"', tokens).group(1).split()
    assert total[-1] == limit[-1]  # the last record's total is on its ceiling: it stopped there
    assert "2k of 2k</text>" in tokens and "exhausted on its tokens ceiling" in tokens
    assert "3 of 20</text>" in charts["turns"]
