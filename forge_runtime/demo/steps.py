"""The demo's story, one small step per thing forge does. See the package docstring to add one."""

from __future__ import annotations

import json
import shlex
import shutil
import subprocess
import sys
import tempfile
import time
import uuid
from collections import Counter
from pathlib import Path

from forge_runtime import hints
from forge_runtime.claude_binary import find_claude
from forge_runtime.demo.core import TEAMMATE, Demo, DemoFailed, Section, set_identity
from forge_runtime.demo.team import team_report
from forge_runtime.goal.budget.pricing import dollars
from forge_runtime.goal.store import layout, state_file
from forge_runtime.goal.store.ledger import Ledger, goal_nonces
from forge_runtime.hint_audit import json_problems, output_problems
from forge_runtime.hostkit.receiver import Receiver
from forge_runtime.project import find_project
from forge_runtime.sandbox.posture import OPT_OUT, OPT_OUT_LINE

GOAL = "the file done.txt exists"


def install_forge(demo: Demo) -> Section:
    """A new git project, with forge's files installed the way a person would; the kernel
    layer a /goal needs is on where the host can run it, else the project opts out."""
    run = demo.forge("init", "--json")
    if run.exit_code != 0:
        raise DemoFailed(f"forge init failed: {run.stderr.strip() or run.stdout.strip()}")
    sandbox = json.loads(run.stdout)["sandbox"]
    installed = sorted(p.relative_to(demo.project).as_posix()
                       for p in (demo.project / ".forge").rglob("*") if p.is_file())
    where = demo.project if demo.kept else "in a temporary directory (--keep keeps it)"
    lines = [f"a new git project {where}",
             f"`forge init` installed {len(installed)} files under .forge/ "
             f"(workflows, skills, the goal state file {'.forge/local/state.md'})"]
    if sandbox["outcome"] == "skipped":
        (demo.project / ".forge" / "guard.yaml").write_text(OPT_OUT_LINE + "\n")
        lines += [f"this machine cannot run the host's sandbox ({sandbox['problem']}), so a "
                  "/goal would be refused; the demo opts its project out, as a person would "
                  f"(`{OPT_OUT}`): its goals run unsandboxed"]
    else:
        lines += ["it also turned on the host's kernel sandbox with forge's deny rules "
                  "(.claude/settings.json), which a /goal needs; `forge sandbox disable` "
                  "turns it off"]
    return Section("A new project with forge installed", lines)


def person_sets_a_goal(demo: Demo) -> Section:
    """A person types `/goal`; the host works turn by turn while forge's hooks watch."""
    session = demo.session("goal", f"/goal {GOAL}", args=("--permission-mode", "acceptEdits"))
    if session.terminal_reason != "completed":
        raise DemoFailed(f"the /goal session ended with {session.terminal_reason!r}, not "
                         f"'completed' (host stderr: {session.stderr.strip()[:200]})")
    if errors := session.plugin_errors():
        raise DemoFailed(f"the host reported a plugin problem: {errors[0]}")
    turns = session.model_requests()
    checks = [r for r in session.requests if r["rule"] and r["rule"].startswith("goal check")]
    fired = Counter(hook.event for hook in session.hooks)
    failed = [hook for hook in session.hooks if hook.exit_code != 0]
    if failed:
        raise DemoFailed(f"forge's {failed[0].event} hook exited {failed[0].exit_code}: "
                         f"{failed[0].stderr.strip()[:200]}")
    slowest = max(hook.duration_s for hook in session.hooks)
    created = (demo.project / "done.txt").exists()
    verdict = "met" if checks and checks[-1]["rule"] == "goal check - met" else "not met"
    return Section(f"A person types: /goal {GOAL}", [
        f"The real Claude Code host worked {len(checks)} turns ({len(turns)} model requests); "
        f"after each turn it asked its goal evaluator, whose last answer was: {verdict}.",
        f"The model {'created' if created else 'did NOT create'} done.txt with its Write tool.",
        "forge's hooks fired with the host's real input: "
        + ", ".join(f"{event} x{count}" for event, count in fired.items())
        + f" (all exit 0, slowest {slowest * 1000:.0f} ms).",
    ])


def ledger_charged_the_turns(demo: Demo) -> Section:
    """The goal ledger recorded the person's activation and charged each turn."""
    status = demo.forge("goal", "status", "--json")
    verify = demo.forge("goal", "verify", "--json")
    if status.exit_code != 0 or verify.exit_code != 0:
        raise DemoFailed(f"forge goal status/verify failed: {status.stdout}{verify.stdout}")
    goal = status.json().get("goal") or {}
    if not goal.get("turn_count"):
        raise DemoFailed("the goal ledger charged no turn for the /goal session")
    usd = (status.json().get("budget") or {}).get("usd") or {}
    if not usd.get("prices"):
        raise DemoFailed("the goal's turns were not priced (no sealed price table)")
    demo.forge("goal", "status")  # the text a person sees, for the hint-contract step
    return Section("What forge recorded", [
        f"goal {goal['nonce']}: \"{goal['objective']}\", status {goal['status']}",
        f"turns charged {goal['turn_count']} of {goal['turn_ceiling']} "
        f"({goal['activation_count']} activation by a person); at the ceiling forge stops "
        "native autonomy",
        f"priced ${usd['used']:.4f} at API prices ({usd['prices']}, sealed into the "
        "activation); `goal: {tranche: {usd: 5}}` in .forge/guard.yaml would cap it",
        "ledger: hash-chained records in the project's .git/forge-goals/, "
        f"verified intact ({verify.json()['_hint'].get('rationale')})",
    ])


BUDGET_GOAL = "every test passes on the first try"
BUDGET_CHECKLIST = "- [x] find the failing tests\n- [ ] fix the parser\n- [ ] fix the printer\n"


def budget_stops_native_autonomy(demo: Demo) -> Section:
    """A goal that is never met: forge charges 20 turns, then ends native autonomy, naming
    the checkpoint; the status line shows the spent budget."""
    state_path = find_project(demo.project).state_path
    state_path.write_text(state_path.read_text(encoding="utf-8") + BUDGET_CHECKLIST,
                          encoding="utf-8")
    session = demo.session("budget", f"/goal {BUDGET_GOAL}", script="budget")
    stops = [hook.reply["stopReason"] for hook in session.hooks_for("Stop")
             if hook.reply and "stopReason" in hook.reply]
    if session.terminal_reason != "stop_hook_prevented" or not stops \
            or "FORGE_GOAL_BUDGET_EXHAUSTED" not in stops[0]:
        raise DemoFailed(f"the never-met goal ended with {session.terminal_reason!r}, not "
                         "forge's FORGE_GOAL_BUDGET_EXHAUSTED stop")
    goal = state_file.read(find_project(demo.project).state_path).goal
    if demo.forge("goal", "verify", "--json").exit_code != 0:
        raise DemoFailed("the goal ledger did not verify after exhaustion")
    reason = stops[0].splitlines()
    shown = demo.forge("statusline", "--session", session.session_id or "")
    return Section(f"A goal that is never met: /goal {BUDGET_GOAL}", [
        f"The host's evaluator said \"not met\" after every turn; the native /goal alone "
        f"would go on. forge charged {len(session.hooks_for('Stop'))} Stops: "
        f"{goal['turn_count']} of {goal['turn_ceiling']} turns, status {goal['status']}.",
        f"Then forge's Stop hook answered continue: false and the host ended the session "
        f"({session.terminal_reason}). Its stop reason:",
        *(f"    {line}" for line in reason),
        "A person's /goal with the same objective adds one tranche of 20 (40 in all); "
        "clearing or resuming never resets the count.",
        "The status line (forge init --statusline) of that session now reads:",
        f"    {shown.stdout.splitlines()[0] if shown.stdout else '(nothing)'}",
    ])


MONEY_GOAL = "the cost report is written"
LIMIT_GOAL = "the weekly report is written"


def money_and_the_plan(demo: Demo) -> Section:
    """A goal held to a dollar ceiling stops within one tool call of crossing it, in its
    first turn; a goal the host stops at the plan's usage limit ends its autonomy there."""
    import yaml

    guard = demo.project / ".forge" / "guard.yaml"
    before = guard.read_text(encoding="utf-8") if guard.exists() else None
    settings = yaml.safe_load(before or "") or {}
    settings.setdefault("goal", {})["tranche"] = {"usd": 1}
    guard.write_text(yaml.safe_dump(settings), encoding="utf-8")
    try:
        accept = ("--permission-mode", "acceptEdits")
        spent = demo.session("money", f"/goal {MONEY_GOAL}", script="money", args=accept,
                             login="subscription")
        demo.session("limit", f"/goal {LIMIT_GOAL}", script="money", args=accept,
                     login="subscription")
    finally:
        guard.write_text(before, encoding="utf-8") if before is not None else guard.unlink()
    denied = [reason for reason in _denials(spent).get("Write", [])
              if reason.startswith("FORGE_GOAL_BUDGET_EXHAUSTED")]
    if not denied:
        raise DemoFailed("no tool call of the dollar-bound goal was denied at its ceiling")
    goals = {goal["objective"]: goal for goal in _goals(demo)}
    money, limit = goals.get(MONEY_GOAL), goals.get(LIMIT_GOAL)
    if money is None or money["status"] != "exhausted":
        raise DemoFailed(f"the dollar-bound goal was not stopped: {money}")
    if limit is None or limit.get("usage_limited") is not True or limit["status"] != "exhausted":
        raise DemoFailed(f"the usage limit did not end the second goal's autonomy: {limit}")
    reads = sum(1 for hook in spent.hooks_for("PreToolUse"))
    status = demo.forge("goal", "status", "--nonce", limit["nonce"])
    return Section("Money and the plan's allowance", [
        "`goal: {tranche: {usd: 1}}` in .forge/guard.yaml; each scripted answer costs about "
        f"$0.30 at API prices. Of {reads} tool calls in the goal's first turn, forge denied "
        f"the one after the ceiling: {dollars(money['picousd'])} of "
        f"{dollars(money['usd_ceiling'])}, then the Stop ended autonomy:",
        f"    {denied[0].splitlines()[0][:150]}",
        "A goal whose first request met the plan's usage limit (a subscription's 429): the "
        "host ended the turn and forge charged it with the host's usage-limit mark: the goal "
        f"is {limit['status']} there (`claude -p` stops; the interactive host would continue "
        "by itself after the reset, and forge refuses that with FORGE_GOAL_USAGE_LIMIT). "
        "`forge goal status` says:",
        *(f"    {line}" for line in status.stdout.splitlines() if line.startswith("usage limit")),
        "`goal: {plan: {five_hour: 80, seven_day_spend: 10}}` holds a goal to a share of the "
        "plan's windows, read from the host's own figures (forge's status line, Codex's "
        "rollout).",
    ])


def _goals(demo: Demo) -> list[dict]:
    """Every goal of the demo project, as its ledger has it now."""
    project = find_project(demo.project)
    return [Ledger(project.ledger_root, nonce).current().goal for nonce in goal_nonces(project)]


def _denials(session) -> dict[str, list[str]]:
    """Tool name -> the lines of forge's deny reason, from the hook calls the host made."""
    denied = {}
    for hook in session.hooks_for("PreToolUse"):
        output = (hook.reply or {}).get("hookSpecificOutput", {})
        if output.get("permissionDecision") == "deny":
            denied[hook.stdin["tool_name"]] = output["permissionDecisionReason"].splitlines()
    return denied


def guard_refuses_writes(demo: Demo) -> Section:
    """A read-only clarify step cannot write; no session can delete the goal ledger."""
    session_id = str(uuid.uuid4())
    if demo.forge("mode", "enter", "clarifier", "--session", session_id).exit_code != 0:
        raise DemoFailed("forge mode enter clarifier failed")
    allow_all = ("--permission-mode", "acceptEdits", "--allowedTools", "Write,Bash")
    clarify = demo.session("clarify", "clarify the request", script="guard",
                           args=("--session-id", session_id, *allow_all))
    demo.forge("mode", "exit", "--session", session_id)
    tidy = demo.session("tidy", "tidy up the repository", script="guard", args=allow_all)
    in_clarify, in_tidy = _denials(clarify), _denials(tidy)
    if set(in_clarify) != {"Write", "Bash"} or set(in_tidy) != {"Bash"}:
        raise DemoFailed(f"forge's guard denied {sorted(in_clarify)} and {sorted(in_tidy)}, "
                         "not Write+Bash and Bash")
    if (demo.project / "brief.md").exists() or not any(
            (demo.project / ".git" / "forge-goals").iterdir()):
        raise DemoFailed("a denied tool changed the project anyway")
    return Section("The guard: a read-only step cannot write, and nobody deletes the ledger", [
        f"`forge mode enter clarifier --session {session_id}` made that session read-only "
        "(the host itself was told to allow Write and Bash)",
        "It called Write: " + in_clarify["Write"][0],
        "It called Bash: " + in_clarify["Bash"][0],
        "After `forge mode exit`, a session ran `rm -rf .gi{s..u}/forge-goals` (the brace "
        "sequence makes `.git`): " + in_tidy["Bash"][0],
        f"brief.md was never written and the ledger is intact; the model was told the way "
        f"on: {in_tidy['Bash'][1]}",
    ])


def nobody_switches_forge_off(demo: Demo) -> Section:
    """The agent cannot switch forge off: not with the host's CLI, not in its settings."""
    allow_all = ("--permission-mode", "acceptEdits", "--allowedTools", "Write,Bash")
    session = demo.session("switch-off", "switch forge off for this session", script="guard",
                           args=allow_all)
    denied = _denials(session)
    if "Bash" not in denied:
        raise DemoFailed(f"forge's guard denied {sorted(denied)}, not the host's CLI")
    if (demo.project / ".claude" / "settings.local.json").exists():
        raise DemoFailed("a Write switched forge off in the host's settings")
    # With forge's kernel layer on, the host's own deny rule refuses the Write before any
    # hook runs; without it, forge's guard does.
    wrote = denied["Write"][0] if "Write" in denied else \
        "refused by the host itself, by the deny rule forge's kernel layer gave it"
    return Section("Nobody switches forge off from inside the session", [
        "It ran `claude plugin disable forge@forge`: " + denied["Bash"][0],
        'It wrote {"disableAllHooks": true} to .claude/settings.local.json: ' + wrote,
        "forge stays on, in every permission mode: its hooks, its plugin files and the "
        "host's settings at every scope are part of what it protects",
    ])


def clarify_freezes_a_brief(demo: Demo) -> Section:
    """`/forge:clarify`: the read-only clarifier answers; forge, not the model, freezes it."""
    session = demo.session("clarify-skill", "/forge:clarify export the monthly report as CSV",
                           script="clarify", args=("--permission-mode", "acceptEdits"))
    (stop,) = session.hooks_for("SubagentStop") or [None]
    brief = demo.project / ".forge" / "notes" / "brief.md"
    if stop is None or not brief.is_file() or (demo.project / "brief.md").exists():
        raise DemoFailed("the clarifier's brief was not frozen by forge's SubagentStop hook")
    shown = demo.forge("brief", "show")
    if shown.exit_code != 0:
        raise DemoFailed(f"forge brief show failed: {shown.stdout}{shown.stderr}")
    said = stop.reply["systemMessage"].splitlines()
    return Section("/forge:clarify: a frozen brief before the work", [
        "The skill handed the wish to forge:clarifier, which may only read and ask; "
        "its Write was refused.",
        f"forge's SubagentStop hook froze its answer at {brief.relative_to(demo.project)} "
        "and told the main session (through the Agent call's PostToolUse):",
        *(f"    {line}" for line in said),
    ])


PRD_BODY = ("## Goal\nforge --verbose prints each step.\n\n## Acceptance criteria\n- a test "
            "sees every step\n\n## Boundaries\n- no other flag changes\n\n"
            "## Unknowns and assumptions\n- none\n")
EVIDENCE_BODY = "## Method\nRan the tests.\n\n## Result\nAll passed.\n"


def artifacts_earn_activation(demo: Demo) -> Section:
    """A PRD cannot be activated on its words alone: evidence linked to it earns it."""
    created = demo.forge("new", "prd", "Verbose flag", "--body", PRD_BODY,
                         "--affected-files", "src/cli.py", "--json")
    prd = created.json()["id"]
    refused = demo.forge("activate", prd)
    evidence = demo.forge("new", "evidence", f"Evidence for {prd}", "--verdict", "supports",
                          "--congruence", "CL3", "--type", "test", "--body", EVIDENCE_BODY,
                          "--json").json()["id"]
    demo.forge("link", evidence, prd)
    activated = demo.forge("activate", prd, "--json")
    if refused.exit_code != 2 or activated.exit_code != 0:
        raise DemoFailed(f"activating {prd} without evidence exited {refused.exit_code} and "
                         f"with it {activated.exit_code}, not 2 and 0")
    _, refusal = hints.split_rendered(refused.stdout + refused.stderr)
    return Section("A PRD earns its activation with evidence", [
        f"`forge new prd` wrote {created.json()['path']}",
        f"`forge activate {prd}` without evidence: Error: {refusal.error}",
        f"  Fix: {refusal.text}",
        f"`forge new evidence` + `forge link {evidence} {prd}`, then `forge activate {prd}`: "
        f"active, R_eff {activated.json()['r_eff']:.2f}",
    ])


DEMO_GATES = """\
gates:
  docs:
    command: grep -q forge README.md
    boundary: [README.md]
  result:
    command: test -f done.txt
    boundary: [done.txt]
"""


def gates_rerun_only_what_changed(demo: Demo) -> Section:
    """Final gates: receipts bound to the files they cover, so an edit stales only its gate."""
    (demo.project / ".forge" / "gates.yaml").write_text(DEMO_GATES)
    ran = demo.forge("gate", "run")
    with (demo.project / "README.md").open("a") as readme:
        readme.write("Edited after the gates ran.\n")
    status = demo.forge("gate", "status", "--json")
    if ran.exit_code != 0 or status.exit_code != 0:
        raise DemoFailed(f"forge gate run/status failed: {ran.stdout[-300:]}{status.stdout}")
    payload = status.json()
    states = {gate["name"]: gate["state"] for gate in payload["gates"]}
    if states != {"docs": "stale", "result": "fresh"}:
        raise DemoFailed(f"after editing README.md the gates were {states}")
    return Section("Final gates: an edit stales only the gate that covers it", [
        "`forge gate run` ran both gates of .forge/gates.yaml and sealed a receipt for each",
        "README.md was edited; `forge gate status` then said: "
        + ", ".join(f"{name} {state}" for name, state in states.items()),
        f"and named only that gate: Next: {payload['_next_action']}",
    ])


VERIFIED_GOAL = "the parser is fixed"
VERIFIED_GATES = ("gates: {unit-tests: {command: grep -q good src/parser.py, "
                  "boundary: [\"src/**\"]}}\n")


def done_means_verified(demo: Demo) -> Section:
    """The host's evaluator calls the goal met after one turn while its final gate fails:
    forge keeps the goal going, each turn charged, until its own run of the gate passes."""
    (demo.project / "src").mkdir(exist_ok=True)
    (demo.project / "src" / "parser.py").write_text("parse = None\n")
    (demo.project / ".forge" / "gates.yaml").write_text(VERIFIED_GATES)
    session = demo.session("verified", f"/goal {VERIFIED_GOAL}", script="verified",
                           args=("--permission-mode", "acceptEdits", "--allowedTools", "Bash"))
    said = [(hook.reply or {}).get("hookSpecificOutput", {}).get("additionalContext")
            or (hook.reply or {}).get("systemMessage", "") for hook in session.hooks_for("Stop")]
    met = sum(r["rule"] == "evaluator says met" for r in session.requests)
    status = demo.forge("goal", "status", "--json")
    verified = demo.forge("goal", "verify-gates")
    goal = status.json().get("goal") or {}
    if not said or not said[-1].startswith("FORGE_GOAL_VERIFIED") \
            or goal.get("status") != "complete" or verified.exit_code != 0:
        raise DemoFailed(f"the goal met too early ended {goal.get('status')!r} with "
                         f"{said[-1:]!r}, not complete and verified by forge's own run")
    return Section(f"Done means verified: /goal {VERIFIED_GOAL}", [
        f"The host's evaluator said met after the first turn ({met} verdict in all), while "
        "the final gate unit-tests had never passed. forge held the verdict and its Stop "
        "hook told the model:",
        *(f"    {line}" for line in said[0].splitlines()[:1] + said[0].splitlines()[-2:-1]),
        f"The model ran the gate, read the failure, fixed src/parser.py and ran it again: "
        f"{len(said)} Stops, {goal['turn_count']} turns, every one charged.",
        "forge's own confined run of the recorded gate then passed; its last Stop said:",
        f"    {said[-1].splitlines()[0]}",
        f"`forge goal verify-gates` exits {verified.exit_code}.",
    ])


def ledger_follows_the_clone(demo: Demo) -> Section:
    """With `goal: {remote: origin}` the spent budget is published on the repository's
    remote; a fresh clone's /goal with the same objective goes on from its count."""
    import yaml


    def git(*args: str, cwd: Path) -> None:
        subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True, timeout=60)

    origin, clone = demo.workdir / "origin.git", demo.workdir / "fresh-clone"
    git("init", "-q", "--bare", str(origin), cwd=demo.workdir)
    git("remote", "add", "origin", str(origin), cwd=demo.project)
    git("push", "-q", "origin", "HEAD:main", cwd=demo.project)
    rules_path = demo.project / ".forge" / "guard.yaml"
    rules = (yaml.safe_load(rules_path.read_text()) if rules_path.exists() else None) or {}
    rules.setdefault("goal", {})["remote"] = "origin"
    rules_path.write_text(yaml.safe_dump(rules, default_flow_style=None))
    spent = state_file.read(find_project(demo.project).state_path).goal
    published = demo.forge("goal", "publish", "--nonce", spent["nonce"])
    git("clone", "-q", str(origin), str(clone), cwd=demo.workdir)
    set_identity(clone, TEAMMATE)  # a teammate's clone
    demo.forge("init", "--json", cwd=clone)
    (clone / ".forge" / "guard.yaml").write_text(rules_path.read_text())
    session = demo.session("fresh-clone", f"/goal {BUDGET_GOAL}", script="budget", cwd=clone)
    stops = [hook.reply["stopReason"] for hook in session.hooks_for("Stop")
             if hook.reply and "stopReason" in hook.reply]
    goal = state_file.read(find_project(clone).state_path).goal or {}
    shown = demo.forge("goal", "status", cwd=clone).stdout.splitlines()
    if published.exit_code != 0 or not stops or "40 of 40 turns" not in stops[0] \
            or goal.get("nonce") != spent["nonce"]:
        raise DemoFailed(f"the fresh clone's /goal did not go on from the remote's count: "
                         f"{(stops or [published.stdout])[0][:200]}")
    return Section("The budget follows the goal to a fresh clone", [
        "`goal: {remote: origin}` in .forge/guard.yaml; `forge goal publish` put the spent "
        f"goal's ledger on the remote as refs/forge/goals/{spent['nonce']}",
        f"A fresh clone's /goal {BUDGET_GOAL} took in the remote's 20 turns under the same "
        "nonce and added the person's second tranche; forge stopped it at:",
        f"    {stops[0].splitlines()[0]}",
        *(f"    {line}" for line in shown if line.startswith(("count from", "remote "))),
    ])


NOTIFY_GOAL = "the weekly report is sent"


def a_goals_end_reaches_the_person(demo: Demo) -> Section:
    """A goal that ends while nobody watches sends one message to the person's channel: a
    webhook the demo listens on, on 127.0.0.1, as ntfy would."""
    import yaml


    folder = Path(tempfile.mkdtemp(prefix="fdn-", dir="/tmp" if Path("/tmp").is_dir()
                                   else None))  # a Unix socket's path is short
    receiver = Receiver(unix_path=folder / "ntfy.sock").start()
    guard = demo.project / ".forge" / "guard.yaml"
    before = guard.read_text(encoding="utf-8") if guard.exists() else None
    settings = yaml.safe_load(before or "") or {}
    settings["notify"] = {"channels": [{"type": "webhook",
                                        "url": f"{receiver.url}/my-goals"}]}
    guard.write_text(yaml.safe_dump(settings, default_flow_style=None), encoding="utf-8")
    try:
        session = demo.session("notify", f"/goal {NOTIFY_GOAL}", script="notify",
                               login="subscription", relays={receiver.port:
                                                             str(receiver.unix_path)})
        told = _posts_after(receiver, session)
        tested = demo.forge("notify", "test")
    finally:
        guard.write_text(before, encoding="utf-8") if before is not None else guard.unlink()
        receiver.close()
        shutil.rmtree(folder, ignore_errors=True)
    ends = [post for post in told if post["headers"].get("Title") ==
            "forge: goal stopped at the usage limit"]
    if len(ends) != 1 or tested.exit_code != 0:
        raise DemoFailed(f"the goal's end sent {len(ends)} message(s), not one (`forge notify "
                         f"test` exited {tested.exit_code}; the outbox: {_outbox_says(demo)})")
    headers = ends[0]["headers"]
    slowest = max(hook.duration_s for hook in session.hooks)
    return Section("A goal's end reaches the person, wherever they are", [
        "`notify: {channels: [{type: webhook, url: ...}]}` in .forge/guard.yaml (or the "
        "person's own ~/.config/forge/notify.yaml; an agent can write neither); the demo "
        "listens on 127.0.0.1 as an ntfy server would, for a phone.",
        f"/goal {NOTIFY_GOAL} met the plan's usage limit at its first request; the hook that "
        "recorded the end answered the host at once and left the sending to a process of its "
        f"own (slowest hook {slowest * 1000:.0f} ms). The webhook got one POST:",
        f"    Title: {headers['Title']} · Priority: {headers['Priority']} · "
        f"Tags: {headers['Tags']}",
        *(f"    {line}" for line in ends[0]["body"].splitlines()),
        "A channel that fails is kept and shown by forge goal status and forge doctor; "
        "`forge notify test` sends a sample through every channel: "
        + tested.stdout.splitlines()[0],
    ])


def _posts_after(receiver, session, seconds: float = 60.0) -> list[dict]:
    """What the receiver got once the sender the session's hooks started is done: at once
    in the demo's network namespace (it waits for the sender), else within `seconds` (a
    loaded machine starts the sender's interpreter late)."""
    deadline = time.monotonic() + seconds
    while not receiver.posts and time.monotonic() < deadline:
        time.sleep(0.1)
    return list(receiver.posts)


def _outbox_says(demo: Demo) -> str:
    """The outbox's records and the sender's log, for a demo step that got no message."""
    folder = Path(layout.outbox_dir(find_project(demo.project).ledger_root))
    found = sorted(folder.glob("*.json")) if folder.is_dir() else []
    log = folder / layout.SENDER_LOG
    return "; ".join([f"{path.name}: {path.read_text(encoding='utf-8')[:200]}"
                      for path in found]
                     + ([f"sender.log: {log.read_text(encoding='utf-8')[-300:]}"]
                        if log.is_file() else []))


def hint_contract(demo: Demo) -> Section:
    """Every forge output the demo produced ends with exactly one hint, naming real commands."""
    checked = []
    for run in demo.forge_runs:
        shown = "forge " + shlex.join(run.args)  # one line, as a person would type it
        as_json = "--json" in run.args
        problems = (json_problems(run.stdout, run.stderr) if as_json
                    else output_problems(run.stdout + run.stderr))
        if problems:
            raise DemoFailed(f"`{shown}` breaks the hint contract: {problems[0]}")
        ending = (run.json()["_hint"]["marker"] if as_json
                  else hints.split_rendered(run.stdout + run.stderr)[1].marker)
        checked.append(f"{shown} -> {ending}")
    return Section("Every forge output ends with one next step", checked)


IMPOSSIBLE_GOAL = "the release is uploaded to the package index"


def the_hosts_truth(demo: Demo) -> Section:
    """forge reads the host by one contract per host: the running Claude Code's surfaces are
    all classified (the drift check CI runs), and a goal the host ends is recorded as ended,
    how it ended named, so the person's next prompt is theirs."""
    drift = subprocess.run([sys.executable, "-m", "forge_runtime.host_drift", "--claude",
                            str(find_claude())], capture_output=True, text=True, timeout=120)
    if drift.returncode != 0:
        raise DemoFailed(f"the drift check found what forge's host contract does not "
                         f"classify: {drift.stdout.strip()[-400:]}")
    first = demo.session("impossible", f"/goal {IMPOSSIBLE_GOAL}", script="impossible")
    demo.session("impossible-after", "explain the parser to me", script="impossible",
                 resume=first.session_id)
    goal = demo.forge("goal", "status", "--json").json().get("goal") or {}
    if (goal.get("objective"), goal.get("status"), goal.get("ended")) != \
            (IMPOSSIBLE_GOAL, "cancelled", "impossible"):
        raise DemoFailed(f"the goal the host judged impossible reads {goal.get('status')!r} "
                         f"({goal.get('ended')!r}), not cancelled (impossible)")
    header, verdict = drift.stdout.splitlines()[:2]
    surfaces = header.split("): ")[-1].split(",")[0]
    return Section("The host's truth", [
        "forge reads the host through one contract per host; the drift check CI runs on "
        f"every host release read {surfaces} out of {header.split(' (')[0]}: "
        f"{verdict.strip()}.",
        f"/goal {IMPOSSIBLE_GOAL}: after its first turn the host's evaluator judged it "
        "impossible and the host cleared its goal; forge recorded the end as the host wrote "
        f"it: status {goal['status']} (ended: {goal['ended']}), {goal['turn_count']} turn "
        "charged.",
        "The person's next prompt in that session was theirs: no turn of it was charged to "
        "the goal that had ended.",
    ])


STEPS = (install_forge, person_sets_a_goal, ledger_charged_the_turns,
         budget_stops_native_autonomy, ledger_follows_the_clone, money_and_the_plan,
         guard_refuses_writes,
         clarify_freezes_a_brief, artifacts_earn_activation, gates_rerun_only_what_changed,
         done_means_verified, the_hosts_truth, nobody_switches_forge_off,
         a_goals_end_reaches_the_person, team_report,
         hint_contract)
