"""Operations that split work between agents: claim, release, claims, dispatch."""

from __future__ import annotations

from forge_runtime.artifacts import claims as rules
from forge_runtime.artifacts import dispatch as splitting
from forge_runtime.artifacts.model import DRAFT
from forge_runtime.steps import OpError, Reply, call, done, next_


def claim(ws, id: str, agent: str, ttl_minutes: int = rules.DEFAULT_TTL_MINUTES,  # noqa: A002
          remote: str | None = None) -> Reply:
    with_agent, with_ttl = rules.retry_claim(id, agent, ttl_minutes, remote)
    agent = rules.check_agent(agent, with_agent)
    ttl = rules.check_ttl(ttl_minutes, with_ttl)
    artifact = ws.store.get(id)
    where = ws.claims_remote(remote)
    record, what = ws.claims(where).claim(artifact.id, agent, ttl, ws.now)
    lines = [f"{artifact.id} {what} by {agent} until {record['until']}"
             + (f" on {where}" if where else "")]
    say = next_(call("get", id=artifact.id),
                f"work on it; claim again before {record['until']} to keep it",
                or_=[call("release", id=artifact.id, agent=agent, remote=remote)])
    return Reply(say, lines, {**record, "outcome": what, "remote": where})


def release(ws, id: str, agent: str | None = None, force: bool = False,  # noqa: A002
            remote: str | None = None) -> Reply:
    if agent is not None:
        agent = rules.check_agent(agent, lambda name: call("release", id=id, agent=name,
                                                           remote=remote))
    artifact_id = id.strip().upper()
    where = ws.claims_remote(remote)
    released = ws.claims(where).release(artifact_id, agent, force, ws.now)
    if released is None:
        line = f"{artifact_id} was not claimed"
    else:
        line = f"{artifact_id} released (was held by {released.get('agent')})"
    return Reply(done(line), [line], {"id": artifact_id, "released": released,
                                      "remote": where})


def claims(ws, remote: str | None = None) -> Reply:
    where = ws.claims_remote(remote)
    records = ws.claims(where).all()
    rows = [{**record, "live": rules.is_live(record, ws.now)} for record in records]
    lines = [f"{row['id']:<14} {row.get('agent')} until {row.get('until')}"
             + ("" if row["live"] else " (expired: free to claim)") for row in rows]
    say = done(f"{sum(row['live'] for row in rows)} live claim(s)")
    return Reply(say, lines or ["No claims."], {"claims": rows, "remote": where})


def dispatch(ws, agents: int, remote: str | None = None) -> Reply:
    if not isinstance(agents, int) or not 1 <= agents <= splitting.MAX_AGENTS:
        raise OpError(f"--agents must be a whole number from 1 to {splitting.MAX_AGENTS}",
                      call("dispatch", agents=2))
    where = ws.claims_remote(remote)
    held = {record["id"]: record for record in ws.claims(where).all()
            if rules.is_live(record, ws.now)}
    drafts = [artifact for artifact in ws.store.all()
              if artifact.status == DRAFT and artifact.kind in splitting.WORK_KINDS]
    plan = splitting.plan(drafts, ws.graph(), ws.status, held, agents)
    lines = []
    for work in plan["agents"]:
        lines.append(f"{work['agent']}: " + (", ".join(item["id"] for item in work["artifacts"])
                                             or "nothing"))
        lines.extend(f"  {item['id']}: {item['reason']}" for item in work["artifacts"])
    if plan["serial"]:
        lines.append("serial queue:")
        lines.extend(f"  {item['id']}: {item['reason']}" for item in plan["serial"])
    lines.extend(f"skipped {item['id']}: {item['reason']}" for item in plan["skipped"])
    firsts = [call("claim", id=work["artifacts"][0]["id"], agent=work["agent"], remote=remote)
              for work in plan["agents"] if work["artifacts"]]
    if firsts:
        say = next_(firsts[0], "each agent claims its first artifact", or_=firsts[1:])
    elif plan["serial"]:
        say = next_(call("get", id=plan["serial"][0]["id"]),
                    "nothing can run in parallel; the serial queue goes first")
    else:
        say = done("no claimable draft to dispatch")
    return Reply(say, lines, {**plan, "remote": where})
