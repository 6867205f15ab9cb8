"""forge's own distribution: its name on a package index, and where this copy of forge can
be installed from again.

The import package is `forge_runtime` and the command is `forge`, but the distribution has a
name of its own: `forge-runtime` on the public index is somebody else's project, and an
install line that names it would put a stranger's code where forge's hooks run. forge is not
published on the public index either, so an install line forge prints names the source this
copy came from: the checkout or plugin tree it runs from, or the source pip recorded when it
installed this copy (PEP 610's `direct_url.json`); only a copy that came from an index of
its own is reinstalled by name.
"""

from __future__ import annotations

import shlex
from pathlib import Path

NAME = "forge-goal-runtime"
ROOT = Path(__file__).resolve().parent.parent


def _names_us(pyproject: Path) -> bool:
    import tomllib

    try:
        return tomllib.loads(pyproject.read_text(encoding="utf-8"))["project"]["name"] == NAME
    except (OSError, ValueError, KeyError, TypeError):
        return False


def source() -> str:
    """What `pip install` takes to install this forge again (a path, a URL, or `NAME`)."""
    if _names_us(ROOT / "pyproject.toml"):
        return str(ROOT)
    recorded = _recorded_source()
    return recorded if recorded is not None else NAME


def _recorded_source() -> str | None:
    import json
    from importlib import metadata

    try:
        text = metadata.distribution(NAME).read_text("direct_url.json")
        found = json.loads(text) if text else None
    except (metadata.PackageNotFoundError, ValueError):
        return None
    url = found.get("url") if isinstance(found, dict) else None
    if not isinstance(url, str) or not url:
        return None
    vcs = found.get("vcs_info")
    if isinstance(vcs, dict) and isinstance(vcs.get("vcs"), str):
        return f"{vcs['vcs']}+{url}"
    return url.removeprefix("file://") if url.startswith("file:///") else url


def pip_install(python: str, *, reinstall: bool = False) -> str:
    """The full command that installs this forge into `python` (quoted for a shell)."""
    words = [python, "-m", "pip", "install", *(["--force-reinstall"] if reinstall else []),
             shlex.quote(source())]
    return " ".join(words)
