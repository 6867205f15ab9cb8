"""Throwaway projects and plugins for host sessions: a git repo, a minimal hook plugin."""

from __future__ import annotations

import json
import subprocess
from pathlib import Path


def write_plugin(root: Path, name: str, hooks: dict[str, list[dict]]) -> Path:
    """A minimal plugin at `root`: a manifest and `hooks/hooks.json` with `hooks` per event.

    `hooks` maps an event to its hook-group list exactly as hooks.json spells it, e.g.
    {"PreToolUse": [{"matcher": "Bash", "hooks": [{"type": "command", "command": "..."}]}]}.
    """
    (root / ".claude-plugin").mkdir(parents=True, exist_ok=True)
    (root / "hooks").mkdir(exist_ok=True)
    manifest = {"name": name, "version": "0.0.1", "description": f"{name} (a test plugin)"}
    (root / ".claude-plugin" / "plugin.json").write_text(json.dumps(manifest, indent=2))
    (root / "hooks" / "hooks.json").write_text(json.dumps({"hooks": hooks}, indent=2))
    return root


def init_git_project(path: Path) -> Path:
    """An empty git repository with one commit, as a person's project would be."""
    path.mkdir(parents=True, exist_ok=True)
    git = ["git", "-c", "user.name=forge test", "-c", "user.email=test@forge.invalid",
           "-c", "init.defaultBranch=main", "-c", "commit.gpgsign=false"]
    subprocess.run([*git, "init", "-q", str(path)], check=True)
    (path / "README.md").write_text("A project for a forge host test.\n")
    subprocess.run([*git, "-C", str(path), "add", "README.md"], check=True)
    subprocess.run([*git, "-C", str(path), "commit", "-q", "-m", "start"], check=True)
    return path


def add_worktree(repo: Path, path: Path) -> Path:
    """A linked work tree of `repo` (which needs a commit) at `path`: it shares the git
    common dir, and so the goal ledger, while having its own `.forge/`."""
    subprocess.run(["git", "-C", str(repo), "worktree", "add", "-q", str(path)], check=True)
    return path
