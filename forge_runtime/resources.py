"""Where forge's shipped Markdown and hook helpers live, however forge was installed.

The canonical files sit at the repository root (`workflows/`, `skills/`, `hooks/`, `agents/`,
`cli/`), which is also the plugin's root. A plugin install and an editable install read them
there. A regular wheel has no repository around it, so the build copies them into
`forge_runtime/data/` (see setup.py); that copy wins when present.
"""

from __future__ import annotations

from pathlib import Path

from forge_runtime.command_path import PLUGIN_CLI_DIR
from forge_runtime.errors import ForgeError

PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLED_DIRS = ("workflows", "skills", "hooks", "agents", PLUGIN_CLI_DIR)
# Everything a plugin install holds besides forge_runtime itself: a plugin assembled from a
# wheel (`host_plugin_dir`) has the repository's files, the MCP registration included.
PLUGIN_ENTRIES = (*BUNDLED_DIRS, ".claude-plugin", "assets", ".mcp.json", "README.md", "docs",
                  "LICENSE")
STATE_TEMPLATE = PACKAGE_DIR / "templates" / "state.md"


def _has_bundle(candidate: Path) -> bool:
    return all((candidate / name).is_dir() for name in BUNDLED_DIRS)


def bundle_root() -> Path:
    """The directory holding `workflows/`, `skills/` and `hooks/` for this install."""
    for candidate in (PACKAGE_DIR / "data", PACKAGE_DIR.parent):
        if _has_bundle(candidate):
            return candidate
    from forge_runtime import distribution

    raise ForgeError("forge's workflows, skills and hook helpers are missing from this install",
                     distribution.pip_install("python3", reinstall=True))


def plugin_root() -> Path | None:
    """The plugin bundle's root when forge runs from one (a checkout or a plugin install)."""
    root = PACKAGE_DIR.parent
    return root if (root / ".claude-plugin" / "plugin.json").is_file() else None


def host_plugin_dir(scratch: Path) -> Path:
    """The forge plugin to load into a host session (`--plugin-dir`): the bundle forge runs
    from, else one assembled under `scratch` from what a wheel install carries: the same
    files as the repository's plugin, forge_runtime aside (its launchers then run the
    installed one). `forge demo` and the host kit's fixtures use it."""
    root = plugin_root()
    if root is not None:
        return root
    import shutil

    built = scratch / "forge-plugin"
    if built.is_dir():  # assembled by an earlier call for the same scratch dir
        return built
    bundle = bundle_root()
    partial = scratch / "forge-plugin.partial"
    shutil.rmtree(partial, ignore_errors=True)
    for name in PLUGIN_ENTRIES:
        if (bundle / name).is_dir():
            shutil.copytree(bundle / name, partial / name)
        else:
            partial.mkdir(parents=True, exist_ok=True)
            shutil.copy2(bundle / name, partial / name)
    partial.rename(built)  # whole or not at all: a half-copied plugin is never reused
    return built
