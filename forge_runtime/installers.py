"""How a dependency environment gets its packages: uv when a trusted one is on PATH, pip otherwise.

Building forge-env is the first thing a person waits for after installing the plugin. Most of
pip's time there is not installing: `venv` with pip runs ensurepip, which unpacks and
byte-compiles pip itself into the new environment. So the environment is created without
pip, and the packages come from, in this order:

1. `uv pip install --python <env>` when a `uv` is on PATH that the project cannot have put
   there (see `find_uv`), first online, then `--offline` from uv's cache (a machine without
   network that has seen these packages still gets its environment). uv reads its own
   configuration (UV_* variables, the person's uv.toml), not pip's; when it fails for any
   reason, pip gets its turn, so nothing pip could install is lost;
2. the running interpreter's pip (22.3 or later) with `--python <env>`: pip's own resolver,
   configuration and byte-compiling, without a copy of pip in the environment;
3. otherwise the environment gets pip from ensurepip, as `python -m venv` does, and installs
   with it.

Every installer runs with the data directory as its working directory and without the PYTHON*
variables: the hook starts in the project, whose files (a uv.toml, a pyproject.toml, modules
next to the working directory) must not steer what gets installed.
"""

from __future__ import annotations

import os
import sys
import time
from collections.abc import Sequence
from pathlib import Path

# pip's `--python` (run pip against another interpreter) arrived in pip 22.3.
PIP_WITH_PYTHON_OPTION = (22, 3)
# uv fails fast when it must; a stalled network must leave pip time within the SessionStart
# hook's budget (hooks/hooks.json gives it 300 s).
UV_ONLINE_SECONDS = 120.0
UV_OFFLINE_SECONDS = 30.0


class BuildFailed(Exception):
    """One step of building the environment failed; the message says which and why."""


class Installer:
    """One way to install requirements into a fresh environment.

    `argv` is the command with `{python}` standing for the new environment's interpreter;
    `with_pip` says whether that environment must carry pip itself (the installer runs it).
    A plain class: SessionStart imports this module, and dataclasses costs a hook start.
    """

    def __init__(self, label: str, argv: Sequence[str], *, with_pip: bool = False,
                 cap_seconds: float | None = None) -> None:
        self.label = label
        self.argv = tuple(argv)
        self.with_pip = with_pip
        self.cap_seconds = cap_seconds

    def __repr__(self) -> str:
        return f"Installer({self.label!r}, {self.argv!r})"

    def command(self, python: Path, requirements: Sequence[str]) -> list[str]:
        return [str(python) if part == "{python}" else part for part in self.argv] + list(
            requirements)

    def run(self, python: Path, requirements: Sequence[str], *, cwd: Path,
            deadline: float, verbose: bool = False) -> None:
        """Install, or raise BuildFailed naming this installer and its last line of output."""
        import subprocess

        timeout = max(1.0, deadline - time.monotonic())
        if self.cap_seconds is not None:
            timeout = min(timeout, self.cap_seconds)
        try:
            done = subprocess.run(self.command(python, requirements), cwd=cwd, env=child_env(),
                                  capture_output=not verbose, text=True, timeout=timeout,
                                  check=False)
        except subprocess.TimeoutExpired:
            raise BuildFailed(f"{self.label} did not finish within {timeout:.0f} s") from None
        except OSError as exc:
            raise BuildFailed(f"{self.label} could not start: {exc}") from None
        if done.returncode != 0:
            reason = (f"exited with status {done.returncode} (its output is above)" if verbose
                      else last_line(done.stderr or done.stdout))
            raise BuildFailed(f"{self.label} failed: {reason}")


def plan(*, verbose: bool = False, path: str | None = None,
         untrusted: Sequence[Path] | None = None) -> list[Installer]:
    """The installers to try, fastest first; the last one is always a pip."""
    quiet = () if verbose else ("--quiet",)
    try:
        walls = project_dirs() if untrusted is None else untrusted
    except OSError:             # no working directory: the project cannot be told apart
        walls = None
    uv = None if walls is None else find_uv(
        os.environ.get("PATH", "") if path is None else path, walls)
    chain = []
    if uv is not None:
        base = (str(uv), "pip", "install", *quiet, "--compile-bytecode", "--python", "{python}")
        chain += [Installer("uv", base, cap_seconds=UV_ONLINE_SECONDS),
                  Installer("uv --offline", (*base, "--offline"), cap_seconds=UV_OFFLINE_SECONDS)]
    pip_options = ("install", "--disable-pip-version-check", "--no-input", *quiet)
    if outer_pip_usable():
        # -I: the project's directory must not shadow pip in the interpreter running it.
        chain.append(Installer("pip", (sys.executable, "-I", "-m", "pip", "--python",
                                       "{python}", *pip_options)))
    else:
        chain.append(Installer("pip", ("{python}", "-I", "-m", "pip", *pip_options),
                               with_pip=True))
    return chain


def find_uv(path: str, untrusted: Sequence[Path]) -> Path | None:
    """The first `uv` on `path` that nobody working in the project could have planted.

    Refused: relative entries (".", "bin", an empty entry: they name the working directory,
    which is the project when a hook runs) and any entry or executable that resolves into one
    of the `untrusted` directories. The absolute, resolved path is returned, so what runs is
    what was checked.
    """
    walls = [_resolved(directory) for directory in untrusted]
    for entry in path.split(os.pathsep):
        if not entry or not os.path.isabs(entry):
            continue
        candidate = Path(entry) / "uv"
        try:
            resolved = candidate.resolve(strict=True)
        except (OSError, RuntimeError):
            continue
        if not (resolved.is_file() and os.access(resolved, os.X_OK)):
            continue
        if any(_inside(place, wall) for wall in walls if wall
               for place in (_resolved(Path(entry)), resolved)):
            continue
        return resolved
    return None


def project_dirs() -> list[Path]:
    """Where the project may be: the hook's working directory and the host's project dir."""
    places = [Path.cwd()]
    if os.environ.get("CLAUDE_PROJECT_DIR"):
        places.append(Path(os.environ["CLAUDE_PROJECT_DIR"]))
    return places


def outer_pip_usable() -> bool:
    """True when the running interpreter has a pip that can install into another one."""
    from importlib import metadata

    try:
        version = metadata.version("pip")
    except metadata.PackageNotFoundError:
        return False
    numbers = []
    for part in version.split(".")[:2]:
        digits = "".join(char for char in part if char.isdigit())
        numbers.append(int(digits or 0))
    return tuple(numbers) >= PIP_WITH_PYTHON_OPTION


def child_env() -> dict[str, str]:
    """This process's environment without PYTHON* variables, which would reach the
    interpreter an installer starts (pip's `--python` runs one without -I)."""
    return {key: value for key, value in os.environ.items() if not key.startswith("PYTHON")}


def last_line(text: str) -> str:
    lines = [line.strip() for line in text.splitlines() if line.strip()]
    return lines[-1] if lines else "no output"


def _resolved(path: Path) -> Path | None:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return None


def _inside(path: Path | None, wall: Path) -> bool:
    return path is not None and (path == wall or wall in path.parents)
