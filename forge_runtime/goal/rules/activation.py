"""What a person's `/goal <objective>` does to the ledger (a `/goal` a model caused does
nothing).

- A new objective: a new nonce, turn 0, one activation, ceiling 20.
- The same objective (same hash) always maps to the same nonce:
  - exhausted (turn_count reached the ceiling): one more tranche, a new activation id,
    activation_count + 1, ceiling 20 x activation_count, the count kept;
  - completed or cancelled: reopened with the count it had (clearing never resets a budget);
  - still active: the session is bound to it and no count or ceiling changes.
Callers only get here once the transcript shows a person's `/goal` (see
goal/events/confirm.py): agent state never activates anything.
"""

from __future__ import annotations

import os

from forge_runtime.errors import ForgeError
from forge_runtime.goal.store import state_file
from forge_runtime.goal.store.ledger import (
    ACTIVE,
    CANCELLED,
    COMPLETE,
    EXHAUSTED,
    TRANCHE,
    Head,
    Ledger,
    new_nonce,
    now,
    random_uuid,
    reached,
    repository_id,
    tampered,
)
from forge_runtime.goal.store.lock import locked
from forge_runtime.goal.store.objective import normalise, objective_hash
from forge_runtime.project import Project
from forge_runtime.records import record

NEW, TRANCHE_ADDED, REOPENED, BOUND = "new", "tranche", "reopened", "bound"


class Activation(record("Activation", "outcome goal notice", defaults=(None,))):
    """What an activation did (`outcome`), the goal as it now stands, and what a person
    should know (`notice`: the goal's remote did not answer). A record, not a dataclass:
    every charging Stop imports this module."""

    __slots__ = ()


def _unindexed_goal(project: Project, digest: str) -> str | None:
    """Before starting an objective from zero, make sure no trace says it ran before.

    The objective index is the only way from an objective to its goal, so deleting an
    index file (or a whole goal) must not turn into a fresh budget: a goal directory or
    the state file still naming this objective fails closed instead. The one exception is
    a goal that is still only its genesis record (turn 0): that is a first activation cut
    short before it published its index (the hook killed), and it is adopted, since it holds
    no budget to lose. Callers hold the repository's activation lock, so no other
    activation is half done here.
    """
    from forge_runtime.goal.store.ledger import goal_nonces
    from forge_runtime.goal.store.objective_index import publish_index

    for nonce in goal_nonces(project):
        head = Ledger(project.ledger_root, nonce).current()
        if head.goal.get("objective_hash") != digest:
            continue
        if head.seq == 1:
            publish_index(project.ledger_root, digest, nonce)
            return nonce
        raise tampered(f"goal {nonce} has this objective but the objective index lost it")
    try:
        remembered = state_file.read(project.state_path).goal or {}
    except ForgeError:
        remembered = {}
    if remembered.get("objective_hash") == digest:
        raise tampered(f"state.md names goal {remembered.get('nonce')} for this objective, "
                       "which the ledger no longer has")
    return None


class Limits(record("Limits", "tokens minutes usd prices plan after_usage_limit",
                    defaults=(None,) * 6)):
    """A tranche's ceilings from `.forge/guard.yaml` (`goal: {tranche: {tokens: N,
    minutes: M, usd: D}}`, None for each it leaves out; `usd` in picodollars), the price
    table the activation seals (goal/budget/pricing.py; None when none could be had), the shares
    of the plan's windows the goal may use (`goal: {plan: ...}`, goal/budget/plan.py, basis
    points) and what it does after the host's usage limit (`goal: {after_usage_limit:
    continue}`; None: it stops)."""

    __slots__ = ()


def tranche_limits(project: Project, dollars: bool = True) -> Limits:
    """The per-tranche ceilings the project sets, and the price table sealed for them. A
    person's file, protected by the guard (and the kernel sandbox): agent-written state
    never sets them. A dollar ceiling with no price table to count it refuses the /goal.
    `dollars=False`: the token and time ceilings alone, nothing sealed."""
    from forge_runtime.protected.guard_file import goal_settings

    settings = goal_settings(project)
    tranche = settings.get("tranche") or {}

    def whole(value) -> int | None:  # the schema's integers: YAML's 3e6 or 240.0 too
        return None if value is None else int(value)

    from forge_runtime.goal.budget.plan import ceilings_from

    plan = ceilings_from(settings.get("plan"))
    after = "continue" if settings.get("after_usage_limit") == "continue" else None
    if not dollars:
        return Limits(whole(tranche.get("tokens")), whole(tranche.get("minutes")),
                      plan=plan, after_usage_limit=after)
    usd = tranche.get("usd")
    picos = None
    if usd is not None:
        from decimal import Decimal

        picos = int(Decimal(str(usd)) * 10**12)
    return Limits(whole(tranche.get("tokens")), whole(tranche.get("minutes")), picos,
                  seal_prices(project, required=picos is not None), plan, after)


def stricter(limits: Limits, found: dict | None) -> Limits:
    """`limits` (.forge/guard.yaml as the Stop that confirms a `/goal` reads it) held to
    the ceilings the person's prompt found (`found`: goal fields, goal/store/prompt_notes.py):
    each ceiling the lower where both set one, either's where one does, and
    `after_usage_limit: continue` only when both say so. The agent's first turn ran between
    the two reads: an edit of the file then loosens nothing."""
    if not isinstance(found, dict):
        return limits

    def lower(mine, theirs):
        if not isinstance(theirs, int) or isinstance(theirs, bool):
            return mine
        return theirs if mine is None else min(mine, theirs)

    plan = dict(limits.plan or {})
    prompted = found.get("plan_ceilings")
    for name, points in (prompted.items() if isinstance(prompted, dict) else ()):
        plan[name] = lower(plan.get(name), points)
    usd = lower(limits.usd, found.get("tranche_usd"))
    if usd is not None and limits.prices is None:
        raise _prices_unavailable("the /goal prompt found a dollar ceiling")
    after = limits.after_usage_limit if found.get("after_usage_limit") == "continue" else None
    return Limits(lower(limits.tokens, found.get("tranche_tokens")),
                  lower(limits.minutes, found.get("minute_ceiling")), usd, limits.prices,
                  {name: points for name, points in plan.items() if points is not None}
                  or None, after)


def seal_prices(project: Project, required: bool) -> dict | None:
    """Seal the compiled price table beside the ledger (goal/budget/pricing.py) for this
    activation: what its charges price with, and a verify recomputes with."""
    from forge_runtime import safeio
    from forge_runtime.goal.budget import price_table, pricing

    path = price_table.compiled_path()
    try:  # forge's own file, in the plugin's data: never a FIFO waited on all the same
        if not _kept_from_agents(project, path):  # a table there could be anyone's
            data = pricing.encode(price_table.compile_table())
        else:
            try:
                data = safeio.read_bytes(path)
            except FileNotFoundError:
                data = safeio.read_bytes(price_table.write(path))
        return pricing.seal(project.ledger_root, data)
    except (OSError, ValueError, ImportError) as exc:
        if not required:
            return None
        raise _prices_unavailable("the goal has a dollar ceiling",
                                  f" ({type(exc).__name__}: {exc})") from None


def _prices_unavailable(what: str, why: str = "") -> ForgeError:
    """A dollar ceiling with no price table to count it: the /goal is refused."""
    return ForgeError(f"FORGE_GOAL_PRICES_UNAVAILABLE: {what} and forge has no price table "
                      f"to count it with{why}", "forge goal prices --compile",
                      rationale="compiles the table from genai-prices; then type the /goal "
                                "again")


def _kept_from_agents(project: Project, path) -> bool:
    """Whether the compiled price table at `path` is where the guard keeps every agent
    out (forge-env in the plugin's data). An interpreter outside forge-env keeps it in the
    user's cache, or a virtualenv the project holds, where an agent could write a table of
    its own prices; the activation then compiles its own from genai-prices instead."""
    from forge_runtime.protected.paths import TREE, hit, protected_paths

    found = hit(os.path.realpath(path), protected_paths(project), destructive=False)
    return found is not None and found.kind == TREE


def with_tranche(goal: dict, limits: Limits, base: int, usd_base: int = 0,
                 started: str | None = None) -> dict:
    """`goal` with a new tranche's ceilings: `base` + the token tranche and `usd_base` + the
    dollar tranche (the count so far, or the last ceiling, as turns keep theirs), the clock
    started `started` (when the person's `/goal` prompt arrived, `clock_start`), else now,
    and the price table this tranche's charges are priced with."""
    tokens, minutes, usd, prices, plan, after_usage_limit = limits
    goal = {**goal, "token_ceiling": None if tokens is None else base + tokens,
            "tranche_tokens": tokens, "minute_ceiling": minutes,
            "tranche_started": started or now()}
    goal.pop("usage_limited", None)  # a person's /goal after the host's usage limit
    for field, value in (("plan_ceilings", plan), ("after_usage_limit", after_usage_limit)):
        if value is None:
            goal.pop(field, None)
        else:
            goal[field] = value
    if usd is not None:
        goal.update(usd_ceiling=usd_base + usd, tranche_usd=usd)
    else:
        goal.pop("usd_ceiling", None)
        goal.pop("tranche_usd", None)
    if prices is not None:
        goal["prices"] = prices
        goal.setdefault("picousd", 0)
    else:
        goal.pop("prices", None)
    return goal


def clock_start(prompted_at) -> str | None:
    """When a tranche's clock starts for a `/goal` prompt noted at `prompted_at` (the pending
    activation's time): that time when it is one forge writes and not in the future (a
    later start would lengthen the tranche), else None (now)."""
    from forge_runtime.goal.budget.ceilings import epoch

    if not isinstance(prompted_at, str) or len(prompted_at) != 20:
        return None
    try:
        return prompted_at if epoch(prompted_at) <= epoch(now()) else None
    except ValueError:
        return None


def _fresh_goal(nonce: str, objective: str, repository: str,
                limits: Limits | None = None, started: str | None = None) -> dict:
    return with_tranche({
        "nonce": nonce, "objective": objective, "objective_hash": objective_hash(objective),
        "activation_id": random_uuid(), "activation_count": 1, "turn_count": 0,
        "turn_ceiling": TRANCHE, "status": ACTIVE, "repository": repository,
        "token_count": 0}, limits or Limits(), 0, 0, started)


def prospect(project: Project, objective: str, started: str) -> dict:
    """The ceilings a person's `/goal <objective>` would give its goal, read before any Stop
    has confirmed it: the ledger's goal for the objective as `activate` would leave it, or
    a fresh one (the price table it would seal included). The first turn's tool calls are
    held to these (events/tool_call.py); they restrict, they grant nothing, so a ledger forge cannot
    read here gives a fresh tranche's (its first Stop then fails closed on it)."""
    from forge_runtime.goal.store.objective_index import find_nonce

    try:
        limits = tranche_limits(project)
    except ForgeError:  # a dollar ceiling with no price table: its first Stop refuses the
        limits = tranche_limits(project, dollars=False)  # goal; until then
    fresh = _fresh_goal("", normalise(objective), "", limits, started)
    try:
        nonce = find_nonce(project.ledger_root, objective_hash(normalise(objective)))
        goal = Ledger(project.ledger_root, nonce).current().goal if nonce else None
    except (ForgeError, OSError, ValueError, KeyError):
        goal = None
    if goal is None:
        return fresh
    if goal.get("status") == EXHAUSTED or reached(goal, now()) is not None:
        last, last_usd = goal.get("token_ceiling"), goal.get("usd_ceiling")
        goal = with_tranche(goal, limits, last if isinstance(last, int)
                            else goal.get("token_count", 0),
                            last_usd if isinstance(last_usd, int)
                            else goal.get("picousd", 0), started)
    return goal


def _with_sandbox(goal: dict, sandbox: str | None) -> dict:
    """`goal` carrying the posture the person's /goal got (`sandbox.posture.for_goal`:
    "sandboxed" or "unsandboxed", by the project's opt-out); later records keep it."""
    if sandbox is not None:
        goal["sandbox"] = sandbox
    return goal


def _create(ledger_root: str | os.PathLike, objective: str, repository: str, session: str | None,
            witness, gates: dict, limits: Limits,
            sandbox: str | None = None, started: str | None = None,
            plan_found: dict | None = None, activator: dict | None = None) -> Head:
    """Write a new goal, then publish it under its objective (under the activation lock);
    `activator`: who, where and on which host (goal/rules/activator.py)."""
    from forge_runtime.goal.budget import plan
    from forge_runtime.goal.store.objective_index import publish_index

    nonce = new_nonce()
    goal = plan.baseline(_fresh_goal(nonce, objective, repository, limits, started), plan_found)
    head = Ledger(ledger_root, nonce, witness=witness).create(
        _with_sandbox(goal, sandbox), session=session, **gates, **(activator or {}))
    publish_index(ledger_root, objective_hash(objective), nonce)
    return head


def _owed(ledger: Ledger, head: Head) -> tuple[list[str], dict]:
    """The turns the last exhaustion saw past the ceiling, which no tranche has charged yet,
    and the tokens each spent. Past a join, those another clone's exhaustion owed as well
    (in the join's side, merge.owed): a turn that ran in any clone is charged."""
    from forge_runtime.goal.store import merge

    record, owed, spent = head.record, [], {}
    while record.get("kind") != "exhaust":
        if record.get("kind") == merge.MERGE:
            joined, usage = merge.owed(record)
            owed, spent = [*owed, *joined], {**usage, **spent}
        if record.get("kind") == "activate" or record["seq"] == 1:
            return _owed_turns(owed, spent)
        record = ledger.previous(record)
    mine, usage = record.get("owed"), record.get("owed_usage")
    owed = [*owed, *mine] if isinstance(mine, list) else owed
    return _owed_turns(owed, {**usage, **spent} if isinstance(usage, dict) else spent)


def _owed_turns(owed: list, spent: dict) -> tuple[list[str], dict]:
    """Owed turns as the ledger's records name them: identities, each once."""
    turns = list(dict.fromkeys(turn for turn in owed if isinstance(turn, str)))
    return turns, {turn: usage for turn, usage in spent.items() if turn in turns}


def _charge_owed(ledger: Ledger, head: Head, owed: tuple[list[str], dict],
                 session: str | None, state_path: str | os.PathLike) -> Head:
    """Charge the owed turns to the new tranche first (late: their Stops could not)."""
    turns, spent = owed
    if not turns:
        return head
    from forge_runtime.goal.rules import charging, consistency

    try:
        current = state_file.read(state_path)
        progress = charging.Progress(current.progress(), current.next_step,
                                     consistency.mirror_id(state_path))
    except ForgeError:  # state.md is rewritten from the ledger right after this
        progress = charging.Progress(None, None, consistency.mirror_id(state_path))
    charging.charge_locked(ledger, head, turns, session or "", None, progress, spent)
    return ledger.head()


def _reactivate(ledger: Ledger, repository: str, session: str | None,
                state_path: str | os.PathLike, gates: dict,
                limits: Limits, sandbox: str | None = None, started: str | None = None,
                plan_found: dict | None = None,
                activator: dict | None = None) -> tuple[str, Head]:
    with ledger.lock():
        ledger.verify()  # a full check before granting anything
        head = ledger.settle()
        goal = _with_sandbox(dict(head.goal), sandbox)
        goal.pop("ended", None)  # how the last run ended: a new one has not
        from forge_runtime.goal.sync.remote_state import known_repository

        if goal.get("repository") != repository and not known_repository(
                ledger.root, goal.get("repository")):
            raise tampered(f"goal {ledger.nonce} belongs to another repository's ledger")
        if goal["status"] == EXHAUSTED or reached(goal, now()) is not None:
            goal.update(activation_id=random_uuid(), status=ACTIVE,
                        activation_count=goal["activation_count"] + 1)
            goal["turn_ceiling"] = TRANCHE * goal["activation_count"]
            last, last_usd = goal.get("token_ceiling"), goal.get("usd_ceiling")
            goal = with_tranche(goal, limits, last if isinstance(last, int)
                                else goal.get("token_count", 0),
                                last_usd if isinstance(last_usd, int)
                                else goal.get("picousd", 0), started)
            from forge_runtime.goal.budget import plan

            goal = plan.baseline(goal, plan_found)
            owed = _owed(ledger, head)
            head = ledger.append(head, "activate", goal, session=session, **gates,
                                 **(activator or {}))
            return TRANCHE_ADDED, _charge_owed(ledger, head, owed, session, state_path)
        if goal["status"] in (COMPLETE, CANCELLED):
            goal["status"] = ACTIVE
            return REOPENED, ledger.append(head, "reopen", goal, session=session, **gates)
        return BOUND, ledger.append(head, "bind", goal, session=session, **gates)


def activate(project: Project, objective: str, session: str | None = None,
             recorded: dict | None = None, sandbox: str | None = None,
             started: str | None = None, plan_found: dict | None = None,
             prompt_limits: dict | None = None, host: str | None = None) -> Activation:
    """Open, reopen or bind the goal of a person's `/goal <objective>` (a new nonce, one
    more tranche, or the same goal) and mirror it into state.md;
    `sandbox` is the posture it runs in, recorded in the goal (see `_with_sandbox`). A new
    tranche's clock starts at `started` (when the prompt arrived: the first turn ran on
    it, `clock_start`), else now. `plan_found`: the plan's reading that prompt found
    (goal/budget/plan.py), where the goal's own use of the week starts; `prompt_limits`: the
    ceilings it found, which the ones read now may only tighten (`stricter`); `host`: the
    host whose session ran the `/goal` (a tranche it opens records it, goal/rules/activator.py).

    Finding an objective's goal and creating it run under one repository-wide lock: two
    first activations of one objective (two sessions, two worktrees) would otherwise each
    see no goal, or one would see the other's state.md before its index and refuse it.

    Every record this writes carries the final gates `recorded`: the field the person's
    `/goal` prompt found (events/prompt.py keeps it with the pending activation, from before
    the model's first turn; gates/recorded.py builds it), empty when the project has no
    gates. The goal is judged by those, whatever the gates file says later. The caller reads
    them (the goal does not know the gates file): a hook through the gates it is handed.
    """
    from forge_runtime.goal.sync.witness import Witness

    gates = recorded or {}
    from forge_runtime.goal.rules import activator

    by = activator.fields(project.root, host)
    objective = normalise(objective)
    root = project.ledger_root
    repository = repository_id(root)
    digest = objective_hash(objective)
    witness = Witness(project)
    with locked(root):
        witness.check_all(lambda nonce: Ledger(root, nonce))
        from forge_runtime.goal.store.objective_index import find_nonce
        from forge_runtime.goal.sync.remote import arrive

        notice = arrive(project, digest)  # a fresh clone continues the remote's count
        nonce = find_nonce(root, digest) or _unindexed_goal(project, digest)
        witnessed = witness.goal_of(digest)
        if witnessed is not None and nonce != witnessed:
            raise tampered(f"the witness says goal {witnessed} has this objective, and the "
                           f"ledger {'names goal ' + nonce if nonce else 'has no goal'} for it")
        if nonce is None:
            created = _create(root, objective, repository, session, witness, gates,
                              stricter(tranche_limits(project), prompt_limits), sandbox,
                              started, plan_found, by)
            state_file.write_goal(project.state_path, created.goal)
            return Activation(NEW, created.goal, notice)
    outcome, head = _reactivate(Ledger(root, nonce, witness=witness), repository, session,
                                project.state_path, gates,
                                stricter(tranche_limits(project), prompt_limits), sandbox,
                                started, plan_found, by)
    state_file.write_goal(project.state_path, head.goal)
    return Activation(outcome, head.goal, notice)
