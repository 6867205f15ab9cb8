"""Operations that read: get, list, tree, validate, score."""

from __future__ import annotations

from forge_runtime.artifacts import guide, lifecycle
from forge_runtime.artifacts import validate as rules
from forge_runtime.artifacts.model import EARNED_KINDS, KINDS, STATUSES, Artifact
from forge_runtime.artifacts.score import score as compute
from forge_runtime.errors import EXIT_USAGE
from forge_runtime.steps import Call, OpError, Reply, Say, call, done, next_


def summary(ws, artifact: Artifact) -> dict:
    return {"id": artifact.id, "kind": artifact.kind, "title": artifact.title,
            "status": ws.status(artifact), "path": ws.shown(artifact),
            "updated": artifact.meta.get("updated"), "affected_files": artifact.affected_files,
            "links": artifact.links}


def get(ws, id: str) -> Reply:  # noqa: A002
    artifact = ws.store.get(id)
    data = summary(ws, artifact)
    data.update(created=artifact.meta.get("created"), valid_until=artifact.valid_until,
                recorded_status=artifact.status, written_status=artifact.written_status,
                stale_reasons=lifecycle.stale_reasons(artifact, ws.graph(), ws.today),
                meta=artifact.meta, body=artifact.body, unreadable=artifact.unreadable)
    if artifact.kind in EARNED_KINDS:
        data["r_eff"] = round(compute(artifact, ws.graph(), ws.today).r_eff, 4)
    lines = [f"{artifact.id} [{data['status']}] {artifact.title}",
             f"  {data['path']}"] + [f"  {link.get('relation')} {link.get('target')}"
                                     for link in artifact.links]
    if "r_eff" in data:
        lines.append(f"  R_eff {data['r_eff']:.2f}")
    lines += ["", (artifact.body or "").strip()]
    return Reply(guide.advance(ws, artifact), lines, data)


def _first_open(ws, artifacts: list[Artifact]) -> Say:
    """A listing's hint: look at the first artifact still waiting for a step. (`get` then
    names that step; working it out here would read and validate its body on every list.)"""
    for artifact in artifacts:
        status = ws.status(artifact)
        if status in ("draft", "stale"):
            return next_(call("get", id=artifact.id), f"{artifact.id} is {status}: the first "
                         "artifact waiting for a step")
    if not artifacts:
        return done("no artifacts here yet; forge route suggests the kind for a task")
    return done("no artifact is waiting for a step")


def list_(ws, kind: str | None = None, status: str | None = None) -> Reply:
    if kind is not None and kind not in KINDS:
        raise OpError(f"kind must be one of {', '.join(KINDS)}", call("list"))
    if status is not None and status not in STATUSES:
        raise OpError(f"status must be one of {', '.join(STATUSES)}", call("list"))
    chosen = [artifact for artifact in ws.store.all()
              if (kind is None or artifact.kind == kind)
              and (status is None or ws.status(artifact) == status)]
    rows = [summary(ws, artifact) for artifact in chosen]
    lines = [f"{row['id']:<14} {row['status']:<10} {row['title']}" for row in rows]
    return Reply(_first_open(ws, chosen), lines or ["No artifacts."], rows)


def tree(ws) -> Reply:
    """Artifacts as a forest: each hangs under the artifacts it links to; roots link to none."""
    graph = ws.graph()
    children: dict[str, list[str]] = {key: [] for key in graph}
    roots = []
    for artifact in graph.values():
        parents = [link.get("target") for link in artifact.links if link.get("target") in graph]
        for parent in dict.fromkeys(parents):
            children[parent].append(artifact.id)
        if not parents:
            roots.append(artifact.id)

    def node(key: str, path: frozenset) -> dict:
        artifact = graph[key]
        below = [node(child, path | {key}) for child in sorted(children[key])
                 if child not in path]
        return {"id": key, "kind": artifact.kind, "title": artifact.title,
                "status": ws.status(artifact), "children": below}

    forest = [node(key, frozenset()) for key in sorted(roots)]
    lines: list[str] = []

    def show(item: dict, depth: int) -> None:
        lines.append(f"{'  ' * depth}{item['id']} [{item['status']}] {item['title']}")
        for child in item["children"]:
            show(child, depth + 1)

    for item in forest:
        show(item, 0)
    return Reply(_first_open(ws, list(graph.values())), lines or ["No artifacts."], forest)


def _finding_json(finding: rules.Finding) -> dict:
    fix = finding.fix
    shown = {"op": fix.op, "args": fix.args} if isinstance(fix, Call) else fix
    return {"rule": finding.rule, "severity": finding.severity, "message": finding.message,
            "fix": shown}


def validate(ws, id: str | None = None, all: bool = False, ci: bool = False) -> Reply:  # noqa: A002
    if (id is None) == (not all):
        raise OpError("validate takes one artifact's ID or --all, exactly one of the two",
                      call("validate", all=True, ci=ci or None))
    chosen = [ws.store.get(id)] if id else [ws.store.with_body(a) for a in ws.store.all()]
    reports, lines, failing = [], [], []
    for artifact in chosen:
        findings = guide.findings_of(ws, artifact)
        ok = rules.passes(findings)
        reports.append({"id": artifact.id, "pass": ok,
                        "findings": [_finding_json(finding) for finding in findings]})
        lines.append(f"{artifact.id}: {'PASS' if ok else 'FAIL'}")
        lines.extend(f"  {finding.severity} {finding.rule}: {finding.message}"
                     for finding in findings)
        if not ok:
            failing.append((artifact, findings))
    must = sum(1 for report in reports for f in report["findings"] if f["severity"] == "MUST")
    data = {"pass": not failing, "must": must, "artifacts": reports}
    if id:
        data = {**reports[0], "must": must}
    if not failing:
        say = guide.advance(ws, chosen[0]) if id else done(
            f"{len(chosen)} artifact(s) pass every MUST rule")
        return Reply(say, lines or ["No artifacts."], data)
    artifact, findings = failing[0]
    first = next(f for f in findings if f.severity == rules.MUST)
    step = first.fix or call("validate", id=artifact.id)
    why = f"{artifact.id}: {first.message}" + ("" if first.fix else
                                               f"; edit {ws.shown(artifact)}, then "
                                               "validate again")
    if ci:
        raise OpError(f"{len(failing)} artifact(s) fail {must} MUST rule(s)", step,
                      rationale=why, data=data, exit_code=EXIT_USAGE,
                      code="FORGE_VALIDATION_FAILED")
    return Reply(next_(step, why), lines, data)


def score(ws, id: str) -> Reply:  # noqa: A002
    artifact = ws.store.get(id)
    result = compute(artifact, ws.graph(), ws.today)
    data = {**result.as_dict(), "status": ws.status(artifact)}
    lines = [f"{artifact.id}: R_eff {result.r_eff:.2f} (weakest: {result.weakest})"]
    lines += [f"  evidence {item['id']}: {item['value']:.2f} {item['factors']}"
              for item in result.evidence]
    lines += [f"  depends on {item['id']}: {item['r_eff']:.2f}" for item in result.dependencies]
    if result.cycle:
        lines.append(f"  cycle: {' -> '.join([*result.cycle, result.cycle[0]])}")
        say = next_(call("unlink", source=result.cycle[0], target=result.cycle[1 % len(
            result.cycle)], relation="depends_on"), "a depends_on cycle scores 0: break it")
    elif result.r_eff <= 0 and artifact.kind in EARNED_KINDS:
        say = next_(guide.evidence_step(artifact), "no evidence that counts: record some")
    else:
        say = guide.advance(ws, artifact)
    return Reply(say, lines, data)
