"""Where forge's shipped Markdown and hook helpers live, however forge was installed.

The canonical files sit at the repository root (`workflows/`, `skills/`, `hooks/`, `agents/`,
`bin/`), which is also the plugin's root. A plugin install and an editable install read them
there. A regular wheel has no repository around it, so the build copies them into
`forge_runtime/data/` (see setup.py); that copy wins when present.
"""

from __future__ import annotations

from pathlib import Path

from forge_runtime.errors import ForgeError

PACKAGE_DIR = Path(__file__).resolve().parent
BUNDLED_DIRS = ("workflows", "skills", "hooks", "agents", "bin")
STATE_TEMPLATE = PACKAGE_DIR / "templates" / "state.md"


def _has_bundle(candidate: Path) -> bool:
    return all((candidate / name).is_dir() for name in BUNDLED_DIRS)


def bundle_root() -> Path:
    """The directory holding `workflows/`, `skills/` and `hooks/` for this install."""
    for candidate in (PACKAGE_DIR / "data", PACKAGE_DIR.parent):
        if _has_bundle(candidate):
            return candidate
    raise ForgeError("forge's workflows, skills and hook helpers are missing from this install",
                     "python3 -m pip install --force-reinstall forge-runtime")


def plugin_root() -> Path | None:
    """The plugin bundle's root when forge runs from one (a checkout or a plugin install)."""
    root = PACKAGE_DIR.parent
    return root if (root / ".claude-plugin" / "plugin.json").is_file() else None


def host_plugin_dir(scratch: Path) -> Path:
    """The forge plugin to load into a host session (`--plugin-dir`): the bundle forge runs
    from, else one assembled under `scratch` from what a wheel install carries (hooks,
    workflows, skills, agents, bin) plus a manifest. `forge demo` and the host kit's
    fixtures use it."""
    root = plugin_root()
    if root is not None:
        return root
    import json
    import shutil

    built = scratch / "forge-plugin"
    if built.is_dir():  # assembled by an earlier call for the same scratch dir
        return built
    bundle = bundle_root()
    for name in BUNDLED_DIRS:
        shutil.copytree(bundle / name, built / name)
    (built / ".claude-plugin").mkdir()
    (built / ".claude-plugin" / "plugin.json").write_text(json.dumps(
        {"name": "forge", "description": "forge, as installed from the wheel"}))
    return built
