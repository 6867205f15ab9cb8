"""Operations that shape artifacts: route, new, link, unlink, and `record_evidence`."""

from __future__ import annotations

import datetime as dt

from forge_runtime.artifacts import brief, guide, links, templates
from forge_runtime.artifacts.lifecycle import timestamp
from forge_runtime.artifacts.model import (
    CONGRUENCE,
    EVIDENCE_TYPES,
    ID_IN_TEXT,
    KINDS,
    RELATIONS,
    VERDICTS,
    Artifact,
)
from forge_runtime.artifacts.route import route as decide
from forge_runtime.artifacts.workspace import Workspace
from forge_runtime.steps import OpError, Reply, call, next_

EVIDENCE_VALID_DAYS = 90


def route(ws, task: str) -> Reply:
    if not task.strip():
        raise OpError("route needs the task in words", call("route", task="add a --verbose flag"),
                      rationale="an example task")
    found = decide(task)
    first = call("new", kind=found["kind"], title=found["title"])
    lines = [f"{found['kind']} ({found['depth']}): {found['why']}"]
    return Reply(next_(first, f"start a {found['kind']}; depth {found['depth']}"), lines,
                 {**found, "first": {"op": first.op, "args": first.args}})


def _check_choice(name: str, value, allowed: tuple[str, ...], example) -> None:
    if value is not None and value not in allowed:
        raise OpError(f"{name} must be one of {', '.join(allowed)}, not {value!r}", example)


def new(ws, kind: str, title: str | None = None, from_brief: bool = False,
        body: str | None = None, affected_files: list[str] | None = None,
        valid_until: str | None = None, verdict: str | None = None,
        congruence: str | None = None, type: str | None = None) -> Reply:  # noqa: A002
    _check_choice("kind", kind, KINDS, call("new", kind="prd", title=title or "New PRD"))
    if kind != "evidence" and any(value is not None for value in (verdict, congruence, type)):
        raise OpError("verdict, congruence and type belong to evidence only",
                      call("new", kind=kind, title=title or f"New {kind}"))
    example = call("new", kind="evidence", title=title or "Evidence", verdict="supports",
                   congruence="CL2", type="test")
    _check_choice("verdict", verdict, VERDICTS, example)
    _check_choice("congruence", congruence, CONGRUENCE, example)
    _check_choice("type", type, EVIDENCE_TYPES, example)
    if valid_until is not None:
        try:
            dt.date.fromisoformat(valid_until)
        except ValueError:
            raise OpError(f"valid_until must be a date YYYY-MM-DD, not {valid_until!r}",
                          call("new", kind=kind, title=title or f"New {kind}",
                               valid_until=(ws.today + dt.timedelta(days=90)).isoformat())
                          ) from None
    if from_brief:
        title, body = _from_brief(ws, kind, title, body)
    if not title or not title.strip():
        raise OpError("a new artifact needs a title", call("new", kind=kind, title=f"New {kind}"))
    title = " ".join(title.split())
    if kind == "evidence" and valid_until is None:
        valid_until = (ws.today + dt.timedelta(days=EVIDENCE_VALID_DAYS)).isoformat()
    meta = {"status": "draft", "created": timestamp(ws.now), "updated": timestamp(ws.now),
            "valid_until": valid_until, "affected_files": list(affected_files or []),
            "links": []}
    if kind == "evidence":
        meta.update(verdict=verdict, congruence=congruence, type=type)
    meta["history"] = []
    artifact = ws.store.create(kind, title, meta, body if body is not None
                               else templates.body(kind, title))
    lines = [f"Created {artifact.id} ({kind}): {ws.shown(artifact)}"]
    data = {"id": artifact.id, "kind": kind, "title": title, "status": "draft",
            "path": ws.shown(artifact)}
    return Reply(_after_new(ws, artifact), lines, data)


def _after_new(ws, artifact: Artifact):
    if artifact.kind == "evidence":
        named = [found for found in ID_IN_TEXT.findall(artifact.title)
                 if found in ws.graph() and found != artifact.id]
        if named:
            return next_(call("link", source=artifact.id, target=named[0], relation="informs"),
                         f"attach {artifact.id} to {named[0]}")
    return guide.advance(ws, artifact)


def _from_brief(ws, kind: str, title: str | None, body: str | None) -> tuple[str, str]:
    if kind != "prd":
        raise OpError("--from-brief makes a prd", call("new", kind="prd", from_brief=True))
    sections = brief.read_brief(ws.project)
    if sections is None:
        raise OpError(f"no frozen brief at {ws.relative(brief.brief_path(ws.project))}",
                      call("new", kind="prd", title=title or "New PRD"),
                      code="FORGE_BRIEF_MISSING",
                      rationale="writes the PRD's sections by hand instead; the clarify "
                                "workflow (.forge/workflows/clarify.md) freezes a brief")
    if body is not None:
        raise OpError("--from-brief writes the body from the brief; drop --body",
                      call("new", kind="prd", from_brief=True))
    goal = sections.get("Goal", "").strip()
    title = title or (goal.splitlines()[0][:80] if goal else "PRD from the brief")
    return title, templates.from_sections(title, sections)


def _pair(ws, source: str, target: str) -> tuple[Artifact, Artifact]:
    left, right = ws.store.get(source), ws.store.get(target)
    if left.id == right.id:
        raise OpError(f"{left.id} cannot link to itself", call("get", id=left.id))
    return left, right


def link(ws, source: str, target: str, relation: str = "informs") -> Reply:
    left, right = _pair(ws, source, target)
    if relation not in RELATIONS:
        raise OpError(f"{relation!r} is not a link relation ({', '.join(RELATIONS)})",
                      call("link", source=left.id, target=right.id, relation="informs"))
    added = links.add(left, right.id, relation)
    if added:
        left.meta["updated"] = timestamp(ws.now)
        ws.store.save(left)
    focus = right if left.kind == "evidence" else left
    focus = ws.graph()[focus.id]
    lines = [f"{left.id} {relation} {right.id}" + ("" if added else " (already linked)")]
    data = {"source": left.id, "target": right.id, "relation": relation, "added": added}
    return Reply(guide.advance(ws, focus), lines, data)


def unlink(ws, source: str, target: str, relation: str | None = None) -> Reply:
    left, right = _pair(ws, source, target)
    removed = links.remove(left, right.id, relation)
    if not removed:
        raise OpError(f"{left.id} has no link to {right.id}"
                      + (f" with relation {relation}" if relation else ""),
                      call("get", id=left.id))
    left.meta["updated"] = timestamp(ws.now)
    ws.store.save(left)
    lines = [f"removed {removed} link(s) from {left.id} to {right.id}"]
    data = {"source": left.id, "target": right.id, "relation": relation, "removed": removed}
    return Reply(guide.advance(ws, ws.graph()[left.id]), lines, data)


def record_evidence(project, target_id: str, title: str, *, verdict: str, congruence: str,
                    type: str, body: str, valid_until: str | None = None,  # noqa: A002
                    relation: str = "informs") -> dict:
    """Create an evidence artifact and link it to `target_id`; return its JSON summary.

    The public way for other parts of forge (gate receipts, benchmarks) to turn a result
    into evidence: the same checks as `forge new evidence` and `forge link`, and an
    OpError when the target does not exist or a field has no allowed value.
    """
    ws = Workspace(project)
    ws.store.get(target_id)
    created = new(ws, "evidence", title, body=body, valid_until=valid_until, verdict=verdict,
                  congruence=congruence, type=type).data
    link(ws, created["id"], target_id, relation)
    return created
