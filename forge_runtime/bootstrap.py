"""Give forge's hooks a Python that has their dependencies, built once per plugin install.

The host installs no Python packages for a plugin. The SessionStart hook therefore makes sure
the interpreter that runs hooks can import pyyaml, filelock and jsonschema:

- the running interpreter already has them (a pip-installed forge, CI): nothing to do;
- otherwise a virtual environment `forge-env` under `${CLAUDE_PLUGIN_DATA}` (which survives
  plugin updates; `${CLAUDE_PLUGIN_ROOT}` does not) is built once, and rebuilt only when the
  dependency list changes. `hooks/forge-hook` runs `forge-env/bin/python` when it exists.

Building is atomic and safe against two sessions starting at once: one builder at a time holds
a lock, each build happens in a fresh directory `forge-env.d/<stamp>.<random>` that is renamed
to `forge-env.d/<stamp>` only once complete, and `forge-env` is a symlink swapped in one
`os.replace`. A hook therefore sees the old environment or the new one, never half of one.

What installs the packages (uv when a trusted one is on PATH, pip otherwise) is
forge_runtime.installers; each installer gets a fresh directory, so one that fails leaves
nothing for the next to trip over, and the environment in use is never touched.

claude-agent-sdk is deliberately not installed here: hooks never import it and its wheel is
about 170 MB. Standard library only, since this runs before the dependencies exist. The
usual SessionStart, with nothing to build, is answered by forge_runtime.hook_python without
importing this module; what only building needs (venv, subprocess, tempfile...) is imported
when a build happens.
"""

from __future__ import annotations

import importlib.util
import os
import shlex
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from forge_runtime import hook_python, installers, resources
from forge_runtime.errors import EXIT_OK, EXIT_USAGE, ForgeError
from forge_runtime.hook_python import (
    ENV_NAME,
    HOOK_MODULES,
    HOOK_REQUIREMENTS,
    STAMP_FILE,
    env_python,
    is_current,
    stamp_of,
)

# `forge mcp` also needs the MCP SDK, kept out of the hooks' environment (and their
# SessionStart build): it is large, and no hook imports it. Its launcher builds
# `forge-mcp-env` with both lists the first time the host starts the server.
MCP_REQUIREMENTS: tuple[str, ...] = ("mcp>=2.3",)
MCP_ENV_NAME = "forge-mcp-env"

BUILD_SECONDS = 240  # every installer together; the SessionStart hook has 300 s

Creator = Callable[[Path, bool], None]
BuildFailed = installers.BuildFailed


def create_venv(path: Path, with_pip: bool) -> None:
    """A plain virtual environment from the interpreter running this code; pip only when the
    installer runs the environment's own pip (ensurepip is most of a pip build's time)."""
    import venv

    venv.EnvBuilder(with_pip=with_pip, clear=False, symlinks=True).create(path)


class Bootstrap:
    """The dependency environment of one plugin install, under its data directory."""

    def __init__(self, data_dir: Path, *, requirements: Sequence[str] = HOOK_REQUIREMENTS,
                 create: Creator | None = None,
                 chain: Sequence[installers.Installer] | None = None,
                 modules: Sequence[str] = HOOK_MODULES, name: str = ENV_NAME,
                 verbose: bool = False) -> None:
        self.data_dir = data_dir
        self.requirements = tuple(requirements)
        self.modules = tuple(modules)
        self.stamp = stamp_of(self.requirements)
        self.name = name
        self.env = data_dir / name
        self.builds = data_dir / f"{name}.d"
        self.verbose = verbose
        self._create = create or create_venv
        self._chain = chain

    def build(self) -> bool:
        """Make `forge-env` current; True when this call built it, False when it already was.

        Holds an exclusive lock so that sessions starting together build once: the second
        waits, then finds the environment current.
        """
        import fcntl

        self.builds.mkdir(parents=True, exist_ok=True)
        with open(self.data_dir / f"{self.name}.lock", "a+b") as lock:
            fcntl.flock(lock, fcntl.LOCK_EX)
            if is_current(self.env, self.stamp):
                return False
            final = self.builds / self.stamp
            previous = self.env.resolve() if self.env.is_symlink() else None
            if not is_current(final, self.stamp):
                self._build_into(final)
            self._point_env_at(final)
            # The previous build stays one round: hooks of running sessions may still use it.
            self._remove_other_builds(keep={final, previous})
            return True

    def _build_into(self, final: Path) -> None:
        """Try each installer in a fresh directory of its own until one completes; a failed
        attempt leaves nothing behind, and the last failure names every installer's reason."""
        import time

        chain = self._chain if self._chain is not None else installers.plan(
            verbose=self.verbose)
        deadline = time.monotonic() + BUILD_SECONDS
        failures = []
        for installer in chain:
            try:
                self._attempt(installer, final, deadline)
                return
            except BuildFailed as exc:
                failures.append(str(exc))
        raise BuildFailed("; ".join(failures) or "no installer to run")

    def _attempt(self, installer: installers.Installer, final: Path, deadline: float) -> None:
        import shutil
        import tempfile

        partial = Path(tempfile.mkdtemp(prefix=f"{self.stamp}.", dir=self.builds))
        try:
            self._create(partial, installer.with_pip)
            installer.run(env_python(partial), self.requirements, cwd=self.data_dir,
                          deadline=deadline, verbose=self.verbose)
            self._check_imports(installer, env_python(partial))
            compile_prices(env_python(partial), self.data_dir)
            (partial / STAMP_FILE).write_text(self.stamp + "\n", encoding="utf-8")
            shutil.rmtree(final, ignore_errors=True)
            os.rename(partial, final)
        except BaseException:
            shutil.rmtree(partial, ignore_errors=True)
            raise

    def _check_imports(self, installer: installers.Installer, python: Path) -> None:
        """An installer that exits 0 is not trusted on its word: a stamp only ever lands on
        an environment that finds every module the hooks import."""
        if not self.modules:
            return
        import subprocess

        probe = ("import importlib.util, sys; print(' '.join(m for m in sys.argv[1:] "
                 "if importlib.util.find_spec(m) is None))")
        done = subprocess.run([str(python), "-I", "-c", probe, *self.modules], cwd=self.data_dir,
                              env=installers.child_env(), capture_output=True, text=True,
                              timeout=60, check=False)
        missing = done.stdout.strip() if done.returncode == 0 else "its Python does not start"
        if missing:
            raise BuildFailed(f"{installer.label} finished, but the environment lacks {missing}")

    def _point_env_at(self, final: Path) -> None:
        link = self.data_dir / f".{self.name}.link-{os.getpid()}"
        link.unlink(missing_ok=True)
        link.symlink_to(final.relative_to(self.data_dir), target_is_directory=True)
        if self.env.is_dir() and not self.env.is_symlink():
            import shutil

            shutil.rmtree(self.env)  # an environment made by hand; ours are always symlinks
        os.replace(link, self.env)

    def _remove_other_builds(self, keep: set[Path | None]) -> None:
        import shutil

        for entry in self.builds.iterdir():
            if entry.resolve() not in keep:
                shutil.rmtree(entry, ignore_errors=True)


def compile_prices(python: Path, cwd: Path) -> bool:
    """Compile the price table into the new environment (goal/budget/price_table.py), so no /goal
    pays for importing genai-prices; True when it did. A failure costs nothing but that: the
    first /goal compiles it then, or refuses a dollar ceiling it cannot count."""
    import subprocess

    code = ("import sys; sys.path.append(sys.argv[1]); "
            "from forge_runtime.goal.budget import price_table; price_table.write()")
    try:
        done = subprocess.run([str(python), "-I", "-c", code,
                               str(Path(__file__).resolve().parents[1])], cwd=cwd,
                              env=installers.child_env(), capture_output=True, timeout=120,
                              check=False)
    except (OSError, subprocess.TimeoutExpired):
        return False
    return done.returncode == 0


def fix_command(data_dir: Path | None, python: str = sys.executable) -> str:
    """The full command that retries the bootstrap by hand, showing the installer's output."""
    data = f" --data {shlex.quote(str(data_dir))}" if data_dir else ""
    package_parent = resources.PACKAGE_DIR.parent  # where `-m forge_runtime...` resolves
    return (f"cd {shlex.quote(str(package_parent))} && {shlex.quote(python)} "
            f"-m forge_runtime.bootstrap{data}")


def pip_fallback(python: str = sys.executable) -> str:
    """The other way out: install the hook dependencies into the interpreter itself."""
    return " ".join([shlex.quote(python), "-m", "pip", "install",
                     *(shlex.quote(req) for req in HOOK_REQUIREMENTS)])


def ensure(data_dir: str | os.PathLike | None, plugin_root: str | os.PathLike | None = None,
           *, bootstrap: Bootstrap | None = None) -> str:
    """Make sure hooks will run with their dependencies; return what was the case.

    "present": the running interpreter has them. "ready": forge-env is current.
    "built": this call built forge-env. Raises ForgeError (one message, one Fix) otherwise.
    """
    data = Path(data_dir) if data_dir else None
    names = ", ".join(HOOK_REQUIREMENTS)
    if data is None:
        if not hook_python.missing_modules():
            return "present"
        raise ForgeError(f"forge's hooks need {names} and CLAUDE_PLUGIN_DATA is not set, "
                         "so there is nowhere to install them", pip_fallback())
    boot = bootstrap or Bootstrap(data)
    found = hook_python.nothing_to_build(boot.env, boot.stamp)
    if found is not None:
        return found
    if plugin_root and _is_within(data, Path(plugin_root)):
        raise ForgeError(f"CLAUDE_PLUGIN_DATA ({data}) lies inside the plugin's own directory, "
                         "which the host replaces on every update", pip_fallback())
    try:
        return "built" if boot.build() else "ready"
    except (BuildFailed, OSError) as exc:
        raise ForgeError(
            f"forge could not install its hook dependencies ({names}) into "
            f"{boot.env}: {exc}", fix_command(data),
            rationale="retries the install and shows the installer's output (uv or pip); "
                      "it needs the package index once",
            or_=[pip_fallback()] if importlib.util.find_spec("pip") else []) from None


def python_for(outcome: str, data_dir: str | os.PathLike | None) -> str:
    """The interpreter that has the hook dependencies, given what `ensure` returned."""
    if outcome == "present" or not data_dir:
        return sys.executable
    return str(env_python(Path(data_dir) / ENV_NAME))


def _is_within(path: Path, parent: Path) -> bool:
    try:
        path.resolve().relative_to(parent.resolve())
    except ValueError:
        return False
    return True


def main(argv: Sequence[str] | None = None) -> int:
    """`python -m forge_runtime.bootstrap`: build forge-env by hand, the installer's output
    shown."""
    import argparse

    from forge_runtime import hints

    parser = argparse.ArgumentParser(prog="python -m forge_runtime.bootstrap",
                                     description=main.__doc__)
    parser.add_argument("--data", default=os.environ.get("CLAUDE_PLUGIN_DATA"),
                        help="the plugin data directory (default: $CLAUDE_PLUGIN_DATA)")
    args = parser.parse_args(argv)
    data = Path(args.data) if args.data else None
    try:
        boot = Bootstrap(data, verbose=True) if data else None
        outcome = ensure(data, bootstrap=boot)
    except ForgeError as exc:
        print(exc.hint().render(), file=sys.stderr)
        return EXIT_USAGE
    print(f"forge hook dependencies: {outcome}")
    print(hints.done().render())
    return EXIT_OK


if __name__ == "__main__":
    raise SystemExit(main())
