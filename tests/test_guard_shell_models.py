"""The table of command models (shell/walk.py) and the families' own tables agree."""

import subprocess
import sys
from pathlib import Path

import pytest

from forge_runtime.guard.shell import walk

REPO = str(Path(__file__).resolve().parents[1])


def test_each_lazy_family_models_exactly_the_commands_the_walk_names_for_it():
    for family, names in walk.LAZY_FAMILIES.items():
        assert set(walk.family(family).MODELS) == names, family


def test_no_command_has_two_families():
    from forge_runtime.guard.shell import files

    sizes = [len(files.MODELS), *(len(names) for names in walk.LAZY_FAMILIES.values())]
    assert sum(sizes) == len(set(files.MODELS) | set(walk.LAZY))


@pytest.mark.parametrize("command, family", [
    ("git status", "git"), ("tar -xf a.tar", "archives"), ("claude plugin list", "hosts"),
    ("awk '{print $1}' f", "awk")])
def test_a_family_is_imported_only_when_one_of_its_commands_runs(tmp_path, command, family):
    code = ("import sys\n"
            "from forge_runtime.guard import shell\n"
            f"shell.analyse('ls -la && cat README.md', {str(tmp_path)!r}, {{}}, [])\n"
            f"before = 'forge_runtime.guard.shell.{family}' in sys.modules\n"
            f"shell.analyse({command!r}, {str(tmp_path)!r}, {{}}, [])\n"
            f"print(before, 'forge_runtime.guard.shell.{family}' in sys.modules)")
    done = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          cwd=REPO, timeout=60)
    assert done.stdout.split() == ["False", "True"], done.stderr
