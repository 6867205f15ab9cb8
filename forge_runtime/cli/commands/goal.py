"""`forge goal status|sync|verify|history|report|adopt`: see and check the durable goal ledger.

These only read the ledger (sync rewrites state.md from it; adopt notes a moved or copied
ledger in the goal witness, goal/rules/adoption.py); a goal is activated by a
person's `/goal` in Claude Code and charged by forge's Stop hook, never from here.
"""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

import json
import sys
import time
from pathlib import Path

from forge_runtime import hints
from forge_runtime.cli.render import use_colour
from forge_runtime.errors import EXIT_REFUSED, EXIT_USAGE, ForgeError
from forge_runtime.hints import sanitize
from forge_runtime.result import Result

NO_GOAL = "a person runs /goal with an objective in Claude Code"


def register(subparsers, common) -> None:
    parser = subparsers.add_parser("goal", parents=[common], help="the durable goal ledger",
                                   description="Show, sync, verify and list the goal ledger.")
    actions = parser.add_subparsers(dest="goal_action", metavar="ACTION", required=True,
                                    parser_class=type(parser))
    for name, handler, text in (
            ("status", status, "the goal, its budget and next step"),
            ("sync", sync, "bring state.md's goal fields up to the ledger"),
            ("verify", verify, "check every record of every goal"),
            ("history", history, "a timeline of the goal, one line per event"),
            ("report", report, "one goal's story: tranches, turns and their tokens, late "
                               "charges, stuck warnings, gates, where it stopped"),
            ("verify-gates", verify_gates, "refuse unless every final gate is fresh and "
                                           "passing")):
        action = actions.add_parser(name, parents=[common], help=text, description=text)
        action.add_argument("--nonce", help="the goal to show (default: state.md's)")
        action.set_defaults(handler=handler)
        if name == "report":
            action.add_argument("--html", metavar="PATH", nargs="?", const="",
                                help="also draw the story as a page (default: "
                                     ".forge/reports/goal-<nonce>.html, or "
                                     ".forge/reports/team-<remote>.html with --remote)")
            action.add_argument("--remote", metavar="NAME",
                                help="every goal published on this git remote and this "
                                     "clone's: who, where, what each spent and how it "
                                     "ended, with totals per person, branch, model and week")
            action.add_argument("--since", metavar="WHEN",
                                help="with --remote: only tranches activated since WHEN "
                                     "(2026-12-01, 2026-12-01T09:00:00Z, 7d, 2w, 12h)")
    text = "the price table dollars are counted with (compiled from genai-prices)"
    action = actions.add_parser("prices", parents=[common], help=text, description=text)
    action.add_argument("--compile", action="store_true",
                        help="compile the table again from the installed genai-prices")
    action.set_defaults(handler=prices)
    text = "publish the goal's ledger on the remote .forge/guard.yaml names, now"
    action = actions.add_parser("publish", parents=[common], help=text, description=text)
    action.add_argument("--nonce", help="the goal to publish (default: state.md's)")
    action.add_argument("--restore", action="store_true",
                        help="put this clone's verified chain in place of a remote one that "
                             "is not forge's (edited or rewritten by hand)")
    action.set_defaults(handler=publish)
    text = "keep this project's goals here after moving or copying it (their counts kept)"
    action = actions.add_parser("adopt", parents=[common], help=text, description=text)
    action.set_defaults(handler=adopt)


def _project():
    from forge_runtime.project import find_project

    return find_project()


def _summary(goal: dict) -> list[str]:
    from forge_runtime.goal.budget.ceilings import minutes_used, now
    from forge_runtime.goal.views.gauge import tokens_text

    lines = [f"goal        {goal['nonce']}",
             f"objective   {goal['objective']}",
             f"status      {goal['status']}"
             + (f" ({_ended(goal)})" if goal["status"] in ("complete", "cancelled") else ""),
             f"turns       {goal['turn_count']} of {goal['turn_ceiling']} "
             f"({goal['activation_count']} activation(s) x 20)"]
    ceiling = goal.get("token_ceiling")
    if goal.get("token_count") or isinstance(ceiling, int):
        lines.append(f"tokens      {tokens_text(goal.get('token_count', 0))}"
                     + (f" of {tokens_text(ceiling)}" if isinstance(ceiling, int) else "")
                     + " (input, output and cache writes; cache reads at a tenth)")
    if isinstance(goal.get("minute_ceiling"), int):
        lines.append(f"minutes     {minutes_used(goal, now())} of {goal['minute_ceiling']} "
                     "in this tranche")
    if "picousd" in goal or isinstance(goal.get("usd_ceiling"), int):
        from forge_runtime.goal.budget.pricing import dollars

        ceiling = goal.get("usd_ceiling")
        table = (goal.get("prices") or {}).get("version") or "no price table"
        lines.append(f"dollars     {dollars(goal.get('picousd', 0))}"
                     + (f" of {dollars(ceiling)}" if isinstance(ceiling, int) else "")
                     + f" (at API prices, {table})")
    lines += _plan_lines(goal)
    if goal.get("usage_limited") is True:
        lines.append("usage limit the host stopped a turn for its plan's usage limit"
                     + (" (the goal goes on: after_usage_limit is continue)"
                        if goal.get("after_usage_limit") == "continue" else
                        "; forge refuses the host's own continuation"))
    if isinstance(goal.get("sandbox"), str):
        lines.append(f"sandbox     {SANDBOX_WORDS.get(goal['sandbox'], goal['sandbox'])}")
    return lines


def _plan_lines(goal: dict) -> list[str]:
    """The plan windows the goal watches (goal/budget/plan.py), as its charges last read them."""
    from forge_runtime.goal.budget.plan import percent
    from forge_runtime.goal.views.gauge import plan_measures

    words = {"5h": "5-hour window", "7d": "weekly window", "week": "the goal's own week"}
    host = goal.get("plan_host")
    return [f"plan        {words[label]} {percent(used)} of {percent(ceiling)}"
            + (f" (as {host} last reported it)" if host and label != "week" else "")
            for used, ceiling, label in plan_measures(goal)]


# the posture a person's /goal ran in, as the ledger recorded it (sandbox.posture.for_goal)
SANDBOX_WORDS = {"sandboxed": "sandboxed (the host's kernel layer keeps the ledger)",
                 "unsandboxed": "unsandboxed (.forge/guard.yaml opts out: "
                                "goal.require_sandbox is false)"}


def _budget(goal: dict) -> dict:
    """The JSON budget: turns as before, tokens and minutes beside them."""
    from forge_runtime.goal.budget.ceilings import minutes_used, now

    tokens, minutes = goal.get("token_ceiling"), goal.get("minute_ceiling")
    usd = goal.get("usd_ceiling")
    return {"used": goal["turn_count"], "ceiling": goal["turn_ceiling"],
            "remaining": goal["turn_ceiling"] - goal["turn_count"],
            "tokens": {"used": goal.get("token_count", 0), "ceiling": tokens},
            "minutes": {"used": minutes_used(goal, now()), "ceiling": minutes},
            "usd": {"used": goal.get("picousd", 0) / 10**12,
                    "ceiling": usd / 10**12 if isinstance(usd, int) else None,
                    "prices": (goal.get("prices") or {}).get("version")},
            "plan": _plan_budget(goal)}


def _plan_budget(goal: dict) -> dict | None:
    """The JSON plan windows (percent), the host they were last read from, and whether the
    host's usage limit stopped a turn; None for a goal without plan ceilings."""
    from forge_runtime.goal.views.gauge import plan_figure

    ceilings = goal.get("plan_ceilings")
    if not isinstance(ceilings, dict):
        return None
    return {"host": goal.get("plan_host"), "usage_limited": goal.get("usage_limited") is True,
            **{name: {"used": plan_figure(goal, name) / 100, "ceiling": points / 100}
               for name, points in ceilings.items()}}


def _brief_of(project, goal: dict):
    """The frozen brief this goal started from, relative to the project, or None."""
    from forge_runtime.clarify.store import brief_of_goal

    found = brief_of_goal(project.forge_dir, goal["objective"])
    return None if found is None else found.relative_to(project.root)


def _way_on(goal: dict) -> hints.Hint:
    status = goal["status"]
    if status == "exhausted":
        from forge_runtime.goal.events.replies import exhausted_hint

        return exhausted_hint(goal)
    if status == "active":
        return hints.wait("the goal's session runs; its Stop hook charges each turn",
                          or_=[f"forge goal history --nonce {goal['nonce']}"])
    return hints.done(f"goal {status} ({_ended(goal)}); /goal with the same objective "
                      "reopens it")


def _ended(goal: dict) -> str:
    from forge_runtime.goal.views.gauge import ended_words

    return ended_words(goal, unicode=False).removeprefix("goal ")


def status(args) -> Result:
    from forge_runtime.goal.store.ledger import TAMPERED, Ledger
    from forge_runtime.goal.views import checkpoint, gauge
    from forge_runtime.goal.views import status as core

    project = _project()
    nonce = core.chosen_nonce(project, args.nonce)
    if nonce is None:
        return Result(hints.wait(NO_GOAL), ["no goal in this repository"], {"goal": None})
    published = _from_remote(project, nonce)
    seen = core.view(project, nonce)
    found = checkpoint.read(project.state_path) if seen.consistent else None
    lines = _summary(seen.goal) + [f"next step   {seen.next_step or '(none in the checklist)'}"]
    lines += _remote_lines(project, nonce, published)
    if found is not None:
        lines.append(f"checklist   {found.progress()}")
    if seen.late_turns:
        lines.append(f"late        {seen.late_turns} turn(s) charged late (their Stop hooks did "
                     "not finish)")
    if seen.goal.get("overrun_count"):
        lines.append(f"over budget {seen.goal['overrun_count']} turn(s) the host started after "
                     "the goal ended, denied their work (forge goal history lists them)")
    from forge_runtime.goal.store import killed_stops

    killed = killed_stops.row(project.ledger_root)
    if killed:
        lines.append(f"killed      {killed_stops.summary(killed)}")
    brief = _brief_of(project, seen.goal)
    if brief is not None:
        lines.append(f"brief       {brief}")
    by_model = _by_model(project, nonce)
    lines += [f"model       {line}" for line in _model_lines(by_model)]
    outlook, forecast_lines, forecast_data = _forecast(project, nonce)
    lines += forecast_lines
    if sys.stdout.isatty():  # the gauge is for a person at a terminal; pipes get the text
        stuck = gauge.stuck_turns(Ledger(project.ledger_root, nonce).current().record)
        lines.insert(0, gauge.line(seen.goal, found, stuck, unicode=gauge.unicode_ok(),
                                   colour=use_colour(sys.stdout), outlook=outlook))
    goal = seen.goal
    data = {"goal": goal, "state_turn_count": seen.state_turn_count,
            "next_step": seen.next_step, "consistent": seen.consistent,
            "late_turns": seen.late_turns, "killed_stops": killed,
            "brief": None if brief is None else str(brief),
            "budget": _budget(goal),
            "checklist": {"done": found.done, "total": found.total} if found else None,
            "by_model": by_model, "remote": published, "forecast": forecast_data}
    if not seen.consistent:
        lines.append(f"state.md    {seen.problem}")
        tampered = seen.problem_code in (None, TAMPERED)
        refusal = ForgeError(seen.problem, f"forge goal sync --nonce {nonce}" if tampered
                             else seen.problem_fix, exit_code=EXIT_REFUSED,
                             code=TAMPERED if tampered else seen.problem_code)
        return Result(refusal.hint(), lines, {**data, "code": refusal.code}, refusal.exit_code)
    if killed:  # an attack on forge's hooks comes before any way on
        warning = killed_stops.warning(killed)
        return Result(warning.hint(), lines, {**data, "code": warning.code}, warning.exit_code)
    if seen.state_turn_count != seen.goal["turn_count"]:
        lines.append(f"state.md    {seen.state_turn_count} turns (behind the ledger)")
        return Result(hints.next_(f"forge goal sync --nonce {nonce}", "catch state.md up"),
                      lines, data)
    way_on = _way_on(seen.goal)
    from forge_runtime import gates

    changed = _gates_changed(project, nonce)
    if changed:
        lines += [f"gates file  differs from what /goal last recorded: {line}"
                  for line in changed]
        data["gates_changed"] = changed
    if gates.in_play(project):
        from forge_runtime.gates.goal import status_of

        gates_line, gates_hint = status_of(project, seen.goal)
        lines.append(f"gates       {gates_line}")
        data["gates"] = gates_line
        way_on = gates_hint or way_on
    from forge_runtime.notify import outbox  # a message about the goal that did not go out

    lines += outbox.status_lines(project.ledger_root, nonce)
    return Result(way_on, lines, data)


def _forecast(project, nonce: str) -> tuple[str | None, list[str], dict | None]:
    """When a running goal's budget runs out at its tranche's pace (goal/views/forecast.py): the
    gauge's words, the status lines and the JSON; nothing for a goal that is not running."""
    from forge_runtime.goal.store.ledger import Ledger
    from forge_runtime.goal.views import forecast, gauge, tranche

    ledger = Ledger(project.ledger_root, nonce)
    head = ledger.current()
    if head.goal["status"] != "active":
        return None, [], None
    pace = tranche.pace(ledger, head)[0]
    now = int(time.time())
    ways = forecast.runways(head.goal, pace, now)
    lines = [f"pace        {forecast.pace_words(pace)}"]
    lines += [f"forecast    {forecast.runway_words(way, now)}" for way in ways]
    return gauge.runway_text(ways, now), lines, forecast.as_data(pace, ways)


def _gates_changed(project, nonce: str) -> list[str]:
    """How the gates file differs from the final gates the goal's last person's `/goal`
    recorded (the ones it is judged by): what the next `/goal` would record instead."""
    from forge_runtime.gates import recorded

    return recorded.changes(recorded.of_goal(project, nonce), recorded.snapshot(project))


def _from_remote(project, nonce: str) -> dict | None:
    """Join the remote's chain of the goal in first (goal.remote in .forge/guard.yaml), and
    say where the count comes from; None for a project that does not publish goals."""
    from forge_runtime.goal.store.ledger import Ledger
    from forge_runtime.goal.sync import remote

    name = remote.configured(project)
    if name is None:
        return None
    problem = None
    try:
        remote.sync(project, nonce, name, push=False)
    except ForgeError as exc:
        if exc.code != remote.UNREACHABLE:
            raise
        problem = exc.message
    ledger = Ledger(project.ledger_root, nonce)
    known = remote.read_state(ledger)
    mark = known.get("published") or {}
    return {"name": name, "source": remote.source(ledger.history(), known),
            "published_turns": mark.get("turn_count"),
            "owed": ledger.pointer() != mark.get("seq"), "unreachable": problem}


def _remote_lines(project, nonce: str, published: dict | None) -> list[str]:
    if published is None:
        return []
    lines = [f"count from  {published['source']}"]
    where = f"remote      {published['name']}: "
    if published["unreachable"]:
        lines.append(where + f"not reached ({published['unreachable']}); this clone's count "
                             "is shown, published at the next event that reaches it")
    elif published["published_turns"] is None:
        lines.append(where + "not published yet (the goal's next hook publishes it)")
    else:
        lines.append(where + f"holds turn {published['published_turns']}"
                     + ("; newer records are owed (the next hook publishes them)"
                        if published["owed"] else ""))
    return lines


def prices(args) -> Result:
    """Where this interpreter's price table is and what it was compiled from; `--compile`
    makes it anew (a /goal with a dollar ceiling needs one: goal/budget/pricing.py)."""
    from forge_runtime.goal.budget import price_table

    path = price_table.compiled_path()
    if args.compile or not path.exists():
        try:
            price_table.write(path)
        except (ImportError, OSError, ValueError) as exc:
            raise ForgeError(f"FORGE_GOAL_PRICES_UNAVAILABLE: no price table could be "
                             f"compiled ({type(exc).__name__}: {exc})",
                             "pip install forge-goal-runtime", exit_code=EXIT_REFUSED,
                             rationale="genai-prices comes with forge's own package") \
                from None
    table = json.loads(path.read_bytes())
    lines = [f"prices      {table.get('source')} {table.get('version')}, compiled "
             f"{table.get('compiled')}", f"models      {len(table.get('models', []))} "
             f"({', '.join(sorted(table.get('hosts', {})))})", f"file        {path}",
             "unknown     priced as the dearest model of their family, else of their host"]
    data = {"source": table.get("source"), "version": table.get("version"),
            "compiled": table.get("compiled"), "models": len(table.get("models", [])),
            "path": str(path)}
    return Result(hints.done("a person's next /goal seals this table for its charges"),
                  lines, data)


def publish(args) -> Result:
    from forge_runtime.goal.sync import remote
    from forge_runtime.goal.views import status as core

    project = _project()
    nonce = core.chosen_nonce(project, args.nonce)
    if nonce is None:
        return Result(hints.wait(NO_GOAL), ["no goal in this repository"], {"goal": None})
    name = remote.configured(project)
    if name is None:
        raise ForgeError("this project publishes no goal ledger (no goal.remote in "
                         ".forge/guard.yaml)", "forge guard roles",
                         rationale="a person adds `goal: {remote: origin}` to "
                                   ".forge/guard.yaml to keep goals on the remote")
    head = remote.restore(project, nonce, name) if args.restore else \
        remote.sync(project, nonce, name)
    goal = head.goal
    lines = [f"published goal {nonce} on {name}: {goal['turn_count']} of "
             f"{goal['turn_ceiling']} turns"]
    return Result(hints.next_(f"forge goal status --nonce {nonce}", "see where the count "
                              "comes from"), lines, {"goal": goal, "remote": name})


def _by_model(project, nonce: str) -> dict:
    from forge_runtime.goal.store.ledger import Ledger
    from forge_runtime.goal.views.report import spent_by_model

    return spent_by_model(Ledger(project.ledger_root, nonce).history())


def _model_lines(by_model: dict) -> list[str]:
    from forge_runtime.goal.views.gauge import tokens_text
    from forge_runtime.goal.views.report import model_lines

    return model_lines(by_model, tokens_text)


def report(args) -> Result:
    from forge_runtime import gates
    from forge_runtime.goal.store.ledger import Ledger
    from forge_runtime.goal.views import report as story
    from forge_runtime.goal.views import status as core
    from forge_runtime.goal.views.gauge import tokens_text

    if args.remote is not None or args.since is not None:
        return team_report(args)
    project = _project()
    nonce = core.chosen_nonce(project, args.nonce)
    if nonce is None:
        return Result(hints.wait(NO_GOAL), ["no goal in this repository"], {"goal": None})
    told = story.story(Ledger(project.ledger_root, nonce).history())
    lines = story.text(told, tokens_text)
    way_on = _way_on(told["goal"])
    if gates.defined(project):
        from forge_runtime.gates.goal import status_of

        gates_line, gates_hint = status_of(project, told["goal"])
        lines.append(f"gates       {gates_line}")
        told["gates"] = gates_line
        way_on = gates_hint or way_on
    if args.html is not None:
        from forge_runtime.goal.views.report_html import render

        _write_page(project, args.html, f"goal-{nonce}.html", render, told, lines)
    return Result(way_on, lines, told)


def _write_page(project, asked: str, default_name: str, render, told: dict,
                lines: list[str]) -> None:
    """Write a report's page where `--html` asked (its default under .forge/reports/), and
    say where in the lines and the data."""
    page = Path(asked) if asked else Path(project.forge_dir) / "reports" / default_name
    page.parent.mkdir(parents=True, exist_ok=True)
    page.write_text(render(told), encoding="utf-8")
    lines.append(f"page        {page}")
    told["html"] = str(page)


def team_report(args) -> Result:
    """`forge goal report --remote NAME [--since WHEN] [--html [PATH]]`."""
    from forge_runtime.gitrefs import GitFailed
    from forge_runtime.goal.views import report_team
    if not args.remote:
        raise ForgeError("the team report (--remote, --since) needs the name of a git "
                         "remote: --remote NAME", "forge goal report --remote origin",
                         exit_code=EXIT_USAGE)
    if args.nonce:
        raise ForgeError("--nonce names one goal's story; --remote lists every goal",
                         f"forge goal report --nonce {sanitize(args.nonce)}",
                         exit_code=EXIT_USAGE, or_=[f"forge goal report --remote "
                                                    f"{sanitize(args.remote)}"])
    since = None
    if args.since is not None:
        try:
            since = report_team.parse_since(args.since, int(time.time()))
        except ValueError:
            raise ForgeError(f"--since {sanitize(args.since)!r} is neither a date or time "
                             "(2026-12-01, 2026-12-01T09:00:00Z) nor a span back from now "
                             "(7d, 2w, 12h)", f"forge goal report --remote {args.remote} "
                             "--since 7d", exit_code=EXIT_USAGE) from None
    project = _project()
    try:
        told = report_team.build(project, args.remote, since)
    except GitFailed as exc:
        raise ForgeError(f"the goals on remote {sanitize(args.remote)!r} cannot be read: "
                         f"{sanitize(exc.why)}", "git remote -v", exit_code=EXIT_REFUSED,
                         rationale="a remote a person configured, reachable from here "
                                   "(`git remote add NAME URL`)") from None
    if since is not None:
        told["since"] = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(since))
    lines = report_team.text(told)
    shown = f"forge goal report --remote {args.remote}" + \
        (f" --since {args.since}" if args.since else "")
    if args.html is not None:
        from forge_runtime.goal.views.report_team_html import render

        _write_page(project, args.html, f"team-{_file_name(args.remote)}.html", render, told,
                    lines)
    refused = told["refused"]
    if refused:
        return Result(hints.next_(refused[0]["fix"], f"{len(refused)} chain(s) did not "
                                  "verify and are counted nowhere",
                                  or_=[f"{shown} --html"] if args.html is None else None),
                      lines, told)
    if args.html is None:
        return Result(hints.next_(f"{shown} --html", "see it drawn as a page"), lines, told)
    return Result(hints.done(f"{told['totals']['all']['goals']} goal(s) reported; the page "
                             "is self-contained"), lines, told)


def _file_name(remote: str) -> str:
    """A remote's name as part of a file name: letters, digits, '-' and '_' only."""
    return "".join(char if char.isalnum() or char in "-_" else "_" for char in remote)


def verify_gates(args) -> Result:
    from forge_runtime.gates.goal import verify
    from forge_runtime.goal.store.ledger import COMPLETE, Ledger
    from forge_runtime.goal.views import status as core

    project = _project()
    nonce = core.chosen_nonce(project, args.nonce)
    if nonce is None:
        return Result(hints.wait(NO_GOAL), ["no goal in this repository"], {"goal": None})
    goal = Ledger(project.ledger_root, nonce).verified()
    record, confirmed = verify(project, goal)
    lines = [f"{name}  {result['verdict']} in {result.get('duration_s', 0):.1f} s (forge's "
             f"own run, confinement: {confirmed['confinement']})"
             for name, result in confirmed["results"].items()]
    if record.get("reset"):
        lines.insert(0, f"dropped: {record['reset']}; forge ran every gate again")
    data = {"goal": goal, "gates": confirmed["results"], "confirmed_at": confirmed["at"],
            "confinement": confirmed["confinement"], "verified_at": record.get("verified_at"),
            "dropped": record.get("reset")}
    if goal["status"] == COMPLETE:
        return Result(hints.done(f"goal {nonce} met and verified: forge ran every recorded "
                                 "final gate itself and all passed"), lines, data)
    return Result(hints.wait("the host's evaluator judges the goal met",
                             f"every recorded final gate of goal {nonce} passes forge's own "
                             "run now", or_=[f"forge goal status --nonce {nonce}"]),
                  lines, data)


def sync(args) -> Result:
    from forge_runtime.goal.views import status as core

    project = _project()
    nonce = core.chosen_nonce(project, args.nonce)
    if nonce is None:
        return Result(hints.wait(NO_GOAL), ["no goal to sync"], {"goal": None})
    goal = core.sync(project, nonce)
    return Result(hints.next_(f"forge goal status --nonce {nonce}", "state.md matches"),
                  [f"state.md synced: {goal['turn_count']} of {goal['turn_ceiling']} turns"],
                  {"goal": goal})


def verify(args) -> Result:
    from forge_runtime.goal.sync.witness import witnessed_ledger
    from forge_runtime.goal.views import status as core

    project = _project()
    if args.nonce:
        nonce = core.chosen_nonce(project, args.nonce)
        goals = [witnessed_ledger(project, nonce).verified()]
    else:
        goals = core.verify_all(project)
    lines = [f"ok  {goal['nonce']}  {goal['status']:<9} {goal['turn_count']}/"
             f"{goal['turn_ceiling']}  {goal['objective']}" for goal in goals]
    if not goals:
        return Result(hints.wait(NO_GOAL), ["no goals to verify"], {"goals": []})
    return Result(hints.done(f"{len(goals)} goal ledger(s) verified"), lines, {"goals": goals})


def adopt(args) -> Result:
    """A ledger the witness saw somewhere else: check every goal against what was seen
    there, then note it here (goal/rules/adoption.py); never a fresh budget."""
    from forge_runtime.goal.rules.adoption import adopt as adopt_here

    project = _project()
    goals = adopt_here(project)
    if not goals:
        return Result(hints.next_("forge goal verify", "nothing to adopt: the ledger here is "
                                  "witnessed here"), ["nothing to adopt"], {"goals": []})
    lines = [f"adopted  {goal['nonce']}  {goal['status']:<9} {goal['turn_count']}/"
             f"{goal['turn_ceiling']}  {goal['objective']}" for goal in goals]
    return Result(hints.next_("forge goal status", f"{len(goals)} goal(s) kept their counts "
                              "here"), lines, {"goals": goals})


def history(args) -> Result:
    from forge_runtime.goal.store.ledger import Ledger
    from forge_runtime.goal.views import status as core

    project = _project()
    nonce = core.chosen_nonce(project, args.nonce)
    if nonce is None:
        return Result(hints.wait(NO_GOAL), ["no goal in this repository"], [])
    entries = Ledger(project.ledger_root, nonce).history()
    return Result(hints.next_(f"forge goal status --nonce {nonce}"), timeline(entries), entries)


def _row(entry: dict, label: str, detail: str = "") -> str:
    goal = entry["goal"]
    count = f"{goal['turn_count']}/{goal['turn_ceiling']}"
    return f"{entry['at']}  {label:<11} {count:>7}  {hints.sanitize(detail)}".rstrip()


def _event_row(entry: dict) -> str | None:
    """The line of a record that is an event of the timeline, or None (a session bound)."""
    kind, goal = entry["kind"], entry["goal"]
    if kind == "activate":
        if goal["activation_count"] == 1:
            return _row(entry, "activated", goal["objective"])
        return _row(entry, "tranche", f"activation {goal['activation_count']}: 20 more turns")
    if kind == "charge":  # only late ones get a line of their own
        return _row(entry, "late charge", f"turn {goal['turn_count']}, charged late"
                    + _tokens_note([entry]))
    if kind == "checkpoint":
        step = entry.get("next_step")
        return _row(entry, "checkpoint", f"next: {step}" if step else "no unchecked step")
    if kind == "exhaust":
        notes = [f"budget spent ({entry.get('ceiling', 'turns')})"]
        if entry.get("late_turns"):
            notes.append(f"{entry['late_turns']} of its turns charged late")
        if entry.get("owed"):
            notes.append(f"{len(entry['owed'])} turn(s) owed to the next tranche")
        return _row(entry, "exhausted", "; ".join(notes))
    if kind == "overrun":
        return _row(entry, "over budget", f"a turn the host started after the end (no "
                    f"person's prompt), denied its work{_tokens_note([entry])}")
    labels = {"reopen": "reopened", "complete": "met", "cancel": "ended"}
    if kind in labels:
        return _row(entry, labels[kind], entry.get("reason") or "")
    return None


def _tokens_note(charges: list[dict]) -> str:
    """`, 35k tok` for charges whose transcript showed usage; nothing for ones without (a
    transcript that records none, or charges from before forge recorded usage)."""
    from forge_runtime.goal.views.gauge import tokens_text

    spent = [entry["usage"].get("counted", 0) for entry in charges
             if isinstance(entry.get("usage"), dict) and entry["usage"].get("by_model")]
    return f", {tokens_text(sum(spent))} tok" if spent else ""


def timeline(entries: list[dict]) -> list[str]:
    """The goal's story, one line each: activations, tranches, runs of charged turns, late
    charges (`"late": true`), the checkpoint and the end."""
    lines: list[str] = []
    charged: list[dict] = []

    def close_run() -> None:
        if charged:
            first, last = charged[0]["goal"]["turn_count"], charged[-1]["goal"]["turn_count"]
            lines.append(_row(charged[-1], "charged", (f"turn {first}" if first == last
                                                       else f"turns {first}-{last}")
                              + _tokens_note(charged)))
            charged.clear()

    for entry in entries:
        if entry["kind"] == "charge" and entry.get("late") is not True:
            charged.append(entry)
            continue
        row = _event_row(entry)
        if row is not None:
            close_run()
            lines.append(row)
    close_run()
    return lines
