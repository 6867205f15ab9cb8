"""`forge goal ...` and `forge ledger ...`: hinted output, exit 2 when the ledger is not sound."""

from __future__ import annotations

import json
import subprocess
import sys

from goal_support import Session, goal_project_fixture, run_cli

from forge_runtime import hints
from forge_runtime.cli.main import main, parses
from forge_runtime.goal.store import sessions, state_file

OBJECTIVE = "the parser passes its tests"


project = goal_project_fixture(cli=True)


def _json(capsys, *argv) -> tuple[int, dict]:
    code = main([*argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def _hint_commands(text: str) -> list[str]:
    return [rest for marker, rest in hints.parse_lines(text)
            if marker in ("Next", "Or", "Fix") and rest.startswith("forge ")]


def _session(project, turns: int) -> Session:
    session = Session(project)
    session.person_goal(OBJECTIVE)
    for _ in range(turns):
        session.turn()
    return session


def test_status_without_a_goal_waits_for_a_person(project, capsys):
    code, text = run_cli(capsys, "goal", "status")
    assert code == 0
    assert text.splitlines()[-1] == "Wait: a person runs /goal with an objective in Claude Code"


def test_status_shows_the_budget_and_hints_real_commands(project, capsys):
    _session(project, 3)
    code, text = run_cli(capsys, "goal", "status")
    assert code == 0
    assert "turns       3 of 20 (1 activation(s) x 20)" in text
    nonce = state_file.read(project.state_path).goal["nonce"]
    assert f"Or: forge goal history --nonce {nonce}" in text
    assert all(parses(command) for command in _hint_commands(text))
    code, data = _json(capsys, "goal", "status")
    assert data["goal"]["turn_count"] == 3 and data["_hint"]["marker"] == "Wait"
    assert data["brief"] is None and "brief " not in text  # a goal typed by hand


def test_status_names_the_frozen_brief_the_goal_started_from(project, capsys):
    from forge_runtime.clarify.brief import Brief
    from forge_runtime.clarify.store import brief_path, freeze

    brief = Brief.parse("Goal: g\nAcceptance criteria:\n- the parser passes\nScope: parser\n"
                        "Assumptions: none\n")
    freeze(brief, brief_path(project.forge_dir))
    session = Session(project)
    session.person_goal(brief.goal_condition)
    session.turn()
    code, text = run_cli(capsys, "goal", "status")
    assert code == 0 and "brief       .forge/notes/brief.md" in text
    freeze(brief.amended("and the lexer"), brief_path(project.forge_dir), new=True)
    assert "brief       .forge/notes/brief.md" in run_cli(capsys, "goal", "status")[1]
    freeze(Brief.parse(str(brief.to_markdown()).replace("- the parser passes", "- other")),
           brief_path(project.forge_dir), new=True)
    code, data = _json(capsys, "goal", "status")
    assert data["brief"] == ".forge/notes/brief.2.md"


def test_status_of_an_exhausted_goal_names_the_way_on_as_the_stop_hook_does(project, capsys):
    session = _session(project, 20)
    code, text = run_cli(capsys, "goal", "status")
    assert text.splitlines()[-3:] == [f"Next: /goal {OBJECTIVE}",
                                      "  adds one more tranche of 20 turns", "Or: /goal clear"]
    assert text.splitlines()[-3:] == session.stop()["stopReason"].splitlines()[-3:]


def test_sync_catches_a_lagging_state_up(project, capsys):
    _session(project, 4)
    parsed = state_file.read(project.state_path)
    project.state_path.write_text(state_file.render({**parsed.goal, "turn_count": 3}, parsed.body))
    code, text = run_cli(capsys, "goal", "status")
    assert code == 0 and "Next: forge goal sync --nonce" in text
    assert run_cli(capsys, "goal", "sync")[0] == 0
    assert state_file.read(project.state_path).goal["turn_count"] == 4
    assert state_file.read(project.state_path).body == parsed.body


def test_a_reduced_count_is_refused_with_exit_2_and_sync_restores_the_ledgers(project, capsys):
    _session(project, 6)
    parsed = state_file.read(project.state_path)
    project.state_path.write_text(state_file.render({**parsed.goal, "turn_count": 1}, parsed.body))
    code, text = run_cli(capsys, "goal", "status")
    assert code == 2 and "FORGE_GOAL_LEDGER_TAMPERED" in text
    assert text.splitlines()[-1].startswith("Fix: forge goal sync --nonce ")
    assert run_cli(capsys, "goal", "sync")[0] == 0
    assert state_file.read(project.state_path).goal["turn_count"] == 6


def test_verify_and_history_read_the_whole_chain(project, capsys):
    session = _session(project, 2)
    code, text = run_cli(capsys, "goal", "verify")
    assert code == 0 and text.splitlines()[-2:] == ["Done.", "  1 goal ledger(s) verified"]
    code = main(["goal", "history", "--json"])
    records = json.loads(capsys.readouterr().out)
    assert [r["kind"] for r in records] == ["activate", "charge", "charge"]
    nonce = sessions.read_binding(project.ledger_root, session.id)["nonce"]
    record = project.ledger_root / nonce / "records" / "00000002.json"
    record.write_text(record.read_text().replace('"charge"', '"bind"'))
    code, text = run_cli(capsys, "goal", "verify")
    assert code == 2
    assert text.splitlines()[-2].startswith("Error: FORGE_GOAL_LEDGER_TAMPERED: goal ")
    assert text.splitlines()[-1] == "Fix: forge goal verify"
    assert run_cli(capsys, "ledger", "verify")[0] == 2


def test_ledger_activate_qualifies_and_never_activates(project, capsys):
    code, text = run_cli(capsys, "ledger", "activate", "--project", str(project.root),
                      "--state", ".forge/local/state.md")
    assert code == 0 and "qualified" in text
    assert not project.state_path.exists()


def test_ledger_charge_charges_a_bound_session_but_never_confirms_a_pending_goal(project,
                                                                                capsys):
    session = _session(project, 1)
    session._append({"type": "assistant", "message": {}})
    code, _ = run_cli(capsys, "ledger", "charge", "--session", session.id, "--transcript",
                   str(session.transcript))
    assert code == 0 and state_file.read(project.state_path).goal["turn_count"] == 2
    other = Session(project)
    other.person_goal("another objective")
    code, _ = run_cli(capsys, "ledger", "charge", "--session", other.id, "--transcript",
                   str(other.transcript))
    assert state_file.read(project.state_path).goal["objective"] == OBJECTIVE


def test_ledger_charge_at_the_ceiling_says_what_the_stop_hook_says(project, capsys):
    from forge_runtime.hint_audit import output_problems

    session = _session(project, 19)
    session._append({"type": "assistant", "message": {}})
    code, text = run_cli(capsys, "ledger", "charge", "--session", session.id, "--transcript",
                      str(session.transcript))
    reason = session.stop()["stopReason"]
    assert code == 2 and text.rstrip("\n") == reason
    assert output_problems(text) == []
    code, payload = _json(capsys, "ledger", "charge", "--session", session.id, "--transcript",
                          str(session.transcript))
    assert code == 2 and payload["_next_action"] == f"/goal {OBJECTIVE}"


def test_the_shell_wrapper_reaches_the_same_implementation(project):
    from forge_runtime import resources

    wrapper = resources.bundle_root() / "hooks" / "lib" / "goal-ledger.sh"
    done = subprocess.run([str(wrapper), "activate", "--project", str(project.root), "--state",
                           ".forge/local/state.md"], capture_output=True, text=True,
                          env={"FORGE_PYTHON": sys.executable, "PATH": "/usr/bin:/bin"})
    assert done.returncode == 0, done.stderr
    assert done.stdout.splitlines()[-1].startswith("Wait: ")


def test_status_of_a_goal_whose_work_tree_follows_another_goal_says_so(project, capsys):
    from forge_runtime.goal.rules import activation

    first = activation.activate(project, "ship the parser").goal
    activation.activate(project, "ship the lexer")  # another session's /goal, same work tree
    code, out = run_cli(capsys, "goal", "status", "--nonce", first["nonce"])
    assert code == 2
    error, fix = out.rstrip().splitlines()[-2:]
    assert error.startswith("Error: FORGE_GOAL_WORKTREE_TAKEN: state.md follows goal ")
    assert "'ship the lexer'" in error
    assert fix == "Fix: /goal ship the parser"
