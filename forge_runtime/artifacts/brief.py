"""`forge new prd --from-brief`: the frozen brief's four sections, as the clarify step keeps them.

`forge_runtime.clarify` owns the brief's format and where it is frozen; this module only
asks it, so a PRD starts from exactly what the person accepted.
"""

from __future__ import annotations

from pathlib import Path

from forge_runtime.clarify import store
from forge_runtime.clarify.headings import SECTIONS
from forge_runtime.project import Project


def brief_path(project: Project) -> Path:
    return store.brief_path(project.forge_dir)


def read_brief(project: Project) -> dict[str, str] | None:
    """Section name -> text of the frozen brief, in canonical order; None when no complete
    brief is frozen."""
    brief = store.frozen(brief_path(project))
    return None if brief is None else {name: brief[name] for name in SECTIONS}
