"""`forge goal report --remote NAME`: a team's goals through the git remote.

A real bare repository and three real clones of it, two people's: Ann's clone, and Bob's
two (one on a feature branch, one on another host). Goals are started, charged, ended and
published the way a session's Stops and the background publisher do it (activation,
charging, remote.sync); the report, read from Ann's clone, must give every goal's figures
and the totals per person, branch, model and week exactly as the ledgers themselves count
them, and list a forged chain as refused, never counted.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import time
from pathlib import Path

import pytest

from forge_runtime.cli.main import main
from forge_runtime.goal.budget.usage import usage_record
from forge_runtime.goal.rules import activation, charging
from forge_runtime.goal.rules.charging import charge
from forge_runtime.goal.store.ledger import Ledger
from forge_runtime.goal.sync import remote
from forge_runtime.goal.views.report_team import iso_week
from tests.artifact_support import bare_repository
from tests.artifact_support import git as _git
from tests.test_goal_remote import RULES, _witness

PARSER, DOCS, SHARED, FORGED, LOCAL = ("ship the parser", "write the docs",
                                       "speed up the build", "tidy the logs",
                                       "try the new linter")


def _clone(origin: Path, name: str, person: str, branch: str | None = None):
    from forge_runtime.project import find_project

    root = origin.parent / name
    _git("clone", "-q", str(origin), str(root), cwd=origin.parent)
    _git("config", "user.name", person, cwd=root)
    _git("config", "user.email", f"{person.lower()}@example.com", cwd=root)
    if branch:
        _git("checkout", "-q", "-b", branch, cwd=root)
    (root / ".forge" / "local").mkdir(parents=True)
    (root / ".forge" / "guard.yaml").write_text(RULES)
    return find_project(root)


def _spend(project, nonce: str, turns: list[str], tokens: int, model: str) -> dict:
    """Charge each of `turns` as a Stop would, each spending `tokens` of `model` (priced
    at $10 a million tokens); the goal as its ledger then says."""
    ledger = Ledger(project.ledger_root, nonce, witness=_witness(project))
    for turn in turns:
        charge(ledger, project.state_path, [turn], "sess", turn, usage={turn: usage_record(
            {model: {"input": tokens, "picousd": tokens * 10_000_000}})})
    return ledger.verified()


def _start(project, objective: str, host: str) -> str:
    return activation.activate(project, objective, f"sess-{objective}", host=host) \
        .goal["nonce"]


def _figures(goal: dict) -> dict:
    return {"turns": goal["turn_count"], "tokens": goal["token_count"],
            "picousd": goal.get("picousd", 0), "plan": goal.get("plan_week", 0)}


def _minus(one: dict, other: dict) -> dict:
    return {key: one[key] - other[key] for key in one}


def _plus(*many: dict) -> dict:
    return {key: sum(one[key] for one in many) for key in many[0]}


def _forge_last_record(origin: Path, nonce: str) -> None:
    """What someone with push access does to inflate a goal: edit the last record's turn
    count, seal it again with forge's own (public) hashing, and push the ref again."""
    from forge_runtime.goal.store import record_file

    work = origin.parent / "by-hand"
    if not work.exists():
        _git("clone", "-q", str(origin), str(work), cwd=origin.parent)
    ref = f"refs/forge/goals/{nonce}"
    _git("fetch", "-q", "origin", f"+{ref}:{ref}", cwd=work)
    _git("checkout", "-q", ref, cwd=work)
    last = sorted((work / "records").iterdir())[-1]
    record = json.loads(last.read_text())
    record["goal"]["turn_count"] += 5
    last.write_bytes(record_file.canonical(record_file.seal(record)))
    _git("-c", "user.name=x", "-c", "user.email=x@x", "commit", "-qam", "more", cwd=work)
    _git("push", "-q", "--force", "origin", f"HEAD:{ref}", cwd=work)


@pytest.fixture
def team(tmp_path, monkeypatch):
    """Goals of two people in three clones, published on one bare remote; the figures
    each ledger holds, for the report to match."""
    monkeypatch.setattr("forge_runtime.goal.sync.publisher.spawn", lambda root, nonce: None)
    origin = bare_repository(tmp_path / "shared.git")
    ann = _clone(origin, "ann", "Ann")
    bob = _clone(origin, "bob", "Bob", branch="feature")
    bob_codex = _clone(origin, "bob-codex", "Bob")
    found = {"origin": origin, "ann": ann, "bob": bob}

    # Ann's goal runs out of turns; Bob takes it in on his feature branch and adds a tranche
    parser = _start(ann, PARSER, "claude")
    ann_part = _figures(_spend(ann, parser, [f"p-{n}" for n in range(20)], 1000, "claude-a"))
    remote.sync(ann, parser, "origin")
    _start(bob, PARSER, "claude")  # a fresh clone's /goal: the remote's goal, a new tranche
    parser_goal = _spend(bob, parser, ["q-1", "q-2", "q-3"], 3000, "claude-b")
    remote.sync(bob, parser, "origin")

    # Bob's goal on Codex in his other clone, met and verified
    docs = _start(bob_codex, DOCS, "codex")
    _spend(bob_codex, docs, ["d-1", "d-2"], 500, "gpt-x")
    ledger = Ledger(bob_codex.ledger_root, docs, witness=_witness(bob_codex))
    docs_goal = charging.end(ledger, bob_codex.state_path, "complete", "sess", "gates passed",
                             ended=charging.VERIFIED)
    remote.sync(bob_codex, docs, "origin")

    # Ann's goal that Bob's clone charged too: both moved since they parted, not yet joined
    shared = _start(ann, SHARED, "claude")
    remote.sync(ann, shared, "origin")
    _start(bob, SHARED, "claude")  # binds to Ann's tranche: no tranche of Bob's
    _spend(bob, shared, ["s-b1", "s-b2"], 700, "claude-b")
    remote.sync(bob, shared, "origin")
    _spend(ann, shared, ["s-a1", "s-a2", "s-a3"], 900, "claude-a")

    # Ann's goal never published: this clone's only
    local = _start(ann, LOCAL, "claude")
    local_goal = _spend(ann, local, ["l-1"], 100, "claude-a")

    # Bob's goal whose chain someone inflated on the remote
    forged = _start(bob_codex, FORGED, "codex")
    _spend(bob_codex, forged, ["f-1"], 50_000, "gpt-x")
    remote.sync(bob_codex, forged, "origin")
    _forge_last_record(origin, forged)

    found.update(parser=parser, docs=docs, shared=shared, local=local, forged=forged,
                 parser_goal=parser_goal, ann_part=ann_part, docs_goal=docs_goal,
                 local_goal=local_goal)
    return found


def _report(capsys, monkeypatch, project, *argv) -> tuple[int, dict]:
    monkeypatch.chdir(project.root)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project.root))
    code = main(["goal", "report", *argv, "--json"])
    return code, json.loads(capsys.readouterr().out)


def _text(capsys, monkeypatch, project, *argv) -> tuple[int, str]:
    monkeypatch.chdir(project.root)
    monkeypatch.setenv("CLAUDE_PROJECT_DIR", str(project.root))
    monkeypatch.setenv("NO_COLOR", "1")
    code = main(["goal", "report", *argv])
    captured = capsys.readouterr()
    return code, captured.out + captured.err


def test_the_team_report_gives_every_goal_and_totals_as_the_ledgers_count_them(
        team, capsys, monkeypatch):
    ann = team["ann"]
    code, data = _report(capsys, monkeypatch, ann, "--remote", "origin")
    assert code == 0
    rows = {row["nonce"]: row for row in data["goals"]}
    assert set(rows) == {team[name] for name in ("parser", "docs", "shared", "local")}

    # the joined goal as a sync would make it: after one, Ann's ledger says the same
    shared_goal = remote.sync(ann, team["shared"], "origin").goal
    assert shared_goal["turn_count"] == 5
    ledgers = {team["parser"]: team["parser_goal"], team["docs"]: team["docs_goal"],
               team["shared"]: shared_goal, team["local"]: team["local_goal"]}
    for nonce, goal in ledgers.items():
        assert {key: rows[nonce][key] for key in ("turns", "tokens", "picousd", "plan")} == \
            _figures(goal), nonce
    assert data["totals"]["all"] == {"goals": 4, **_plus(*map(_figures, ledgers.values()))}

    # who: the person whose clone opened each tranche
    bob_part = _minus(_figures(team["parser_goal"]), team["ann_part"])
    assert bob_part["turns"] == 3
    people = data["totals"]["person"]
    assert set(people) == {"Ann <ann@example.com>", "Bob <bob@example.com>"}
    assert people["Ann <ann@example.com>"] == {"goals": 3, **_plus(
        team["ann_part"], _figures(shared_goal), _figures(team["local_goal"]))}
    assert people["Bob <bob@example.com>"] == {"goals": 2, **_plus(
        bob_part, _figures(team["docs_goal"]))}
    assert rows[team["parser"]]["people"] == ["Ann <ann@example.com>", "Bob <bob@example.com>"]

    # where and on what
    main_branch = _git("symbolic-ref", "--short", "HEAD", cwd=ann.root).strip()
    assert data["totals"]["branch"]["feature"] == {"goals": 1, **bob_part}
    assert data["totals"]["branch"][main_branch]["goals"] == 4
    assert rows[team["docs"]]["hosts"] == ["codex"] and rows[team["parser"]]["hosts"] == [
        "claude"]
    models = data["totals"]["model"]
    assert models["claude-b"]["tokens"] == 3 * 3000 + 2 * 700
    assert models["gpt-x"] == {"goals": 1, "tokens": 1000, "picousd": 1000 * 10_000_000}
    assert sum(one["tokens"] for one in models.values()) == data["totals"]["all"]["tokens"]
    assert rows[team["parser"]]["models"] == ["claude-a", "claude-b"]  # the larger first
    (week,) = data["totals"]["week"]
    assert week == iso_week(time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()))

    # how each ended
    assert rows[team["parser"]]["ended"] == "running"  # Bob's tranche goes on
    assert rows[team["docs"]]["ended"] == "verified"
    assert rows[team["shared"]]["where"] == "joined"
    assert rows[team["local"]]["where"] == "this clone"

    # once joined and published, the remote's chain holds the join record: verified whole
    # in memory (the join recomputed from its side), the same figures
    remote.sync(ann, team["shared"], "origin")
    assert any(one["kind"] == "merge" for one in Ledger(ann.ledger_root, team["shared"])
               .history())
    code, again = _report(capsys, monkeypatch, team["bob"], "--remote", "origin")
    joined = {row["nonce"]: row for row in again["goals"]}[team["shared"]]
    assert joined["where"] == "both" and joined["turns"] == shared_goal["turn_count"]
    assert joined["tokens"] == shared_goal["token_count"]


def test_a_forged_chain_is_listed_refused_and_counted_nowhere(team, capsys, monkeypatch):
    code, data = _report(capsys, monkeypatch, team["ann"], "--remote", "origin")
    (refused,) = data["refused"]
    assert refused["nonce"] == team["forged"] and refused["where"] == "remote"
    assert "record 2 (charge) is not a valid step" in refused["why"]
    assert team["forged"] not in {row["nonce"] for row in data["goals"]}
    assert "gpt-x" in data["totals"]["model"]
    assert data["totals"]["model"]["gpt-x"]["tokens"] == 1000  # not the forged 50,000
    # the way out for a goal this clone never ran: look at the ref; its own clone restores
    assert data["_next_action"] == f"git ls-remote origin refs/forge/goals/{team['forged']}"
    code, text = _text(capsys, monkeypatch, team["bob"], "--remote", "origin")
    assert f"refused {team['forged'][:12]} (remote): goal {team['forged']}" in text
    # Bob's codex clone holds the goal: there, the fix is to publish its own chain over it
    code, data = _report(capsys, monkeypatch, _codex_clone(team), "--remote", "origin")
    assert data["_next_action"] == f"forge goal publish --nonce {team['forged']} --restore"


def _codex_clone(team):
    from forge_runtime.project import find_project

    return find_project(team["origin"].parent / "bob-codex")


def test_since_keeps_the_tranches_activated_since_and_refuses_what_is_no_time(
        team, capsys, monkeypatch):
    code, data = _report(capsys, monkeypatch, team["ann"], "--remote", "origin",
                         "--since", "1d")
    assert code == 0 and data["totals"]["all"]["goals"] == 4
    code, data = _report(capsys, monkeypatch, team["ann"], "--remote", "origin",
                         "--since", "2999-01-01")
    assert code == 0 and data["goals"] == [] and data["totals"]["all"]["turns"] == 0
    code, text = _text(capsys, monkeypatch, team["ann"], "--remote", "origin",
                       "--since", "last tuesday")
    assert code != 0
    assert "Error: --since 'last tuesday' is neither a date" in text
    assert text.rstrip().endswith("Fix: forge goal report --remote origin --since 7d")
    code, text = _text(capsys, monkeypatch, team["ann"], "--since", "7d")
    assert code != 0 and "needs the name of a git remote" in text
    assert text.rstrip().endswith("Fix: forge goal report --remote origin")
    code, text = _text(capsys, monkeypatch, team["ann"], "--remote", "origin", "--nonce",
                       team["local"])
    assert code != 0 and f"Fix: forge goal report --nonce {team['local']}\n" \
        "Or: forge goal report --remote origin" in text


def test_a_remote_that_is_no_configured_remote_is_an_error_with_its_fix(
        team, capsys, monkeypatch):
    code, text = _text(capsys, monkeypatch, team["ann"], "--remote", str(team["origin"]))
    assert code != 0 and "is not a remote configured in this repository" in text
    assert "\nFix: git remote -v\n" in text


def test_reading_the_remote_runs_nothing_of_either_repository(team, capsys, monkeypatch,
                                                               tmp_path):
    """An attacker with push access plants hooks and programs in the bare remote (every
    hook git has, the programs its config can name), an agent plants them in the clone's
    own .git; the report fetches and reads all goals, and none of them runs."""
    marker = tmp_path / "ran"
    hook = f"#!/bin/sh\necho \"$0\" >> {marker}\n"
    origin, clone = team["origin"], team["ann"].root / ".git"
    for where in (origin / "hooks", clone / "hooks"):
        for name in ("pre-receive", "update", "post-receive", "post-update",
                     "reference-transaction", "post-checkout", "post-merge",
                     "pre-auto-gc", "fsmonitor-watchman", "push-to-checkout"):
            (where / name).write_text(hook)
            (where / name).chmod(0o755)
    for repository in (origin, team["ann"].root):
        for key, value in (("uploadpack.packObjectsHook", f"echo pack >> {marker}; git"),
                           ("core.alternateRefsCommand", f"echo refs >> {marker}; true"),
                           ("core.fsmonitor", f"echo fsmonitor >> {marker}"),
                           ("core.sshCommand", f"echo ssh >> {marker}")):
            _git("config", key, value, cwd=repository)
    other = tmp_path / "other.git"
    shutil.copytree(origin, other)
    for repository in (origin, clone):
        (repository / "objects" / "info" / "alternates").write_text(f"{other / 'objects'}\n")
    code, data = _report(capsys, monkeypatch, team["ann"], "--remote", "origin")
    assert code == 0 and data["totals"]["all"]["goals"] == 4
    assert not marker.exists(), marker.read_text()


def _chromium() -> str:
    found = shutil.which("chromium") or shutil.which("chromium-browser")
    assert found, "needs chromium (.ci/run installs it)"
    return found


def test_the_team_page_opens_in_a_real_browser_and_shows_the_totals(team, capsys,
                                                                     monkeypatch, tmp_path):
    from forge_runtime.goal.views.gauge import dollars_text, tokens_text

    page = tmp_path / "team.html"
    code, data = _report(capsys, monkeypatch, team["ann"], "--remote", "origin", "--html",
                         str(page))
    assert code == 0 and data["html"] == str(page)
    assert data["_next_action"].startswith("git ls-remote origin")  # the refusal comes first
    flags = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", f"--user-data-dir={tmp_path / 'profile'}"]
    dom = subprocess.run([_chromium(), *flags, "--dump-dom", page.as_uri()],
                         capture_output=True, text=True, timeout=120, check=True).stdout
    every = data["totals"]["all"]
    assert (f'<p id="total">4 goal(s) · {every["turns"]} turns · '
            f'{tokens_text(every["tokens"])} tokens · {dollars_text(every["picousd"])}') in dom
    for person, figures in data["totals"]["person"].items():
        cells = (f"<td>{person.replace('<', '&lt;').replace('>', '&gt;')}</td>"
                 f"<td>{figures['goals']}</td><td>{figures['turns']}</td>"
                 f"<td>{tokens_text(figures['tokens'])}</td>"
                 f"<td>{dollars_text(figures['picousd'])}</td>")
        assert cells in dom, person
    assert dom.count("<tr>") >= 4 + 1 + 2 + 2 + 3 + 1  # goals, refused, people, ...
    assert team["forged"] in dom and "counted nowhere" in dom
    assert "<script" not in dom.lower()
    shot = tmp_path / "team.png"
    subprocess.run([_chromium(), *flags, f"--screenshot={shot}", "--window-size=1200,1400",
                    page.as_uri()], capture_output=True, timeout=120, check=True)
    assert shot.stat().st_size > 10_000  # a drawn page, not a blank one


def test_a_persons_goal_records_who_opened_the_tranche_where_and_on_which_host(
        tmp_path, monkeypatch):
    """The activation a Stop confirms carries the clone's git identity, its branch and the
    host; a session on Codex names Codex."""
    from goal_support import Session, goal_project

    from forge_runtime import hosts
    from forge_runtime.goal.hosts import host_adapter as goal_host

    project = goal_project(tmp_path, monkeypatch)
    _git("init", "-q", "-b", "topic", str(project.root), cwd=tmp_path)
    _git("config", "user.name", "Cy", cwd=project.root)
    _git("config", "user.email", "cy@example.com", cwd=project.root)
    session = Session(project)
    session.person_goal(PARSER)
    session.turn()
    nonce = json.loads((project.ledger_root / "sessions" / f"{session.id}.json")
                       .read_text())["nonce"]
    (genesis, *_) = Ledger(project.ledger_root, nonce).history()
    assert {key: genesis.get(key) for key in ("by", "branch", "host")} == {
        "by": "Cy <cy@example.com>", "branch": "topic", "host": "claude"}
    codex = {goal_host.KEY: hosts.adapter("codex")}
    assert (goal_host.name(codex), goal_host.name({})) == ("codex", "claude")


def _record(kind: str, at: str, activation: str, plan_week: int = 0, **fields) -> dict:
    goal = {"activation_id": activation, "plan_week": plan_week, "status": "active",
            **fields.pop("goal", {})}
    return {"kind": kind, "at": at, "goal": goal, **fields}


def test_plan_share_sums_each_weeks_rise_to_the_tranche_it_rose_in():
    """The goal's own use of the week (plan_week) rises with its charges and starts again
    when the week resets: a tranche is charged each rise, a new week's use from its start."""
    from forge_runtime.goal.views.report_team import tranches

    chain = [_record("activate", "2026-12-01T10:00:00Z", "one", by="Ann <a@x>"),
             _record("charge", "2026-12-01T10:05:00Z", "one", 150, turn="t1"),
             _record("charge", "2026-12-01T10:09:00Z", "one", 300, turn="t2"),
             _record("exhaust", "2026-12-01T10:09:01Z", "one", 300, ceiling="turns"),
             _record("activate", "2026-12-08T09:00:00Z", "two", 300, by="Bob <b@x>"),
             _record("charge", "2026-12-08T09:05:00Z", "two", 40, turn="t3"),  # a new week
             _record("charge", "2026-12-08T09:09:00Z", "two", 65, turn="t4")]
    first, second = tranches(chain)
    assert (first["by"], first["turns"], first["plan"]) == ("Ann <a@x>", 2, 300)
    assert (second["by"], second["turns"], second["plan"]) == ("Bob <b@x>", 2, 65)
    assert iso_week(first["at"]) == "2026-W49" and iso_week(second["at"]) == "2026-W50"


@pytest.mark.parametrize("end, words", [
    (_record("exhaust", "2026-12-01T10:00:00Z", "one", ceiling="usd",
             goal={"status": "exhausted"}), "exhausted on its dollar ceiling"),
    (_record("exhaust", "2026-12-01T10:00:00Z", "one", ceiling="usage_limit",
             goal={"status": "exhausted"}), "stopped at the host's usage limit"),
    (_record("complete", "2026-12-01T10:00:00Z", "one",
             goal={"status": "complete", "ended": "met, unverified"}), "met, unverified"),
    (_record("cancel", "2026-12-01T10:00:00Z", "one",
             goal={"status": "cancelled", "ended": "wedged"}), "wedged"),
    (_record("cancel", "2026-12-01T10:00:00Z", "one", goal={"status": "cancelled"}),
     "cleared")])
def test_how_a_goal_ended_reads_as_its_end_record_says(end, words):
    from forge_runtime.goal.views.report_team import ending

    assert ending([_record("activate", "2026-12-01T09:00:00Z", "one"), end]) == words
