"""A lean interpreter: the shape of the `forge-env` the plugin builds for its hooks.

The interpreter running the bench may have a heavy `site`: `.pth` files that import code
at every start (an editable install's finder, vendor hooks). They make `python3 -c pass`
slower and preload modules forge would otherwise import itself (re, pathlib, typing), so
forge looks cheap next to that floor. The plugin's own environment (forge_runtime/bootstrap.py)
is a plain virtual environment holding forge's three dependencies, with none of that.

This builds its equivalent without a download: a virtual environment without pip whose
only `.pth` file is a list of paths (this interpreter's site-packages directories), so the
dependencies import exactly as installed while no `.pth` file runs code at start-up.
"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

PTH_NAME = "bench-site-packages.pth"
PLUGIN_DATA, FORGE_ENV = "plugin-data", "forge-env"


def site_packages(python: str) -> list[str]:
    """The purelib and platlib directories of `python`."""
    code = ("import sysconfig; p = sysconfig.get_paths(); "
            "print(p['purelib']); print(p['platlib'])")
    lines = subprocess.run([python, "-c", code], capture_output=True, text=True,
                           check=True).stdout.split()
    return list(dict.fromkeys(lines))


def create(base: Path, source_python: str = sys.executable) -> str:
    """A lean venv that can import `source_python`'s packages; its python. It lies where
    the plugin keeps forge-env (`<plugin data>/forge-env`, `plugin_data` gives the
    directory the host names in CLAUDE_PLUGIN_DATA) and holds the compiled price table, as
    bootstrap.py builds it: a `/goal` there seals that table instead of compiling its own
    from genai-prices (goal/rules/activation.py trusts only a table the guard keeps agents from)."""
    from forge_runtime.bootstrap import compile_prices

    env = base / PLUGIN_DATA / FORGE_ENV
    env.parent.mkdir(parents=True, exist_ok=True)
    subprocess.run([source_python, "-m", "venv", "--without-pip", str(env)], check=True)
    python = env / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    purelib = Path(subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, check=True).stdout.strip())
    (purelib / PTH_NAME).write_text("\n".join(site_packages(source_python)) + "\n",
                                    encoding="utf-8")
    if not compile_prices(python, base):
        sys.stderr.write("bench: the lean env has no compiled price table; each /goal there "
                         "compiles one\n")
    return str(python)


def plugin_data(python: str) -> str | None:
    """The plugin data directory whose forge-env `python` runs from, else None."""
    env = Path(python).parent.parent
    return str(env.parent) if env.name == FORGE_ENV else None

