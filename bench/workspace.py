"""A throwaway git project, and the commands that run forge in it the way the host does.

Hooks run through the plugin's own launcher (`hooks/forge-hook <Event>`), with the
environment the host gives them (CLAUDE_PLUGIN_ROOT, CLAUDE_PROJECT_DIR) and
FORGE_PYTHON naming the interpreter under test, with the project as working directory.
CLI commands run as `python -m forge_runtime ...` with the plugin root first on the path,
so the bench always measures the code in this checkout, whatever else is installed.
"""

from __future__ import annotations

import json
import os
import shlex
import subprocess
import uuid
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from bench.measure import PROBE, Command

if TYPE_CHECKING:
    from forge_runtime.project import Project

# Variables of the calling shell that would make a measured process behave unlike a hook
# started by the host: our own switches, import profiling, bytecode writes turned off.
_DROPPED_PREFIXES = ("CLAUDE", "FORGE_")
_DROPPED = {"PYTHONPATH", "PYTHONPROFILEIMPORTTIME", "PYTHONDONTWRITEBYTECODE",
            "PYTHONSTARTUP", "PYTHONINSPECT"}


def clean_environ() -> dict[str, str]:
    return {name: value for name, value in os.environ.items()
            if name not in _DROPPED and not name.startswith(_DROPPED_PREFIXES)}


def ram_dir() -> str | None:
    """A RAM-backed directory for fixtures, when the machine has a writable one."""
    return "/dev/shm" if os.path.isdir("/dev/shm") and os.access("/dev/shm", os.W_OK) \
        else None


@dataclass(frozen=True)
class Workspace:
    """A git project under `base`, plus the bench's own scratch files beside it.

    `fixtures` is where expensive shared fixtures (big ledgers) are built before being
    copied in: a RAM disk when there is one, because building a 2,000-turn ledger writes
    and renames thousands of files. Measured runs always work in `root`.
    """

    plugin_root: Path
    python: str
    root: Path
    scratch: Path
    fixtures: Path

    @classmethod
    def create(cls, plugin_root: Path, python: str, base: Path, name: str = "project",
               fixtures: Path | None = None) -> Workspace:
        root = base / name
        scratch = base / f"{name}-bench"
        root.mkdir(parents=True)
        scratch.mkdir()
        subprocess.run(["git", "init", "-q", str(root)], check=True)
        (root / "README.md").write_text("A project the forge bench works in.\n")
        space = cls(plugin_root.resolve(), python, root.resolve(), scratch.resolve(),
                    (fixtures or base).resolve())
        space._write_probe_python()
        space._write_kernel_layer()
        return space

    def _write_kernel_layer(self) -> None:
        """The project's settings as `forge init` leaves them where the host can sandbox
        (`forge sandbox enable`'s merge): a person's /goal then runs, sandboxed, as by
        default. Written directly, so a machine without bubblewrap measures the same."""
        import json

        from forge_runtime.sandbox import layer, scopes

        project = self.project()
        path = scopes.settings_path(scopes.PROJECT, project)
        path.parent.mkdir(exist_ok=True)
        path.write_text(json.dumps(layer.merged({}, project, scopes.PROJECT, path, {}),
                                   indent=2) + "\n")

    def project(self) -> Project:
        """forge's view of this project (where its state file and ledger live)."""
        from forge_runtime.project import find_project

        return find_project(self.root)

    # -- environments -------------------------------------------------------------------

    @property
    def state_home(self) -> Path:
        """The XDG state directory of this workspace's processes: forge's goal witness
        (forge_runtime/goal/sync/witness.py) lives there, so snapshots can put it back too."""
        path = self.scratch / "state"
        path.mkdir(exist_ok=True)
        return path

    def hook_env(self) -> dict[str, str]:
        """What the host hands a plugin's hooks; CLAUDE_PLUGIN_DATA when the interpreter is
        a forge-env (the plugin's own shape, bench/lean.py)."""
        from bench.lean import plugin_data

        data = plugin_data(self.python)
        return {**clean_environ(), "CLAUDE_PLUGIN_ROOT": str(self.plugin_root),
                "CLAUDE_PROJECT_DIR": str(self.root), "FORGE_PYTHON": self.python,
                "XDG_STATE_HOME": str(self.state_home),
                **({"CLAUDE_PLUGIN_DATA": data} if data else {})}

    def cli_env(self) -> dict[str, str]:
        return {**clean_environ(), "PYTHONPATH": str(self.plugin_root),
                "CLAUDE_PROJECT_DIR": str(self.root), "XDG_STATE_HOME": str(self.state_home)}

    @property
    def _probe_python(self) -> Path:
        return self.scratch / "probe-python"

    def _write_probe_python(self) -> None:
        """An executable that the launcher can exec in place of Python, to probe memory: the
        launcher's interpreter flags (`-I -S`) go to the interpreter, the rest to the probe."""
        self._probe_python.write_text(
            "#!/bin/sh\nflags=\n"
            'while [ "$1" = -I ] || [ "$1" = -S ]; do flags="$flags $1"; shift; done\n'
            f"exec {shlex.quote(self.python)} $flags {shlex.quote(str(PROBE))} \"$@\"\n")
        self._probe_python.chmod(0o755)

    # -- commands -----------------------------------------------------------------------

    def floor(self, *flags: str, code: str = "pass", stdin: bytes = b"") -> Command:
        """`python [flags] -c pass`: the cost of starting the interpreter and nothing else
        (or of `code`, for the reference points beside the floor)."""
        env = clean_environ()
        return Command(argv=(self.python, *flags, "-c", code), env=env, cwd=self.root,
                       stdin=stdin, probe_argv=(self.python, *flags, str(PROBE), "-c", code))

    def hook(self, event: dict) -> Command:
        """The launcher running one hook event, stdin JSON in, as the host runs it."""
        env = self.hook_env()
        return Command(argv=(str(self.plugin_root / "hooks" / "forge-hook"),
                             event["hook_event_name"]),
                       env=env, cwd=self.root, stdin=json.dumps(event).encode(),
                       probe_argv=(str(self.plugin_root / "hooks" / "forge-hook"),
                                   event["hook_event_name"]),
                       probe_env={**env, "FORGE_PYTHON": str(self._probe_python)})

    def statusline(self, host_input: dict) -> Command:
        """forge's status line as `forge init --statusline` installs it for the plugin:
        `python -P -c <entry>`, forge's code on PYTHONPATH, the host's session JSON on
        stdin (the host runs it through a shell; the shell is not forge's)."""
        from forge_runtime.statusline_settings import ENTRY

        # the hook environment's CLAUDE_PLUGIN_ROOT and FORGE_PYTHON mean nothing to the
        # status line; the import profile (imports.py) reads them for every hook-like row
        env = {**self.hook_env(), "PYTHONPATH": str(self.plugin_root),
               "CLAUDE_CODE_SESSION_ID": host_input["session_id"]}
        return Command(argv=(self.python, "-P", "-c", ENTRY), env=env, cwd=self.root,
                       stdin=json.dumps(host_input).encode(),
                       probe_argv=(self.python, str(PROBE), "-c", ENTRY))

    def forge(self, *args: str) -> Command:
        """One `forge` CLI command."""
        return Command(argv=(self.python, "-m", "forge_runtime", *args), env=self.cli_env(),
                       cwd=self.root,
                       probe_argv=(self.python, str(PROBE), "-m", "forge_runtime", *args))

    # -- host-shaped events ---------------------------------------------------------------

    def transcript(self, session_id: str) -> Path:
        path = self.scratch / "transcripts" / f"{session_id}.jsonl"
        path.parent.mkdir(exist_ok=True)
        path.touch()
        return path

    def event(self, name: str, session_id: str | None = None, **fields) -> dict:
        """A hook input shaped like the host's (see the host notes' captured samples)."""
        session_id = session_id or str(uuid.uuid4())
        return {"session_id": session_id,
                "transcript_path": str(self.transcript(session_id)),
                "cwd": str(self.root), "prompt_id": str(uuid.uuid4()),
                "permission_mode": "default", "effort": {"level": "medium"},
                "hook_event_name": name, **fields}
