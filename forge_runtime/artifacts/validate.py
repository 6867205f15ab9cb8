"""`forge validate`: per-kind rules, each MUST (blocks activation, fails `--ci`) or SHOULD.

Rules (code: severity, what it checks):
    front-matter      MUST   the front matter is readable YAML with forge's field types
    id-file           MUST   the file name starts with the artifact's ID
    duplicate-id      MUST   no other file claims the same ID
    status-by-hand    MUST   the status line is the one the lifecycle recorded
    link              MUST   each link has a known relation and a target that exists
    section           MUST   the kind's required sections are present ...
    empty-section     MUST   ... and not empty
    placeholder       MUST   no `<fill in: ...>` of the template is left
    optional-section  SHOULD the kind's recommended sections are present
    evidence-field    SHOULD evidence declares verdict, congruence, type and valid_until
    affected-files    SHOULD a prd, rfc or adr names the files it affects (dispatch needs it)
    todo              SHOULD no TODO or TBD is left in the text
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from forge_runtime.artifacts import frontmatter, lifecycle, templates
from forge_runtime.artifacts.model import (
    CONGRUENCE,
    EARNED_KINDS,
    EVIDENCE_TYPES,
    ID_PATTERN,
    KINDS,
    RELATIONS,
    STATUSES,
    VERDICTS,
    Artifact,
    prefix_of,
)
from forge_runtime.steps import Step, call

MUST, SHOULD = "MUST", "SHOULD"
_TODO = re.compile(r"\b(?:TODO|TBD)\b")


@dataclass(frozen=True)
class Finding:
    rule: str
    severity: str
    message: str
    fix: Step | None = None


def _is_timestamp(value: object) -> bool:
    if not isinstance(value, str):
        return False
    try:
        dt.datetime.fromisoformat(value.replace("Z", "+00:00"))
    except ValueError:
        return False
    return True


def _is_date(value: object) -> bool:
    if value is None:
        return True
    if not isinstance(value, str):
        return False
    try:
        dt.date.fromisoformat(value[:10])
    except ValueError:
        return False
    return True


def _type_problems(artifact: Artifact) -> list[str]:
    meta = artifact.meta
    problems = []
    if not isinstance(meta.get("id"), str) or not ID_PATTERN.match(meta["id"]):
        problems.append("id must be KIND-NNN, e.g. PRD-001")
    if meta.get("kind") not in KINDS:
        problems.append(f"kind must be one of {', '.join(KINDS)}")
    elif isinstance(meta.get("id"), str) and not meta["id"].startswith(
            prefix_of(meta["kind"]) + "-"):
        problems.append(f"id {meta['id']} does not match kind {meta['kind']}")
    if not isinstance(meta.get("title"), str) or not meta["title"].strip():
        problems.append("title must be a non-empty string")
    if meta.get("status") not in STATUSES:
        problems.append(f"status must be one of {', '.join(STATUSES)}")
    for name in ("created", "updated"):
        if not _is_timestamp(meta.get(name)):
            problems.append(f"{name} must be an ISO 8601 timestamp")
    if not _is_date(meta.get("valid_until")):
        problems.append("valid_until must be a date (YYYY-MM-DD) or empty")
    files = meta.get("affected_files", [])
    if not isinstance(files, list) or not all(isinstance(item, str) for item in files):
        problems.append("affected_files must be a list of paths")
    found = meta.get("links", [])
    if not isinstance(found, list) or not all(isinstance(link, dict) for link in found):
        problems.append("links must be a list of {relation, target}")
    if not isinstance(meta.get("history", []), list):
        problems.append("history must be a list")
    for name, allowed in (("verdict", VERDICTS), ("congruence", CONGRUENCE),
                          ("type", EVIDENCE_TYPES)):
        if meta.get(name) is not None and meta[name] not in allowed:
            problems.append(f"{name} must be one of {', '.join(allowed)}")
    return problems


def _status_fix(artifact: Artifact) -> Step:
    """The command that makes the status the file claims, done through the lifecycle."""
    written = artifact.written_status
    op = lifecycle.path_to(artifact.status, str(written)) if written in STATUSES else None
    if op == "supersede" or op is None:
        return call("get", id=artifact.id)
    return call(op, id=artifact.id)


def check(artifact: Artifact, graph: dict[str, Artifact], all_artifacts: list[Artifact]
          ) -> list[Finding]:
    """Every finding for one artifact (its body must be loaded)."""
    if artifact.unreadable is not None:
        return [Finding("front-matter", MUST, f"{artifact.file_name}: {artifact.unreadable}")]
    findings = [Finding("front-matter", MUST, problem) for problem in _type_problems(artifact)]
    if not artifact.file_name.startswith(f"{artifact.id}-"):
        findings.append(Finding("id-file", MUST, f"the file {artifact.file_name} does not "
                                                 f"start with {artifact.id}-"))
    twins = [other.file_name for other in all_artifacts
             if other.id == artifact.id and other.file_name != artifact.file_name]
    if twins:
        findings.append(Finding("duplicate-id", MUST,
                                f"{artifact.id} is also claimed by {', '.join(twins)}"))
    if artifact.written_status != artifact.status:
        findings.append(Finding(
            "status-by-hand", MUST,
            f"the status line says {artifact.written_status!r} but the lifecycle recorded "
            f"{artifact.status!r}: statuses change only through forge's transitions",
            _status_fix(artifact)))
    for link in artifact.links:
        relation, target = link.get("relation"), link.get("target")
        if relation not in RELATIONS:
            findings.append(Finding("link", MUST, f"link to {target} has unknown relation "
                                    f"{relation!r} ({', '.join(RELATIONS)})"))
        if target not in graph:
            findings.append(Finding("link", MUST, f"link target {target!r} does not exist",
                                    call("unlink", source=artifact.id, target=str(target))))
    findings.extend(_body_findings(artifact))
    return findings


def _body_findings(artifact: Artifact) -> list[Finding]:
    body = artifact.body or ""
    kind = artifact.kind if artifact.kind in templates.SECTIONS else "note"
    must, should = templates.SECTIONS[kind]
    present = frontmatter.sections(body)
    findings = []
    for section in must:
        if section not in present:
            findings.append(Finding("section", MUST, f"section `## {section}` is missing"))
        elif not templates.PLACEHOLDER.sub("", present[section]).strip():
            findings.append(Finding("empty-section", MUST, f"section `## {section}` is empty"))
    for section in should:
        if section not in present:
            findings.append(Finding("optional-section", SHOULD,
                                    f"section `## {section}` is missing"))
    left = templates.PLACEHOLDER.findall(body)
    if left:
        findings.append(Finding("placeholder", MUST, f"{len(left)} template placeholder(s) "
                                f"left, e.g. {left[0]}"))
    if _TODO.search(body):
        findings.append(Finding("todo", SHOULD, "the text still holds TODO or TBD"))
    if artifact.kind == "evidence":
        undeclared = [name for name in ("verdict", "congruence", "type", "valid_until")
                      if artifact.meta.get(name) in (None, "")]
        if undeclared:
            findings.append(Finding("evidence-field", SHOULD,
                                    f"undeclared {', '.join(undeclared)}: each counts as its "
                                    "weakest value in scores"))
    if artifact.kind in EARNED_KINDS and not artifact.affected_files:
        findings.append(Finding("affected-files", SHOULD,
                                "no affected_files: dispatch cannot rule out overlaps, so it "
                                "queues this artifact serially"))
    return findings


def passes(findings: list[Finding]) -> bool:
    return not any(finding.severity == MUST for finding in findings)
