"""Build hook: put the repository's workflows, skills and hooks inside the wheel.

The canonical files live at the repository root because that is also the plugin's root,
where the host and `forge init` read them. A regular (non-editable) wheel has no repository
around it, so its build copies them to `forge_runtime/data/`, which
`forge_runtime.resources.bundle_root()` prefers. Everything else is in pyproject.toml.
"""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

BUNDLED_DIRS = ("workflows", "skills", "hooks", "agents", "bin")


class BuildPyWithBundle(build_py):
    def run(self):
        super().run()
        if getattr(self, "editable_mode", False):
            return  # an editable install reads the repository itself
        source = Path(__file__).resolve().parent
        target = Path(self.build_lib) / "forge_runtime" / "data"
        shutil.rmtree(target, ignore_errors=True)
        for name in BUNDLED_DIRS:
            shutil.copytree(source / name, target / name,
                            ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


setup(cmdclass={"build_py": BuildPyWithBundle})
