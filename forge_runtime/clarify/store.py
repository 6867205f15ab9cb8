"""Where a project's frozen brief lives, and the only code that writes it.

    .forge/notes/brief.md        the frozen brief (canonical Markdown, see `Brief.to_markdown`)
    .forge/notes/brief.<n>.md    earlier briefs, kept when `--new` replaced them

A brief is written only when complete, atomically (temp file, fsync, rename), so a crash or
Ctrl-C leaves the old file or the new one, never half of one. The CLI, the runtime's
clarify step and the SubagentStop hook all freeze through `freeze`.
"""

from __future__ import annotations

import errno
import os
import re
from collections import namedtuple
from pathlib import Path

from forge_runtime import safeio
from forge_runtime.clarify.brief import Brief
from forge_runtime.errors import EXIT_REFUSED, EXIT_USAGE, ForgeError
from forge_runtime.roots import root_of_forge_path

NOTES_DIR = "notes"
BRIEF_NAME = "brief.md"
INCOMPLETE = "FORGE_BRIEF_INCOMPLETE"  # the JSON `code` of a brief that lacks sections
_KEPT = re.compile(r"brief\.(\d+)\.md")

Frozen = namedtuple("Frozen", "path kept")
"""Where the brief was frozen, and where the brief it replaced was kept (or None)."""


def brief_path(forge_dir: str | os.PathLike) -> Path:
    """The frozen brief's path under a project's `.forge/` folder."""
    return Path(forge_dir) / NOTES_DIR / BRIEF_NAME


def frozen(path: Path) -> Brief | None:
    """The complete brief frozen at `path`, or None when there is none (or it is incomplete)."""
    try:
        brief = Brief.load(path)
    except (OSError, UnicodeDecodeError):
        return None
    return brief if brief.complete else None


def incomplete(brief: Brief, fix: str) -> ForgeError:
    """The refusal for a brief that lacks sections, naming them as `missing()` does."""
    return ForgeError(f"the brief lacks: {', '.join(brief.missing())}", fix,
                      exit_code=EXIT_USAGE,
                      rationale="fill in those sections (or record an assumption), then freeze")


def freeze(brief: Brief, path: Path, *, new: bool = False, fix: str = "forge brief check -",
           replace_fix: str = "forge brief show") -> Frozen:
    """Write `brief` to `path` when it is complete; keep a replaced one as `brief.<n>.md`.

    Refuses (exit 2) to replace a frozen brief unless `new`; `fix` is the command that
    helps with an incomplete brief, `replace_fix` the one offered when a brief is frozen.
    """
    if not brief.complete:
        raise incomplete(brief, fix)
    kept = None
    if path.exists():
        if not new:
            raise ForgeError(f"a brief is already frozen at {_shown(path)}", replace_fix,
                             exit_code=EXIT_REFUSED, code="FORGE_BRIEF_FROZEN",
                             rationale="a frozen brief is never edited; --new keeps it and "
                                       "freezes a new one")
        kept = path.with_name(f"brief.{_next_number(path.parent)}.md")
        # a copy read and written as any hook's file (safeio.py): a brief.md that is a
        # link or a FIFO is refused, never followed out of the project nor waited on
        below = root_of_forge_path(path)
        if not safeio.create(kept, safeio.read_bytes(path, below), below):
            raise FileExistsError(errno.EEXIST, "already exists", os.fspath(kept))
    write_atomically(path, brief.to_markdown())
    return Frozen(path, kept)


def amend(path: Path, text: str) -> Brief:
    """Add one timestamped amendment to the brief at `path`; its four sections stay as frozen."""
    brief = Brief.load(path).amended(text)
    write_atomically(path, brief.to_markdown())
    return brief


def write_atomically(path: Path, text: str) -> None:
    """`text` at `path`, whole or not at all (temp file, fsync, rename), never through a link
    below the project root: a `.forge/notes` swapped for a link out of the sandbox makes
    this refuse (safeio.UnsafePath), not write there as the person."""
    safeio.replace(path, text.encode("utf-8"), root_of_forge_path(path), create_dirs=True)


def _next_number(folder: Path) -> int:
    numbers = [int(m.group(1)) for m in map(_KEPT.fullmatch, os.listdir(folder)) if m]
    return max(numbers, default=0) + 1


def _shown(path: Path) -> str:
    """`path` relative to the working directory when it is below it (how a person sees it)."""
    try:
        return str(path.resolve().relative_to(Path.cwd().resolve()))
    except ValueError:
        return str(path)


def brief_of_goal(forge_dir: str | os.PathLike, objective: str) -> Path | None:
    """The frozen brief (current or kept) whose `/goal` condition is `objective`, or None.

    `forge brief freeze`, `forge brief show` and `forge clarify` all hand on `/goal <the
    brief's goal_condition>`; a goal whose objective is that condition started from it.
    """
    from forge_runtime.goal.store.objective import normalise

    wanted = normalise(objective)
    folder = Path(forge_dir) / NOTES_DIR
    try:
        names = sorted(os.listdir(folder), reverse=True)
    except OSError:
        return None
    for name in [BRIEF_NAME, *(n for n in names if _KEPT.fullmatch(n))]:
        brief = frozen(folder / name)
        if brief is not None and normalise(brief.goal_condition) == wanted:
            return folder / name
    return None
