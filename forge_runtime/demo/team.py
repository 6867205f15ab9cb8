"""The demo's team view: every goal of the demo's two clones through their git remote, as
a team lead reads a week of goals (`forge goal report --remote origin`)."""

from __future__ import annotations

from forge_runtime.demo.core import PERSON, TEAMMATE, Demo, DemoFailed, Section


def team_report(demo: Demo) -> Section:
    """The goals Ada ran in the project and the one Ben's fresh clone continued, read back
    from the remote: who opened each tranche, what each spent, how each ended, the totals
    per person, checked against the two ledgers' own counts."""
    clone = demo.workdir / "fresh-clone"
    theirs = demo.forge("goal", "verify", "--json", cwd=clone).json()["goals"]
    for goal in theirs:  # what the clone's publisher does after its Stops, now
        demo.forge("goal", "publish", "--nonce", goal["nonce"], cwd=clone)
    ours = demo.forge("goal", "verify", "--json").json()["goals"]
    page = demo.workdir / "team-report.html"
    shown = demo.forge("goal", "report", "--remote", "origin", "--html", str(page))
    report = demo.forge("goal", "report", "--remote", "origin", "--json")
    if shown.exit_code != 0 or report.exit_code != 0:
        raise DemoFailed(f"forge goal report --remote origin failed: {shown.stdout[-300:]}")
    told = report.json()
    counted = {goal["nonce"]: goal["turn_count"] for goal in ours}
    counted.update({goal["nonce"]: goal["turn_count"] for goal in theirs})  # joined there
    every = told["totals"]["all"]
    people = told["totals"]["person"]
    ada, ben = (f"{name} <{email}>" for name, email in (PERSON, TEAMMATE))
    continued = next((one["nonce"] for one in told["goals"] if one["people"] == [ada, ben]),
                     None)
    if every["turns"] != sum(counted.values()) or every["goals"] != len(counted) \
            or set(people) != {ada, ben} or told["refused"] or continued is None:
        raise DemoFailed(f"the team report counts {every['turns']} turns of {every['goals']} "
                         f"goals by {sorted(people)}, the ledgers {sum(counted.values())} of "
                         f"{len(counted)} by {[ada, ben]}")
    lines = shown.stdout.splitlines()
    per_person = lines.index("per person")
    shared = next(index for index, line in enumerate(lines)
                  if line.startswith(continued[:12]))
    return Section("A team's goals through the git remote", [
        f"`forge goal report --remote origin` read {every['goals']} goals, Ada's in the "
        "project and the one Ben's fresh clone continued, each chain verified before it "
        "counts; each tranche's spend goes to whoever opened it:",
        *(f"    {line}" for line in lines[shared:shared + 3]),
        *(f"    {line}" for line in lines[per_person:per_person + 3]),
        *(f"    {line}" for line in lines if line.startswith("total ")),
        f"the same {every['turns']} turns the two ledgers count; with --html, a "
        "self-contained page of the totals per person, branch, model and week",
    ])
