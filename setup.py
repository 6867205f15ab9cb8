"""Build hook: put the plugin's files (workflows, skills, hooks, agents, cli, the manifest,
the MCP registration, the icon, the docs) inside the wheel.

The canonical files live at the repository root because that is also the plugin's root,
where the host and `forge init` read them. A regular (non-editable) wheel has no repository
around it, so its build copies them to `forge_runtime/data/`, which
`forge_runtime.resources.bundle_root()` prefers and from which a plugin is assembled with
the same files as the repository's (`PLUGIN_ENTRIES` there; a test holds the two lists
equal). Everything else is in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

PLUGIN_ENTRIES = ("workflows", "skills", "hooks", "agents", "cli", ".claude-plugin", "assets",
                  ".mcp.json", "README.md", "docs", "LICENSE")


class BuildPyWithBundle(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the repository itself
        source = Path(__file__).resolve().parent
        target = Path(self.build_lib) / "forge_runtime" / "data"
        shutil.rmtree(target, ignore_errors=True)
        for name in PLUGIN_ENTRIES:
            if (source / name).is_dir():
                shutil.copytree(source / name, target / name,
                                ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))
            else:
                shutil.copy2(source / name, target / name)


setup(cmdclass={"build_py": BuildPyWithBundle})
