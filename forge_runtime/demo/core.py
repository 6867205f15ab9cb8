"""The demo's working parts: the throwaway project, its host sessions, forge runs, the report."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.hostkit.projects import init_git_project
from forge_runtime.hostkit.runner import Host, SessionResult
from forge_runtime.hostkit.script import Script

DEMO_DIR = Path(__file__).resolve().parent
SESSION_TIMEOUT = 60.0


# who each clone's person is, by their git identity: what each tranche's activation records
PERSON, TEAMMATE = ("Ada", "ada@example.com"), ("Ben", "ben@example.com")


def set_identity(root: Path, person: tuple[str, str]) -> None:
    """Give the clone at `root` a person's git identity, as their own clone has."""
    for key, value in zip(("user.name", "user.email"), person, strict=True):
        subprocess.run(["git", "config", key, value], cwd=root, check=True,
                       capture_output=True, timeout=60)


class DemoFailed(ForgeError):
    """A step did not see what it exists to show; the demo stops and says which."""

    def __init__(self, message: str) -> None:
        super().__init__(f"forge demo: {message}", "forge doctor", exit_code=EXIT_REFUSED,
                         code="FORGE_DEMO_FAILED",
                         rationale="check the install, then run forge demo --keep forge-demo "
                                   "to inspect the project")


@dataclass
class Section:
    """One part of the report: a title and a few plain lines."""

    title: str
    lines: list[str]


@dataclass
class ForgeRun:
    """One `forge ...` command the demo ran in the project."""

    args: tuple[str, ...]
    exit_code: int
    stdout: str
    stderr: str

    def json(self) -> dict:
        return json.loads(self.stdout)


@dataclass
class Demo:
    """The state every step shares: the work dir, the project, sessions and forge runs."""

    workdir: Path
    plugin_dir: Path
    kept: bool = False
    project: Path = field(init=False)
    sessions: dict[str, SessionResult] = field(default_factory=dict)
    forge_runs: list[ForgeRun] = field(default_factory=list)
    _hosts: dict[str, Host] = field(default_factory=dict)

    def __post_init__(self) -> None:
        self.project = init_git_project(self.workdir / "project")
        set_identity(self.project, PERSON)  # the person whose project it is

    def forge(self, *args: str, cwd: Path | None = None) -> ForgeRun:
        """Run `forge <args>` in the project (or in `cwd`, another clone) as a person would,
        and keep its output."""
        where = cwd or self.project
        env = {**os.environ, "CLAUDE_PROJECT_DIR": str(where), "NO_COLOR": "1"}
        done = subprocess.run([sys.executable, "-m", "forge_runtime", *args], cwd=where,
                              env=env, capture_output=True, text=True, timeout=60)
        run = ForgeRun(args, done.returncode, done.stdout, done.stderr)
        self.forge_runs.append(run)
        return run

    def session(self, name: str, prompt: str, *, script: str = "script",
                args: tuple[str, ...] = (), cwd: Path | None = None,
                login: str = "api_key", resume: str | None = None,
                relays: dict[int, str] | None = None) -> SessionResult:
        """Run one real host session in the project (or in `cwd`, another clone) against
        `forge_runtime/demo/<script>.yaml`, logged in as `login` says (the host kit's
        `Host(login=...)`: "subscription" is a pretend Claude plan), with the demo's own
        loopback servers (`relays`: port -> Unix socket) reachable from it; `resume` goes on
        with an earlier session of the same script.

        Sessions on the same script share one Host (one HOME), so a later one may resume.
        """
        host = self._hosts.get(script)
        if host is None:
            # The project's Bash runs in the host's own sandbox, which needs the machine's
            # PID namespace (it reads /proc/<pid>/ns of its children): no private one.
            host = Host(self.workdir / f"host-{script}", Script.load(DEMO_DIR / f"{script}.yaml"),
                        plugin_dirs=[self.plugin_dir], timeout=SESSION_TIMEOUT, own_pids=False,
                        login=login, relays=relays)
            self._hosts[script] = host
        result = host.run(prompt, cwd=cwd or self.project, args=args, resume=resume)
        if result.timed_out:
            raise DemoFailed(f"the {name} session did not finish in {SESSION_TIMEOUT:.0f} s")
        self.sessions[name] = result
        return result

    def close(self) -> None:
        for host in self._hosts.values():
            host.close()


def make_workdir(keep: str | None) -> Path:
    """A fresh directory for the demo: `keep` (must be new or empty), else a temporary one."""
    if keep is None:
        return Path(tempfile.mkdtemp(prefix="forge-demo-")).resolve()
    path = Path(keep).resolve()
    if path.exists() and (not path.is_dir() or any(path.iterdir())):
        raise ForgeError(f"{path} already exists and is not an empty directory",
                         f"forge demo --keep {path.name}-2")
    path.mkdir(parents=True, exist_ok=True)
    return path
