"""The status line as the host runs it (`python -P -c <forge's entry>`), JSON on stdin.

Every case runs the real process: what matters is what lands on a person's screen (stdout),
that nothing else does (stderr, a traceback), and that the exit status is 0.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import sys
import time

import pytest
from goal_support import Session, goal_project, goal_with_checklist

from forge_runtime.goal.store import layout, sessions, state_file
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.statusline_settings import ENTRY

OBJECTIVE = "the CSV importer handles quoted commas"
CHECKLIST = ("- [x] read the CSV spec\n- [x] write the tests\n- [ ] parse the header row\n"
             "- [ ] handle quoted commas\n")
ATTENTION = "forge: ledger needs attention\n"


@pytest.fixture
def project(tmp_path, monkeypatch):
    return goal_project(tmp_path, monkeypatch, sandboxed=True)


def _environment(**extra: str) -> dict[str, str]:
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("CLAUDE", "LC_", "NO_COLOR"))}
    return {**env, "LANG": "C.UTF-8", "TERM": "xterm-256color", "NO_COLOR": "1", **extra}


def statusline(stdin: bytes | dict, cwd, *args: str, **env: str) -> str:
    """Run the status line as the host does (CLAUDE_PROJECT_DIR names the project unless
    `CLAUDE_PROJECT_DIR=None`); its stdout (stderr must stay empty)."""
    raw = json.dumps(stdin).encode() if isinstance(stdin, dict) else stdin
    environment = _environment(**{"CLAUDE_PROJECT_DIR": str(cwd), **env})
    for name in [name for name, value in env.items() if value is None]:
        del environment[name]
    done = subprocess.run([sys.executable, "-P", "-c", ENTRY, *args],
                          input=raw, cwd=cwd, env=environment, capture_output=True,
                          timeout=60)
    assert (done.returncode, done.stderr) == (0, b"")
    return done.stdout.decode()


def host_input(session: Session) -> dict:
    """The fields Claude Code 2.1.332 sends a status line (measured; cost and context cut)."""
    root = str(session.project.root)
    return {"session_id": session.id, "transcript_path": str(session.transcript), "cwd": root,
            "model": {"id": "claude-opus-5-5", "display_name": "Opus 5.5"},
            "workspace": {"current_dir": root, "project_dir": root, "added_dirs": []},
            "version": "2.1.332", "output_style": {"name": "default"}}


def running(project, turns: int = 3, checklist: str = CHECKLIST) -> Session:
    return goal_with_checklist(project, OBJECTIVE, turns, checklist)


def test_a_running_goal_shows_its_gauge_numbers_and_next_step(project):
    session = running(project, 3)
    line = "forge ▰▱▱▱▱▱▱▱▱▱ 3/20 · 2/4 steps · next: parse the header row\n"
    assert statusline(host_input(session), project.root) == line
    assert statusline(host_input(session), project.root, CLAUDE_PROJECT_DIR=None) == line
    for _ in range(9):
        session.turn()
    assert statusline(host_input(session), project.root).startswith(
        "forge ▰▰▰▰▰▰▱▱▱▱ 12/20 · ")


def test_without_a_utf8_locale_the_gauge_is_ascii(project):
    session = running(project, 3)
    assert statusline(host_input(session), project.root, LANG="C") == \
        "forge [#---------] 3/20 - 2/4 steps - next: parse the header row\n"
    assert statusline(host_input(session), project.root, LANG="en_US.ISO-8859-1") \
        .startswith("forge [#---------] 3/20")


def test_colour_unless_no_color_or_a_dumb_terminal(project):
    session = running(project, 3)
    coloured = statusline(host_input(session), project.root, NO_COLOR=None)
    assert coloured.startswith("forge \x1b[32m▰▱▱▱▱▱▱▱▱▱\x1b[0m 3/20")
    assert "\x1b" not in statusline(host_input(session), project.root, NO_COLOR=None,
                                    TERM="dumb")
    assert "\x1b" not in statusline(host_input(session), project.root)


def test_a_spent_budget_a_stuck_goal_and_a_met_goal_say_so(project):
    session = running(project, 7)  # five charged turns since the checklist last changed
    assert "· stuck 5 turns · next: parse the header row" in \
        statusline(host_input(session), project.root)
    for _ in range(13):
        session.turn()
    assert statusline(host_input(session), project.root) == (
        "forge ▰▰▰▰▰▰▰▰▰▰ 20/20 · 2/4 steps · budget spent · next: parse the header row\n")
    other = Session(project)
    other.person_goal("a second objective")
    other.turn()
    other.verdict(met=True, condition="a second objective", reason="done")
    other.prompt("thanks")
    assert statusline(host_input(other), project.root) == "forge ✔ goal met · 1/20 turns\n"


def test_a_goal_on_its_tranches_last_turn_says_so(project):
    session = running(project, 18)
    assert "last turn" not in statusline(host_input(session), project.root)
    session.turn()
    assert statusline(host_input(session), project.root) == (
        "forge ▰▰▰▰▰▰▰▰▰▱ 19/20 · last turn · 2/4 steps · stuck 17 turns · "
        "next: parse the header row\n")


@pytest.mark.parametrize("stdin", [
    b"", b"not json", b"[1, 2]", b'{"session_id": 5}', b'{"cwd": "/"}', b"\xff\xfe{",
    b'{"session_id": "../../etc", "cwd": 7}', b'{"session_id": "s", "cwd": "\\u0000"}',
    b"{" * 100_000,
], ids=["empty", "text", "array", "id-not-text", "no-id", "not-utf8", "bad-cwd", "nul-cwd",
        "deep"])
def test_malformed_input_shows_nothing_and_no_error(project, stdin):
    running(project, 1)
    assert statusline(stdin, project.root) == ""


def test_no_project_shows_nothing_and_creates_nothing(tmp_path):
    bare = tmp_path / "not-a-project"
    bare.mkdir()
    event = {"session_id": "9c0b0d1e-session", "cwd": str(bare)}
    assert statusline(event, bare) == ""
    assert statusline(event, bare, CLAUDE_PROJECT_DIR=None) == ""
    assert list(bare.iterdir()) == []


def test_a_session_without_a_goal_shows_nothing_beside_another_sessions_goal(project):
    running(project, 2)
    stranger = Session(project)
    assert statusline(host_input(stranger), project.root) == ""
    assert statusline(host_input(stranger), project.root, CLAUDE_PROJECT_DIR=None) == ""


@pytest.mark.parametrize("tamper", ["record", "head", "state", "binding", "ledger-gone"])
def test_a_tampered_ledger_shows_the_attention_line_and_never_an_error(project, tamper):
    session = running(project, 3)
    nonce = state_file.read(project.state_path).goal["nonce"]
    goal_dir = project.ledger_root / nonce
    if tamper == "record":
        record = goal_dir / "records" / "00000003.json"
        record.write_text(record.read_text().replace('"charge"', '"bind"'))
    elif tamper == "head":
        (goal_dir / "head.json").write_text("{}")
    elif tamper == "state":
        project.state_path.write_text(project.state_path.read_text().replace(
            '"turn_count": 3', '"turn_count": 0'))
    elif tamper == "binding":
        binding = project.ledger_root / layout.SESSIONS_DIR / f"{session.id}.json"
        binding.write_text('{"nonce": "../../../somewhere"}')
    else:
        import shutil

        shutil.rmtree(goal_dir)
    assert statusline(host_input(session), project.root) == ATTENTION


def test_the_persons_own_status_line_is_kept_and_gets_the_same_input(project):
    session = running(project, 3)
    own = (f"{shlex.quote(sys.executable)} -c \"import json, sys; "
           f"print('mine:', json.load(sys.stdin)['model']['display_name'])\"")
    assert statusline(host_input(session), project.root, "--wrap", own) == \
        "mine: Opus 5.5  forge ▰▱▱▱▱▱▱▱▱▱ 3/20 · 2/4 steps · next: parse the header row\n"
    two_lines = "printf 'first\\nsecond\\n'"
    assert statusline(host_input(session), project.root, "--wrap", two_lines) == \
        "first\nsecond  forge ▰▱▱▱▱▱▱▱▱▱ 3/20 · 2/4 steps · next: parse the header row\n"
    stranger = Session(project)  # no goal: the person's line exactly as their command prints it
    assert statusline(host_input(stranger), project.root, "--wrap", own) == "mine: Opus 5.5\n"
    assert statusline(b"not json", project.root, "--wrap", "echo still mine") == \
        "still mine\n"


def test_a_failing_own_command_leaves_forges_part(project):
    session = running(project, 3)
    assert statusline(host_input(session), project.root, "--wrap", "exit 3").startswith(
        "forge ▰▱▱▱▱▱▱▱▱▱ 3/20")


def test_the_status_line_changes_nothing_on_disk(project):
    session = running(project, 3)
    ledger = Ledger(project.ledger_root, state_file.read(project.state_path).goal["nonce"])

    def snapshot() -> dict:
        return {path: path.read_bytes() for path in project.root.rglob("*") if path.is_file()}

    before = snapshot()
    statusline(host_input(session), project.root)
    assert snapshot() == before and ledger.verified()["turn_count"] == 3


# -- the plan's windows: kept for the hooks, shown on the gauge ----------------------------------

FIVE_RESETS = int(time.time()) + 3 * 3600  # windows that last beyond the test
WEEK_RESETS = FIVE_RESETS + 6 * 86400


def plan_input(session: Session, five_hour=62.5, seven_day=30, api_ms=1234) -> dict:
    """What the host sends on a subscription login once it has had an answer (measured on
    2.1.332: `rate_limits` from the answers' rate-limit headers, `cost` of this process)."""
    limits = {name: {"used_percentage": used, "resets_at": resets}
              for name, used, resets in (("five_hour", five_hour, FIVE_RESETS),
                                         ("seven_day", seven_day, WEEK_RESETS))
              if used is not None}
    return {**host_input(session), "cost": {"total_cost_usd": 0.01,
                                            "total_api_duration_ms": api_ms},
            **({"rate_limits": limits} if limits else {})}


def kept(project, session: Session) -> dict | None:
    from forge_runtime.goal.hosts import plan_readings

    return plan_readings.latest(str(project.ledger_root), session.id)


def test_a_goal_sessions_plan_windows_are_kept_for_the_hooks_newest_first(project):
    session = running(project, 3)
    before = int(time.time())
    statusline(plan_input(session), project.root)
    reading = kept(project, session)
    assert reading["windows"] == {"five_hour": {"used": 6250, "resets_at": FIVE_RESETS},
                                  "seven_day": {"used": 3000, "resets_at": WEEK_RESETS}}
    assert reading["host"] == "claude" and before <= reading["at"] <= time.time()
    statusline(plan_input(session, five_hour=81, seven_day=None), project.root)
    assert kept(project, session)["windows"] == {  # a window the host no longer reports is gone
        "five_hour": {"used": 8100, "resets_at": FIVE_RESETS}}


def test_a_pending_goal_keeps_them_and_a_session_without_a_goal_writes_nothing(project):
    from forge_runtime.roots import witness_dir

    pending = Session(project)
    pending.person_goal(OBJECTIVE)  # typed; the goal starts at its first Stop
    assert sessions.involvement(project.ledger_root, pending.id) == {sessions.PENDING}
    assert statusline(plan_input(pending), project.root) == ""
    assert kept(project, pending)["windows"]["five_hour"]["used"] == 6250

    stranger = Session(project)
    assert statusline(plan_input(stranger), project.root) == ""
    assert kept(project, stranger) is None
    assert not any(stranger.id in path.name for path in project.ledger_root.rglob("*"))
    assert not any(stranger.id in name for _, _, names in os.walk(witness_dir())
                   for name in names)


def test_no_windows_are_kept_before_the_hosts_first_answer_and_none_after_it_say_so(project):
    """Before its first answer the host has read no headers on any login: that input says
    nothing; after it, an input without `rate_limits` is an API key's (measured)."""
    session = running(project, 3)
    statusline(plan_input(session, None, None, api_ms=0), project.root)
    assert kept(project, session) is None
    statusline(plan_input(session, None, None), project.root)
    assert kept(project, session)["windows"] == {}
    statusline(plan_input(session), project.root)
    statusline(plan_input(session, None, None, api_ms=0), project.root)  # a resumed process
    assert kept(project, session)["windows"]["five_hour"]["used"] == 6250


@pytest.mark.parametrize("where", ["store", "mirror"])
def test_a_kept_reading_changed_outside_forge_fails_closed_until_the_host_speaks(project,
                                                                                 where):
    from forge_runtime.errors import ForgeError
    from forge_runtime.roots import witness_dir

    session = running(project, 3)
    statusline(plan_input(session, five_hour=85), project.root)
    store = project.ledger_root / layout.SESSIONS_DIR / f"{session.id}.plan.json"
    mirror = os.path.join(witness_dir(), layout.PLAN_MIRROR_DIR, f"{session.id}.json")
    path = str(store) if where == "store" else mirror
    with open(path) as handle:
        text = handle.read()
    with open(path, "w") as handle:
        handle.write(text.replace('"used":8500', '"used":100').replace('"used": 8500',
                                                                         '"used": 100'))
    with pytest.raises(ForgeError, match="changed outside forge"):
        kept(project, session)
    statusline(plan_input(session, five_hour=85), project.root)  # the host's own figure again
    assert kept(project, session)["windows"]["five_hour"]["used"] == 8500


def test_the_gauge_shows_the_windows_the_goal_watches_with_the_newest_figures(project):
    (project.root / ".forge").mkdir(exist_ok=True)
    (project.root / ".forge" / "guard.yaml").write_text(
        "goal: {plan: {five_hour: 80, seven_day_spend: 10}}\n")
    session = Session(project)
    assert statusline(plan_input(session, five_hour=50, seven_day=30), project.root) == ""
    assert kept(project, session) is None  # no goal yet: nothing kept
    session.person_goal(OBJECTIVE)
    statusline(plan_input(session, five_hour=50, seven_day=30), project.root)  # pending
    assert session.turn() is None
    assert statusline(plan_input(session, five_hour=62.5, seven_day=33), project.root) == \
        "forge ▰▰▰▰▰▰▰▱▱▱ 1/20 · 5h 62.5%/80% · week 3%/10%\n"
    # the ledger has charged none of it yet: the gauge shows what the host reports now
    assert statusline(plan_input(session, five_hour=85, seven_day=33), project.root) == \
        "forge ▰▰▰▰▰▰▰▰▰▰ 1/20 · 5h 85%/80% · week 3%/10%\n"


def test_the_newest_answers_usage_and_every_window_shown_are_kept_beside_the_reading(project):
    """A tool call waits for a reading taken with its answer's usage (goal/hosts/plan_freshness.py);
    a window the host has shown once is one it reports (goal/hosts/unreported_windows.py)."""
    from forge_runtime.goal.hosts import plan_readings

    session = running(project, 3)
    usage = {"input_tokens": 1259, "output_tokens": 20, "cache_creation_input_tokens": 7,
             "cache_read_input_tokens": 900}
    statusline({**plan_input(session), "context_window": {"current_usage": usage,
                                                          "total_input_tokens": 2166}},
               project.root)
    noted = plan_readings.with_notes(str(project.ledger_root), session.id)
    assert noted[plan_readings.ANSWER] == [1259, 20, 7, 900]
    assert noted[plan_readings.REPORTED] == ["five_hour", "seven_day"]
    statusline(plan_input(session, seven_day=None), project.root)  # no answer in the input
    noted = plan_readings.with_notes(str(project.ledger_root), session.id)
    assert plan_readings.ANSWER not in noted
    assert noted[plan_readings.REPORTED] == ["five_hour", "seven_day"]
    assert kept(project, session) == plan_readings.bare(noted)  # a charge carries no notes


def test_the_plan_reading_is_kept_before_a_slow_status_line_of_the_persons_runs(project):
    """A goal's tool call waits for this reading (goal/hosts/plan_freshness.py); a person's own
    status line may take seconds."""
    session = running(project, 3)
    raw = json.dumps(plan_input(session)).encode()
    environment = _environment(CLAUDE_PROJECT_DIR=str(project.root))
    started = time.monotonic()
    slow = subprocess.Popen([sys.executable, "-P", "-c", ENTRY, "--wrap", "sleep 3; echo mine"],
                            stdin=subprocess.PIPE, stdout=subprocess.PIPE, cwd=project.root,
                            env=environment)
    slow.stdin.write(raw)
    slow.stdin.close()
    try:
        while kept(project, session) is None and time.monotonic() - started < 2.5:
            time.sleep(0.05)
        assert kept(project, session) is not None, "kept only after the person's command"
    finally:
        assert slow.wait(timeout=30) == 0
        slow.stdout.close()
    assert time.monotonic() - started >= 3
