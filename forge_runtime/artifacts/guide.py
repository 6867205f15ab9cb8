"""The next step of the method for one artifact: shape -> validate -> evidence -> activate.

Every operation that leaves an artifact somewhere on that path ends with the step
`advance` names, so `get`, `validate`, `link`, `score` and `new` agree on what comes next.
"""

from __future__ import annotations

from forge_runtime.artifacts import lifecycle, links, validate
from forge_runtime.artifacts.model import ACTIVE, DRAFT, EARNED_KINDS, STALE, Artifact
from forge_runtime.artifacts.score import score
from forge_runtime.steps import Call, Say, call, done, next_


def evidence_step(artifact: Artifact) -> Call:
    """Recording evidence for `artifact`: the call, with the fields a score needs. The values
    are the ones to state truthfully; undeclared ones count as their weakest."""
    return call("new", kind="evidence", title=f"Evidence for {artifact.id}",
                verdict="supports", congruence="CL2", type="test")


def findings_of(ws, artifact: Artifact) -> list[validate.Finding]:
    ws.store.with_body(artifact)
    return validate.check(artifact, ws.graph(), ws.store.all())


def advance(ws, artifact: Artifact) -> Say:
    status = ws.status(artifact)
    if status == STALE:
        own = lifecycle.expired(artifact.valid_until, ws.today)
        expired = [evidence for evidence in _evidence(ws, artifact)
                   if lifecycle.expired(evidence.valid_until, ws.today)]
        step = call("renew", id=artifact.id if own or not expired else expired[0].id)
        return next_(step, f"{artifact.id} is stale: "
                     + "; ".join(lifecycle.stale_reasons(artifact, ws.graph(), ws.today)))
    if status == ACTIVE:
        return done(f"{artifact.id} is active")
    if status != DRAFT:
        return done(f"{artifact.id} is {status}, a terminal status")
    findings = findings_of(ws, artifact)
    if not validate.passes(findings):
        must = [finding for finding in findings if finding.severity == validate.MUST]
        return next_(call("validate", id=artifact.id),
                     f"{len(must)} MUST rule(s) fail, first: {must[0].message}; edit "
                     f"{ws.shown(artifact)}, then validate again")
    if artifact.kind in EARNED_KINDS and score(artifact, ws.graph(), ws.today).r_eff <= 0:
        return next_(evidence_step(artifact),
                     f"{artifact.id} passes validation but has no evidence that counts "
                     f"(R_eff 0); record what proves it, then link it")
    return next_(call("activate", id=artifact.id), f"{artifact.id} is ready to activate")


def _evidence(ws, artifact: Artifact) -> list[Artifact]:
    return links.evidence_of(artifact, ws.graph())
