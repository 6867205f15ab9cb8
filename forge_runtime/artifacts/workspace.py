"""The context every artifact operation runs in: one work tree, one moment, one graph.

The project is resolved from the calling process's working directory (never from
CLAUDE_PROJECT_DIR, which names the main checkout): a session or MCP server running in a
worktree reads and writes that worktree's artifacts. Claims are shared per repository.
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from forge_runtime.artifacts import lifecycle
from forge_runtime.artifacts.model import Artifact
from forge_runtime.artifacts.store import ARTIFACTS_DIR, Store
from forge_runtime.project import FORGE_DIR, Project

CONFIG_NAME = "config.yaml"


class Workspace:
    def __init__(self, project: Project, now: dt.datetime | None = None) -> None:
        self.project = project
        self.store = Store(project)
        self.now = now or lifecycle.now_utc()
        self.today = self.now.date()

    def graph(self) -> dict[str, Artifact]:
        return self.store.by_id()

    def status(self, artifact: Artifact) -> str:
        return lifecycle.effective_status(artifact, self.graph(), self.today)

    def shown(self, artifact: Artifact) -> str:
        """Where an artifact's file is, relative to the work tree (as hints and JSON say)."""
        return f"{FORGE_DIR}/{ARTIFACTS_DIR}/{artifact.file_name}"

    def relative(self, path: Path) -> str:
        try:
            return path.relative_to(self.project.root).as_posix()
        except ValueError:
            return str(path)

    def claims_remote(self, given: str | None) -> str | None:
        """The remote claims go through: `--remote`, else `.forge/config.yaml`'s
        `claims: {remote: ...}`, else None (claims on this disk)."""
        if given:
            return given
        path = self.project.forge_dir / CONFIG_NAME
        if not path.is_file():
            return None
        import yaml

        try:
            config = yaml.safe_load(path.read_text(encoding="utf-8")) or {}
        except (OSError, yaml.YAMLError):
            return None
        remote = (config.get("claims") or {}).get("remote") if isinstance(config, dict) else None
        return remote if isinstance(remote, str) and remote else None

    def claims(self, remote: str | None):
        # lazy: claims only for the commands that take them
        from forge_runtime.artifacts.claims import LocalClaims

        if remote is None:
            return LocalClaims(self.project)
        # lazy: the remote's git plumbing only for a shared claims ref
        from forge_runtime.artifacts.remote import RemoteClaims

        return RemoteClaims(self.project.root, remote)
