"""Helpers for artifact tests: run operations in a project, make artifacts in a given state."""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from forge_runtime.artifacts import frontmatter
from forge_runtime.operations import run

NOW = dt.datetime(2026, 6, 1, 12, 0, tzinfo=dt.UTC)
LATER = NOW + dt.timedelta(days=200)        # evidence made at NOW (valid 90 days) has expired

PRD_BODY = """
## Goal
forge --verbose prints each step.

## Acceptance criteria
- a test sees every step

## Boundaries
- no other flag changes

## Unknowns and assumptions
- none
"""
EVIDENCE_BODY = "\n## Method\nRan the tests.\n\n## Result\nAll passed.\n"


def op(project: Path, name: str, now: dt.datetime = NOW, **args):
    """Run one operation in `project` at `now`; the Reply."""
    return run(name, args, cwd=project, now=now)


def ok(project: Path, name: str, now: dt.datetime = NOW, **args):
    reply = op(project, name, now, **args)
    assert reply.exit_code == 0, (name, args, reply.data, reply.say)
    return reply.data


def prd(project: Path, title: str = "Verbose flag", files=("src/cli.py",), **args) -> str:
    """A filled PRD that passes validation; its ID."""
    return ok(project, "new", kind="prd", title=title, body=PRD_BODY,
              affected_files=list(files), **args)["id"]


def evidence(project: Path, target: str, now: dt.datetime = NOW, **fields) -> str:
    fields = {"verdict": "supports", "congruence": "CL3", "type": "test", **fields}
    created = ok(project, "new", now, kind="evidence", title=f"Evidence for {target}",
                 body=EVIDENCE_BODY, **fields)["id"]
    ok(project, "link", now, source=created, target=target)
    return created


def active_prd(project: Path, title: str = "Verbose flag") -> str:
    artifact_id = prd(project, title)
    evidence(project, artifact_id)
    ok(project, "activate", id=artifact_id)
    return artifact_id


def path_of(project: Path, artifact_id: str) -> Path:
    return next((project / ".forge" / "artifacts").glob(f"{artifact_id}-*.md"))


def edit_front_matter(project: Path, artifact_id: str, **changes) -> None:
    """Change front matter fields by hand, as a person editing the file would."""
    path = path_of(project, artifact_id)
    meta, body = frontmatter.split(path.read_text(encoding="utf-8"))
    meta.update(changes)
    path.write_text(frontmatter.join(meta, body), encoding="utf-8")


def git(*args, cwd) -> str:
    """git's output, or CalledProcessError."""
    import subprocess

    return subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True,
                          text=True).stdout


def bare_repository(path):
    """A bare repository at `path`: the remote that clones share, as a hosting's would be."""
    git("init", "-q", "--bare", str(path), cwd=path.parent)
    return path
