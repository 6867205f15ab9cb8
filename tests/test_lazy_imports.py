"""A function-level import of forge's own modules outside a hook's reach says why it is there.

A hook process starts on every tool call, so the modules it can load import in their
functions: each event pays only for what it runs. Code no hook runs has no such reason of
itself, and an import hidden in a function hides the module's dependencies from its head. One
stays there with a `# lazy: <reason>` comment on its line or above its run of imports (a
command's start-up, a name clash, a dependency that may be missing); a `# lazy: <reason>`
line at the start of a line, outside any function, covers the whole module.

A hook's reach is computed from the source, not from a run: every module a file of
`forge_runtime/hooks/` imports, at any depth, at module level or in a function (the import
graph tests/test_architecture.py checks), with the package `__init__` each submodule import
runs. A module that imports by a computed name (`__import__(qualified)`: the event modules,
the host adapters, the shell model's families) may load any module of its own package.
launch.py hands `cli` and `notify` to their own entries from the function that runs a hook;
those two arrows lead out of the hook's process, not into it.
"""

from __future__ import annotations

import ast
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from test_architecture import ROOT, import_graph, modules_of

PACKAGE = "forge_runtime"
HOOKS = "forge_runtime.hooks"
MARKER = "# lazy: "
# The launcher's arrows to the other surfaces it starts (launch.main), not to a hook's code.
NOT_A_HOOKS_IMPORT = {("forge_runtime.launch", "forge_runtime.cli.main"),
                      ("forge_runtime.launch", "forge_runtime.notify.sender")}


def imports_by_computed_name(path: Path) -> bool:
    """True when the module calls `__import__` or `import_module` on a name it builds."""
    return any(isinstance(node, ast.Call) and node.args
               and not isinstance(node.args[0], ast.Constant)
               and (getattr(node.func, "id", None) == "__import__"
                    or getattr(node.func, "attr", None) == "import_module")
               for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))))


def hook_reach() -> set[str]:
    """Every module of forge_runtime a hook process can load."""
    modules = modules_of(PACKAGE)
    graph = import_graph(PACKAGE)
    reached: set[str] = set()
    waiting = [name for name in modules if name.startswith(HOOKS + ".") or name == HOOKS]
    while waiting:
        name = waiting.pop()
        if name in reached:
            continue
        reached.add(name)
        parts = name.split(".")
        waiting += [".".join(parts[:end]) for end in range(1, len(parts))]
        path, is_package = modules[name]
        if imports_by_computed_name(path):
            package = name if is_package else name.rpartition(".")[0]
            waiting += [other for other in modules if other.startswith(package + ".")]
        waiting += [target for target in graph[name] if (name, target) not in NOT_A_HOOKS_IMPORT]
    return reached


def unexplained_lazy_imports(source: str, package_parts: list[str]) -> list[int]:
    """Lines of the function-level imports of forge_runtime in `source` that no `# lazy:`
    comment explains (on the line, or above the run of imports the line is in);
    `package_parts` is the module's package, for relative imports."""
    lines = source.splitlines()
    if any(line.startswith(MARKER) for line in lines):
        return []
    found = set()
    for function in ast.walk(ast.parse(source)):
        if not isinstance(function, ast.FunctionDef | ast.AsyncFunctionDef):
            continue
        for node in ast.walk(function):
            if isinstance(node, ast.Import):
                names = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                names = [PACKAGE if node.level and package_parts[0] == PACKAGE
                         else node.module or ""]
            else:
                continue
            if not any(name.split(".")[0] == PACKAGE for name in names):
                continue
            above = node.lineno - 2
            while lines[above].strip().startswith(("from ", "import ")):
                above -= 1
            if MARKER not in lines[node.lineno - 1] and not lines[above].strip().startswith(MARKER):
                found.add(node.lineno)
    return sorted(found)


def test_every_lazy_import_outside_a_hooks_reach_says_why():
    reach = hook_reach()
    unexplained = []
    for name, (path, is_package) in sorted(modules_of(PACKAGE).items()):
        if name in reach:
            continue
        package_parts = name.split(".") if is_package else name.split(".")[:-1]
        unexplained += [f"{path.relative_to(ROOT)}:{line}" for line in
                        unexplained_lazy_imports(path.read_text(encoding="utf-8"),
                                                 package_parts)]
    assert not unexplained, (
        "no hook loads these modules: import at the top, or say why on the import's line "
        f"with `{MARKER}<reason>`:\n  " + "\n  ".join(unexplained))


def test_a_marker_explains_its_import_the_run_below_or_its_whole_module():
    source = ("def a():\n    from forge_runtime import hints\n"
              "def b():\n    from forge_runtime import hints  # lazy: start-up\n"
              "def c():\n    # lazy: start-up\n    import os\n    from forge_runtime import hints\n"
              "def d():\n    import json\n    from .. import hints\n")
    assert unexplained_lazy_imports(source, ["forge_runtime", "cli"]) == [2, 11]
    assert unexplained_lazy_imports(MARKER + "start-up\n" + source, ["forge_runtime"]) == []


def test_the_reach_holds_the_computed_imports_and_not_the_cli():
    reach = hook_reach()
    assert {"forge_runtime.hosts.codex", "forge_runtime.guard.shell.git",
            "forge_runtime.hooks.stop", "forge_runtime.launch"} <= reach
    assert not {"forge_runtime.cli.main", "forge_runtime.doctor"} & reach


@pytest.mark.parametrize("command", ["git status | tar -x -f a.tar; awk 1 x", "ls"])
def test_a_hook_run_loads_only_modules_of_its_reach(tmp_path, command):
    """A real PreToolUse and Stop, each in its own process: every forge module it loaded is
    one the static reach holds."""
    probe = ("import sys\nfrom forge_runtime import launch\n"
             "for event in ('PreToolUse', 'Stop'):\n"
             "    sys.stdin = open(sys.argv[1])\n"
             "    launch.run_hook([event])\n"
             "open(sys.argv[2], 'w').write(' '.join(sys.modules))\n")
    event = {"session_id": "s", "cwd": str(tmp_path), "transcript_path": None,
             "permission_mode": "default", "tool_name": "Bash",
             "tool_input": {"command": command}, "stop_hook_active": False}
    (tmp_path / "event.json").write_text(json.dumps(event))
    subprocess.run(["git", "init", "-q"], cwd=tmp_path, check=True)
    run = subprocess.run([sys.executable, "-c", probe, str(tmp_path / "event.json"),
                          str(tmp_path / "modules")],
                         cwd=tmp_path, capture_output=True, text=True, timeout=60,
                         env={**os.environ, "PYTHONPATH": str(ROOT)})
    assert run.returncode == 0, run.stderr
    loaded = {name for name in (tmp_path / "modules").read_text().split()
              if name.split(".")[0] == PACKAGE}
    assert "forge_runtime.hooks.pre_tool_use" in loaded
    assert loaded <= hook_reach()
