"""`forge new prd --from-brief`: the frozen brief's four sections, read behind one function.

The clarify step (`forge_runtime.clarify`) owns the brief's format and where it is kept;
when that package is installed this module asks it. Without it, a minimal reader takes the
`## Goal`, `## Acceptance criteria`, `## Boundaries` and `## Unknowns and assumptions`
sections of `.forge/notes/brief.md` as written.
"""

from __future__ import annotations

from pathlib import Path

from forge_runtime.project import Project

SECTIONS = ("Goal", "Acceptance criteria", "Boundaries", "Unknowns and assumptions")
FALLBACK_PATH = Path("notes") / "brief.md"


def brief_path(project: Project) -> Path:
    try:
        from forge_runtime.clarify import store
    except ImportError:
        return project.forge_dir / FALLBACK_PATH
    return Path(store.brief_path(project.forge_dir))


def read_brief(project: Project) -> dict[str, str] | None:
    """Section name -> text of the frozen brief, in canonical order; None without one."""
    path = brief_path(project)
    if not path.is_file():
        return None
    try:
        from forge_runtime.clarify.brief import Brief
    except ImportError:
        from forge_runtime.artifacts.frontmatter import sections

        found = sections(path.read_text(encoding="utf-8"))
        return {name: found.get(name, "") for name in SECTIONS}
    brief = Brief.load(path)
    return {name: brief[name] for name in SECTIONS}
