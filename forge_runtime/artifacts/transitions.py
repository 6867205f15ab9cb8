"""Operations that move an artifact through its lifecycle, and nothing else changes status.

activate needs validate PASS, and for a prd, rfc or adr also R_eff > 0; `--force` skips
both checks and says so in the artifact (`forced:` in its front matter and its history).
"""

from __future__ import annotations

import datetime as dt

from forge_runtime.artifacts import guide, lifecycle, links, validate
from forge_runtime.artifacts.lifecycle import timestamp
from forge_runtime.artifacts.model import (
    ACTIVE,
    DEPRECATED,
    DRAFT,
    EARNED_KINDS,
    STALE,
    SUPERSEDED,
    TERMINAL,
)
from forge_runtime.artifacts.score import score
from forge_runtime.errors import EXIT_REFUSED
from forge_runtime.steps import OpError, Reply, call, done

RENEW_DAYS = 90


def _moved(ws, artifact, status: str, target: str, op: str, **details) -> None:
    lifecycle.record(artifact, status, target, op, ws.now, **details)
    ws.store.save(artifact)


def activate(ws, id: str, force: bool = False) -> Reply:  # noqa: A002
    artifact = ws.store.get(id)
    status = ws.status(artifact)
    lifecycle.require(artifact, status, ACTIVE, "activate", ws.graph())
    findings = guide.findings_of(ws, artifact)
    must = [finding for finding in findings if finding.severity == validate.MUST]
    r_eff = score(artifact, ws.graph(), ws.today).r_eff
    earned = artifact.kind in EARNED_KINDS
    forced = {}
    if must and not force:
        raise OpError(f"{artifact.id} fails {len(must)} MUST rule(s): {must[0].message}",
                      call("validate", id=artifact.id),
                      or_=[call("activate", id=artifact.id, force=True)],
                      code="FORGE_ACTIVATION_INVALID", exit_code=EXIT_REFUSED,
                      data={"id": artifact.id, "must": len(must)})
    if earned and r_eff <= 0 and not force:
        raise OpError(f"{artifact.id} has R_eff 0: no evidence that counts "
                      f"({score(artifact, ws.graph(), ws.today).weakest})",
                      guide.evidence_step(artifact),
                      or_=[call("activate", id=artifact.id, force=True)],
                      code="FORGE_ACTIVATION_UNEARNED", exit_code=EXIT_REFUSED,
                      rationale="record evidence, link it, then activate",
                      data={"id": artifact.id, "r_eff": 0.0})
    if force and (must or (earned and r_eff <= 0)):
        forced = {"at": timestamp(ws.now), "must_failures": len(must),
                  "r_eff": round(r_eff, 4)}
        artifact.meta["forced"] = forced
    _moved(ws, artifact, DRAFT, ACTIVE, "activate", **({"forced": True} if forced else {}))
    lines = [f"{artifact.id} is active" + (f" (R_eff {r_eff:.2f})" if earned else "")
             + (" (forced)" if forced else "")]
    data = {"id": artifact.id, "status": ACTIVE, "r_eff": round(r_eff, 4), "forced": forced}
    return Reply(done(lines[0]), lines, data)


def supersede(ws, id: str, by: str) -> Reply:  # noqa: A002
    artifact = ws.store.get(id)
    replacement = ws.store.get(by)
    status = ws.status(artifact)
    lifecycle.require(artifact, status, SUPERSEDED, "supersede", ws.graph())
    if replacement.id == artifact.id or ws.status(replacement) in TERMINAL:
        what = ("the same artifact" if replacement.id == artifact.id
                else ws.status(replacement))
        raise OpError(f"{replacement.id} cannot supersede {artifact.id}: it is {what}",
                      call("new", kind=artifact.kind, title=f"{artifact.title} (revised)"))
    if links.add(replacement, artifact.id, "supersedes"):
        replacement.meta["updated"] = timestamp(ws.now)
        ws.store.save(replacement)
    _moved(ws, ws.store.get(artifact.id), status, SUPERSEDED, "supersede", by=replacement.id)
    lines = [f"{artifact.id} is superseded by {replacement.id}"]
    data = {"id": artifact.id, "status": SUPERSEDED, "by": replacement.id}
    return Reply(guide.advance(ws, ws.graph()[replacement.id]), lines, data)


def deprecate(ws, id: str, reason: str | None = None) -> Reply:  # noqa: A002
    artifact = ws.store.get(id)
    status = ws.status(artifact)
    lifecycle.require(artifact, status, DEPRECATED, "deprecate", ws.graph())
    _moved(ws, artifact, status, DEPRECATED, "deprecate",
           **({"reason": " ".join(reason.split())} if reason else {}))
    lines = [f"{artifact.id} is deprecated"]
    return Reply(done(lines[0]), lines, {"id": artifact.id, "status": DEPRECATED,
                                         "reason": reason})


def renew(ws, id: str, valid_until: str | None = None, days: int | None = None) -> Reply:  # noqa: A002
    artifact = ws.store.get(id)
    status = ws.status(artifact)
    own = lifecycle.expired(artifact.valid_until, ws.today)
    evidence_draft = artifact.kind == "evidence" and status == DRAFT and own
    if not evidence_draft:
        lifecycle.require(artifact, status, ACTIVE, "renew", ws.graph())
    if days is not None and not (isinstance(days, int) and 1 <= days <= 3650):
        raise OpError("--days must be a whole number from 1 to 3650",
                      call("renew", id=artifact.id, days=RENEW_DAYS))
    if not own:
        expired = [evidence for evidence in links.evidence_of(artifact, ws.graph())
                   if lifecycle.expired(evidence.valid_until, ws.today)]
        raise OpError(f"{artifact.id} is stale because its evidence expired, not itself",
                      call("renew", id=expired[0].id), or_=[
                          guide.evidence_step(artifact)],
                      rationale="renew the evidence once it is checked again, or record new "
                                "evidence")
    if valid_until is None:
        until = ws.today + dt.timedelta(days=days or RENEW_DAYS)
    else:
        try:
            until = dt.date.fromisoformat(valid_until)
        except ValueError:
            until = None
        if until is None or until <= ws.today:
            raise OpError(f"valid_until must be a date after today ({ws.today}), not "
                          f"{valid_until!r}", call("renew", id=artifact.id, days=RENEW_DAYS))
    artifact.meta["valid_until"] = until.isoformat()
    target = DRAFT if evidence_draft else ACTIVE
    _moved(ws, artifact, status if evidence_draft else STALE, target, "renew",
           valid_until=until.isoformat())
    lines = [f"{artifact.id} is {target}, valid until {until.isoformat()}"]
    data = {"id": artifact.id, "status": target, "valid_until": until.isoformat()}
    return Reply(guide.advance(ws, ws.graph()[artifact.id]), lines, data)
