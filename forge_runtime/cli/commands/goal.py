"""`forge goal status|sync|verify|history`: see and check the durable goal ledger.

These only read the ledger (sync rewrites state.md from it); a goal is activated by a
person's `/goal` in Claude Code and charged by forge's Stop hook, never from here.
"""

from __future__ import annotations

from forge_runtime import hints
from forge_runtime.errors import EXIT_REFUSED, ForgeError
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
            ("history", history, "every record of the goal, oldest first")):
        action = actions.add_parser(name, parents=[common], help=text, description=text)
        action.add_argument("--nonce", help="the goal to show (default: state.md's)")
        action.set_defaults(handler=handler)


def _project():
    from forge_runtime.project import find_project

    return find_project()


def _summary(goal: dict) -> list[str]:
    return [f"goal        {goal['nonce']}",
            f"objective   {goal['objective']}",
            f"status      {goal['status']}",
            f"turns       {goal['turn_count']} of {goal['turn_ceiling']} "
            f"({goal['activation_count']} activation(s) x 20)"]


def _brief_of(project, goal: dict):
    """The frozen brief this goal started from, relative to the project, or None."""
    from forge_runtime.clarify.store import brief_of_goal

    found = brief_of_goal(project.forge_dir, goal["objective"])
    return None if found is None else found.relative_to(project.root)


def _way_on(goal: dict) -> hints.Hint:
    status = goal["status"]
    if status == "exhausted":
        from forge_runtime.goal.events import exhausted_hint

        return exhausted_hint(goal)
    if status == "active":
        return hints.wait("the goal's session runs; its Stop hook charges each turn",
                          or_=[f"forge goal history --nonce {goal['nonce']}"])
    return hints.done(f"goal {status}; /goal with the same objective reopens it")


def status(args) -> Result:
    from forge_runtime.goal import status as core
    from forge_runtime.goal.ledger import TAMPERED

    project = _project()
    nonce = core.chosen_nonce(project, args.nonce)
    if nonce is None:
        return Result(hints.wait(NO_GOAL), ["no goal in this repository"], {"goal": None})
    seen = core.view(project, nonce)
    lines = _summary(seen.goal) + [f"next step   {seen.next_step or '(none in the checklist)'}"]
    if seen.late_turns:
        lines.append(f"late        {seen.late_turns} turn(s) charged late (their Stop hooks did "
                     "not finish)")
    brief = _brief_of(project, seen.goal)
    if brief is not None:
        lines.append(f"brief       {brief}")
    data = {"goal": seen.goal, "state_turn_count": seen.state_turn_count,
            "next_step": seen.next_step, "consistent": seen.consistent,
            "late_turns": seen.late_turns, "brief": None if brief is None else str(brief)}
    if not seen.consistent:
        lines.append(f"state.md    {seen.problem}")
        tampered = seen.problem_code in (None, TAMPERED)
        refusal = ForgeError(seen.problem, f"forge goal sync --nonce {nonce}" if tampered
                             else seen.problem_fix, exit_code=EXIT_REFUSED,
                             code=TAMPERED if tampered else seen.problem_code)
        return Result(refusal.hint(), lines, {**data, "code": refusal.code}, refusal.exit_code)
    if seen.state_turn_count != seen.goal["turn_count"]:
        lines.append(f"state.md    {seen.state_turn_count} turns (behind the ledger)")
        return Result(hints.next_(f"forge goal sync --nonce {nonce}", "catch state.md up"),
                      lines, data)
    return Result(_way_on(seen.goal), lines, data)


def sync(args) -> Result:
    from forge_runtime.goal import status as core

    project = _project()
    nonce = core.chosen_nonce(project, args.nonce)
    if nonce is None:
        return Result(hints.wait(NO_GOAL), ["no goal to sync"], {"goal": None})
    goal = core.sync(project, nonce)
    return Result(hints.next_(f"forge goal status --nonce {nonce}", "state.md matches"),
                  [f"state.md synced: {goal['turn_count']} of {goal['turn_ceiling']} turns"],
                  {"goal": goal})


def verify(args) -> Result:
    from forge_runtime.goal import status as core
    from forge_runtime.goal.ledger import Ledger
    from forge_runtime.goal.witness import Witness

    project = _project()
    if args.nonce:
        nonce = core.chosen_nonce(project, args.nonce)
        goals = [Ledger(project.ledger_root, nonce, witness=Witness(project)).verified()]
    else:
        goals = core.verify_all(project)
    lines = [f"ok  {goal['nonce']}  {goal['status']:<9} {goal['turn_count']}/"
             f"{goal['turn_ceiling']}  {goal['objective']}" for goal in goals]
    if not goals:
        return Result(hints.wait(NO_GOAL), ["no goals to verify"], {"goals": []})
    return Result(hints.done(f"{len(goals)} goal ledger(s) verified"), lines, {"goals": goals})


def _late_note(entry: dict) -> str:
    """How a record shows charging that its own Stop did not do."""
    if entry.get("late") is True:
        return "  late"
    notes = []
    if entry.get("late_turns"):
        notes.append(f"{entry['late_turns']} late")
    if entry.get("owed"):
        notes.append(f"{len(entry['owed'])} owed to the next tranche")
    return f"  ({', '.join(notes)})" if notes else ""


def history(args) -> Result:
    from forge_runtime.goal import status as core
    from forge_runtime.goal.ledger import Ledger

    project = _project()
    nonce = core.chosen_nonce(project, args.nonce)
    if nonce is None:
        return Result(hints.wait(NO_GOAL), ["no goal in this repository"], [])
    entries = Ledger(project.ledger_root, nonce).history()
    lines = [f"{entry['seq']:>5}  {entry['at']}  {entry['kind']:<10} "
             f"{entry['goal']['turn_count']}/{entry['goal']['turn_ceiling']} "
             f"{entry['goal']['status']}{_late_note(entry)}" for entry in entries]
    return Result(hints.next_(f"forge goal status --nonce {nonce}"), lines, entries)
