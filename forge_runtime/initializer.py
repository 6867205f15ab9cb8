"""`forge init`: put forge's workflows, skills and hook helpers into a project's `.forge/`.

Installing is idempotent and never destroys a person's edits. `.forge/installed.json`
records the hash of every file as forge installed it, so forge can tell three cases apart:
a file that still matches what it shipped (safe to update), a file the person edited (kept
unless `--force`), and a file that is simply current (left alone, not even rewritten).

Nothing is ever written under `.claude/` or `.agents/` except `.claude/settings.json` (only
with `--hooks`) and, for Codex CLI (`--host codex`), forge's skills under `.agents/skills/`
(Codex's project skill folder) and `.codex/hooks.json`: each host keeps its native `/goal`,
so forge ships no command or skill of that name, and refuses to install one.
"""

from __future__ import annotations

import hashlib
import json
import os
import tempfile
from dataclasses import dataclass
from pathlib import Path

from forge_runtime import resources
from forge_runtime.project import Project

MANIFEST_NAME = "installed.json"
AGENT_SKILLS = "/.agents/skills"  # manifest names starting with "/" are project-relative
NATIVE_NAME = "goal"

# Outcomes of installing one file.
INSTALLED = "installed"    # it was not there
UPDATED = "updated"        # forge's older copy, untouched by the person, replaced
UNCHANGED = "unchanged"    # already identical
KEPT = "kept"              # the person edited it; left as it is
REPLACED = "replaced"      # the person edited it; overwritten because of --force


@dataclass(frozen=True)
class FileOutcome:
    path: str      # relative to the project root, with forward slashes
    action: str


def _sha256(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def write_atomically(path: Path, data: bytes, mode: int | None = None) -> None:
    """Replace `path` in one step, so a crash leaves the old file or the new, never half."""
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temp = tempfile.mkstemp(prefix=f".{path.name}.", dir=path.parent)
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        if mode is not None:
            os.chmod(temp, mode)
        os.replace(temp, path)
    except BaseException:
        Path(temp).unlink(missing_ok=True)
        raise


def agent_skill_files(bundle: Path) -> dict[str, Path]:
    """forge's skills for Codex: `/.agents/skills/<name>/...` -> the shipped source file."""
    files: dict[str, Path] = {}
    for source in sorted((bundle / "skills").rglob("*")):
        relative = source.relative_to(bundle / "skills")
        if relative.parts[0] == NATIVE_NAME:
            raise ValueError("forge ships a skill named goal, which would shadow the host's "
                             "native /goal")
        if source.is_file():
            files[f"{AGENT_SKILLS}/{relative.as_posix()}"] = source
    return files


def shipped_files(bundle: Path) -> dict[str, Path]:
    """What `forge init` installs: path under `.forge/` -> the shipped source file."""
    files: dict[str, Path] = {}
    for source in sorted((bundle / "workflows").glob("*.md")):
        files[f"workflows/{source.name}"] = source
    for source in sorted((bundle / "skills").rglob("*")):
        if source.is_file():
            files[f"skills/{source.relative_to(bundle / 'skills').as_posix()}"] = source
    for source in sorted((bundle / "hooks" / "lib").glob("*")):
        if source.is_file():
            files[f"hooks/lib/{source.name}"] = source
    return files


class Installer:
    """Installs the shipped files into one project's `.forge/`."""

    def __init__(self, project: Project, *, force: bool = False,
                 bundle: Path | None = None, agent_skills: bool = False) -> None:
        self.project = project
        self.force = force
        self.bundle = bundle or resources.bundle_root()
        self.agent_skills = agent_skills
        self.manifest_path = project.forge_dir / MANIFEST_NAME

    def run(self) -> list[FileOutcome]:
        recorded = self._read_manifest()
        installed = {name: digest for name, digest in recorded.items()
                     if name.startswith("/")}  # another host's files stay recorded
        outcomes = []
        files = shipped_files(self.bundle)
        if self.agent_skills:
            files.update(agent_skill_files(self.bundle))
        for name, source in files.items():
            action, digest = self._install_one(name, source, recorded.get(name))
            installed[name] = digest
            outcomes.append(FileOutcome(self._shown(name), action))
        outcomes.extend(self._install_local())
        if installed != recorded:
            body = json.dumps({"files": installed}, indent=2, sort_keys=True) + "\n"
            write_atomically(self.manifest_path, body.encode("utf-8"))
        return outcomes

    def _install_one(self, name: str, source: Path, recorded: str | None) -> tuple[str, str]:
        """Install one file; return the outcome and the hash to record for it."""
        target = self.project.root / name[1:] if name.startswith("/") \
            else self.project.forge_dir / name
        data = source.read_bytes()
        shipped = _sha256(data)
        mode = source.stat().st_mode & 0o777
        try:
            current = _sha256(target.read_bytes())
        except FileNotFoundError:
            write_atomically(target, data, mode)
            return INSTALLED, shipped
        if current == shipped:
            return UNCHANGED, shipped
        if current == recorded:
            write_atomically(target, data, mode)
            return UPDATED, shipped
        if self.force:
            write_atomically(target, data, mode)
            return REPLACED, shipped
        # Keep the record of what forge last installed, so a later run still sees the edit.
        return KEPT, recorded or shipped

    @staticmethod
    def _shown(name: str) -> str:
        return name[1:] if name.startswith("/") else f".forge/{name}"

    def _install_local(self) -> list[FileOutcome]:
        """The git-ignored working area: created once, never overwritten (it holds live state).

        Not even `--force` replaces state.md: it carries the goal the hooks are tracking and
        the person's checklist.
        """
        local = self.project.local_dir
        wanted = {local / ".gitignore": b"*\n",
                  self.project.state_path: resources.STATE_TEMPLATE.read_bytes()}
        outcomes = []
        for path, data in wanted.items():
            relative = path.relative_to(self.project.root).as_posix()
            if path.exists():
                outcomes.append(FileOutcome(relative, UNCHANGED))
            else:
                write_atomically(path, data)
                outcomes.append(FileOutcome(relative, INSTALLED))
        return outcomes

    def _read_manifest(self) -> dict[str, str]:
        """What forge installed last time; a missing or unreadable record counts as nothing.

        Losing the record is safe: every differing file is then treated as edited and kept.
        """
        try:
            files = json.loads(self.manifest_path.read_text(encoding="utf-8"))["files"]
        except (OSError, ValueError, KeyError, TypeError):
            return {}
        if not isinstance(files, dict):
            return {}
        return {str(name): str(digest) for name, digest in files.items()}
