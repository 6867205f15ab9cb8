"""forge installed the way a person installs it: from its marketplace, into a `Host`'s HOME.

    with Host(workdir, script, plugin_dirs=()) as host:   # nothing on the command line
        forge = install_from_marketplace(host, repo)      # clone, marketplace add, install
        session = host.run("/goal ...", cwd=project, env=forge.env)

`--plugin-dir` loads a plugin from wherever the test points, with no settings entry, no
install record and no data directory of the host's own; a person's forge has all three, and
those are exactly what an agent can aim at to switch forge off. So this does what a person
does, with the host's real CLI and the host's HOME:

1. `git clone` of `repo` (its committed state) to `~/.claude/plugins/marketplaces/forge`,
   where the host clones a marketplace a person adds from GitHub (the host kit has no
   network, and the host's CLI takes a git URL only over https);
2. `claude plugin marketplace add <clone>` and `claude plugin install forge@forge`: the
   host writes `~/.claude/settings.json` (`enabledPlugins`, `extraKnownMarketplaces`),
   `known_marketplaces.json`, `installed_plugins.json` and its plugin cache itself;
3. `env` for the sessions: a `python3` first on PATH without forge's hook dependencies, so
   the first SessionStart bootstraps `forge-env` under the plugin's data directory as on a
   person's machine; pip offline (`PIP_NO_INDEX`), finding the test interpreter's own copies
   of those dependencies as wheels (`wheelhouse`), no uv; the host's `claude` on PATH, as
   on a machine where a person can type it; and no `FORGE_PYTHON`, so hooks run the
   launcher's own choice (forge-env). The host kit's hook recorder therefore sees nothing:
   `session.hooks` is empty and `session.hook_events` holds the host's own view. The MCP
   SDK is not among the wheels: forge's MCP server says it cannot install it (a plugin error
   in the debug log), and the session goes on.

What an attack aims at is then where it is on a person's machine: `~/.claude/settings.json`,
`~/.claude/plugins/` (the marketplace clone, the host's cache copy, the data directory with
forge-env).
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from dataclasses import dataclass, field
from pathlib import Path

from forge_runtime.hook_python import HOOK_REQUIREMENTS
from forge_runtime.hostkit.wheels import repack_installed

MARKETPLACE = "forge"
PLUGIN = "forge@forge"
DEPENDENCIES = tuple(re.split(r"[<>=!~\[;\s]", req, maxsplit=1)[0] for req in HOOK_REQUIREMENTS)


class InstallFailed(RuntimeError):
    """A step of the install did not succeed; the message holds the host's own output."""


@dataclass
class Forge:
    """forge as the host installed it into one pretend machine: its HOME, the clone the
    marketplace points at, and the environment for the sessions."""

    home: Path
    clone: Path
    env: dict[str, str] = field(default_factory=dict)


def install_from_marketplace(host, repo: str | Path) -> Forge:
    """Install forge from a clone of `repo` into `host`'s HOME with the host's own CLI."""
    clone = host.home / ".claude" / "plugins" / "marketplaces" / MARKETPLACE
    _run(["git", "clone", "-q", "--no-hardlinks", str(repo), str(clone)], "git clone")
    for words in (["plugin", "marketplace", "add", str(clone)], ["plugin", "install", PLUGIN]):
        done = host.cli(words)
        if done.returncode != 0:
            raise InstallFailed(f"claude {' '.join(words)}: {done.stdout}{done.stderr}")
    return Forge(host.home, clone, session_env(host.workdir, Path(host.claude_bin)))


def session_env(workdir: Path, claude_bin: Path) -> dict[str, str]:
    """The environment of a person's machine for the sessions (see the module docstring)."""
    bare = workdir / "bare-python"
    if not bare.exists():
        _run([sys.executable, "-m", "venv", "--without-pip", str(bare)], "python -m venv")
    tools = workdir / "tools"
    tools.mkdir(exist_ok=True)
    if not (tools / "claude").exists():
        (tools / "claude").symlink_to(claude_bin)
    path = [str(bare / "bin"), str(tools)] + [
        entry for entry in os.environ.get("PATH", "").split(os.pathsep)
        if entry and not os.path.exists(os.path.join(entry, "uv"))]
    return {"PATH": os.pathsep.join(path), "FORGE_PYTHON": "",
            "PIP_CONFIG_FILE": os.devnull, "PIP_NO_INDEX": "1",
            "PIP_FIND_LINKS": str(wheelhouse(workdir / "wheels")),
            "PIP_DISABLE_PIP_VERSION_CHECK": "1"}


def wheelhouse(root: Path, names: tuple[str, ...] = DEPENDENCIES) -> Path:
    """Wheels of `names` and everything they need, packed from this interpreter's installed
    copies (no network: the bootstrap's pip installs from here)."""
    repack_installed(names, root)
    return root


def _run(command: list[str], what: str) -> None:
    done = subprocess.run(command, capture_output=True, text=True, timeout=120)
    if done.returncode != 0:
        raise InstallFailed(f"{what}: {done.stdout}{done.stderr}")
