"""The import graph keeps the shape ARCHITECTURE.md draws: no circles, arrows only point down.

Every module of `forge_runtime/` (and of `bench/`) is parsed, not imported, and every import
statement counts, the ones inside functions too: forge imports lazily, so a circle closed by
a function-level import is a circle all the same (whichever module loads first, the other
finds it half-built the day someone moves an import to the top), and a lazy import of a
surface from the core is still the core knowing its surfaces.

An import under `if TYPE_CHECKING:` counts too: it names a type of the other module for an
annotation, so the two modules know each other as surely as if it ran (held.py annotated
with gates/goal.py's `Reading` while gates/goal.py called held.py, and the circle
goal/events.py closed through both went unseen), and the day the annotation is evaluated
(a dataclass, `get_type_hints`) the import runs.

`from package import name` is an edge to `package.name` when that is a module, else to
`package`. Importing a submodule also runs its package's `__init__`, but that is containment,
not a dependency, and is not an edge: a package may re-export its own submodules.

The layer table lives in ARCHITECTURE.md, between the `layers:` markers, so the picture and
the check cannot drift: each row names a layer and the module prefixes in it, top layer
first; a module belongs to its longest listed prefix (`__init__` is the package root alone),
and every module must belong to one.
"""

from __future__ import annotations

import ast
import re
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parent.parent
SURFACES = "surfaces"
SHELL = "forge_runtime.guard.shell"
GOAL = "forge_runtime.goal"


def modules_of(package: str) -> dict[str, tuple[Path, bool]]:
    """Dotted name -> (file, is a package) for every module under ROOT/package."""
    found = {}
    for path in sorted((ROOT / package).rglob("*.py")):
        parts = list(path.relative_to(ROOT).with_suffix("").parts)
        is_package = parts[-1] == "__init__"
        found[".".join(parts[:-1] if is_package else parts)] = (path, is_package)
    return found


def import_graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of `package` it imports anywhere in its text."""
    modules = modules_of(package)

    def known(name: str) -> str | None:
        while name and name not in modules:
            name = name.rpartition(".")[0]
        return name or None

    graph: dict[str, set[str]] = {name: set() for name in modules}
    for name, (path, is_package) in modules.items():
        here = name.split(".") if is_package else name.split(".")[:-1]
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            if isinstance(node, ast.Import):
                targets = [alias.name for alias in node.names]
            elif isinstance(node, ast.ImportFrom):
                base = node.module or ""
                if node.level:
                    base = ".".join(here[:len(here) - node.level + 1] + ([base] if base else []))
                targets = [f"{base}.{alias.name}" if f"{base}.{alias.name}" in modules else base
                           for alias in node.names]
            else:
                continue
            for target in targets:
                if target.split(".")[0] == package and (found := known(target)) != name:
                    graph[name].add(found)
    return graph


def circles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components of more than one module (Tarjan, iteratively)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    on_stack: set[str] = set()
    found = []
    for start in graph:
        if start in index:
            continue
        work = [(start, iter(sorted(graph[start])))]
        index[start] = low[start] = len(index)
        stack.append(start)
        on_stack.add(start)
        while work:
            node, successors = work[-1]
            for successor in successors:
                if successor not in index:
                    index[successor] = low[successor] = len(index)
                    stack.append(successor)
                    on_stack.add(successor)
                    work.append((successor, iter(sorted(graph[successor]))))
                    break
                if successor in on_stack:
                    low[node] = min(low[node], index[successor])
            else:
                work.pop()
                if work:
                    low[work[-1][0]] = min(low[work[-1][0]], low[node])
                if low[node] == index[node]:
                    component = []
                    while True:
                        member = stack.pop()
                        on_stack.discard(member)
                        component.append(member)
                        if member == node:
                            break
                    if len(component) > 1:
                        found.append(sorted(component))
    return found


def layer_table(table: str = "layers", base: str = "forge_runtime") -> list[tuple[str, list[str]]]:
    """(layer, module names) of ARCHITECTURE.md's table `table`, top layer first; its
    entries are relative to `base` (`goal` is forge_runtime.goal, `__init__` is `base`)."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = re.search(f"<!-- {table}: begin -->\n(.*?)<!-- {table}: end -->", text, re.S)
    assert block, f"ARCHITECTURE.md has no <!-- {table}: begin --> ... <!-- {table}: end -->"
    rows = []
    for line in block.group(1).splitlines():
        cells = [cell.strip() for cell in line.strip().strip("|").split("|")]
        if len(cells) == 2 and cells[0] and not set(cells[0]) <= set("-") and \
                cells[0] != "layer":
            rows.append((cells[0], [base if entry == "__init__" else f"{base}.{entry}"
                                    for entry in (cell.strip("` ") for cell in
                                                  cells[1].split(","))]))
    return rows


def upward_imports(graph: dict[str, set[str]], table: list[tuple[str, list[str]]],
                   within: str = "forge_runtime") -> list[str]:
    """Every import of a module under `within` from a layer above its own."""
    def inside(module: str) -> bool:
        return module == within or module.startswith(within + ".")

    return [f"{module} ({table[layer_of(module, table)][0]}) imports {target} "
            f"({table[layer_of(target, table)][0]})"
            for module, targets in sorted(graph.items()) if inside(module)
            for target in sorted(targets)
            if inside(target) and layer_of(target, table) < layer_of(module, table)]


def layer_of(module: str, table: list[tuple[str, list[str]]]) -> int | None:
    """The row of `module`'s longest matching prefix, None when no row names it."""
    best, depth = None, -1
    for row, (_, prefixes) in enumerate(table):
        for prefix in prefixes:
            # the package root's row holds its __init__ alone, not all it contains
            matches = module == prefix or (module.startswith(prefix + ".") and
                                           prefix != "forge_runtime")
            if matches and prefix.count(".") > depth:
                best, depth = row, prefix.count(".")
    return best


def package_of(module: str) -> str:
    """The package node `module` counts in: its top-level package under forge_runtime/,
    or itself for a module at the root. Root modules are nodes of their own because they
    sit on every floor of the layer table, from `entry` to `ground`: lumped together they
    would tie the launcher to the hashing helpers it imports."""
    return ".".join(module.split(".")[:2])


def package_graph(graph: dict[str, set[str]],
                  table: list[tuple[str, list[str]]]) -> dict[str, set[str]]:
    """The module graph collapsed to packages, for the modules below the surfaces (the
    entry points and surfaces route to one another by design: the CLI's `hints` command
    runs the audit that runs the CLI, `launch` starts the hooks whose `__main__` runs
    `launch`)."""
    floor = [name for name, _ in table].index(SURFACES)
    below = {module for module in graph
             if (layer := layer_of(module, table)) is not None and layer > floor}
    packages: dict[str, set[str]] = {package_of(module): set() for module in below}
    for module in below:
        packages[package_of(module)] |= {
            package_of(target) for target in graph[module]
            if target in below
            and package_of(target) != package_of(module)}
    return packages


def core_order() -> list[str]:
    """The core packages of ARCHITECTURE.md's `core order` table, top first."""
    text = (ROOT / "ARCHITECTURE.md").read_text(encoding="utf-8")
    block = re.search("<!-- core order: begin -->\n(.*?)<!-- core order: end -->", text, re.S)
    assert block, "ARCHITECTURE.md has no <!-- core order: begin --> ... <!-- core order: end -->"
    return [f"forge_runtime.{cells[0].strip('` ')}"
            for cells in ([cell.strip() for cell in line.strip().strip("|").split("|")]
                          for line in block.group(1).splitlines())
            if cells[0] and not set(cells[0]) <= set("-") and cells[0] != "package"]


def upward_packages(packages: dict[str, set[str]], order: list[str]) -> list[str]:
    """Every import between two packages of `order` from the lower to the higher."""
    return [f"{package} imports {target}" for package, targets in sorted(packages.items())
            if package in order for target in sorted(targets)
            if target in order and order.index(target) < order.index(package)]


def test_no_package_imports_itself_in_a_circle():
    """Below the surfaces, packages reach each other in one direction only: a circle of
    packages is a knot the module check cannot see (each module's imports may be acyclic
    while goal reaches the guard and the guard the goal)."""
    assert circles(package_graph(import_graph("forge_runtime"), layer_table())) == []


def test_core_packages_import_only_down_their_order():
    """ARCHITECTURE.md's `core order` lists every core package, top first, and no core
    package imports one listed above it."""
    table = layer_table()
    order = core_order()
    assert sorted(order) == sorted(dict(table)["core"])
    packages = package_graph(import_graph("forge_runtime"), table)
    assert upward_packages(packages, order) == []


def test_the_guard_reaches_the_goal_only_through_its_store():
    """The guard runs before every tool call and asks the goal one thing, what is bound and
    recorded on disk: it imports `goal/store/` and nothing above it (no rule, no event)."""
    store = GOAL + ".store"
    assert sorted((module, target) for module, targets in import_graph("forge_runtime").items()
                  if module.startswith("forge_runtime.guard.") for target in targets
                  if target.startswith(GOAL + ".") and not target.startswith(store + ".")
                  and target != store) == []


@pytest.mark.parametrize("package", ["forge_runtime", "bench"])
def test_no_module_imports_itself_in_a_circle(package):
    assert circles(import_graph(package)) == []


def test_every_module_has_a_layer():
    table = layer_table()
    assert [name for name, _ in table][:2] == ["entry", SURFACES]
    assert [module for module in import_graph("forge_runtime")
            if layer_of(module, table) is None] == []


def test_imports_only_point_down_the_layers():
    assert upward_imports(import_graph("forge_runtime"), layer_table()) == []


def test_the_shell_model_imports_only_down_its_own_layers():
    """The shell model's modules each have their layer (ARCHITECTURE.md's second table),
    and none of them imports one above it: a command model never the table or the walk."""
    table = layer_table("shell layers", SHELL)
    graph = import_graph("forge_runtime")
    listed = {module for _, modules in table for module in modules}
    assert listed == {module for module in graph if module == SHELL or
                      module.startswith(SHELL + ".")}
    assert upward_imports(graph, table, within=SHELL) == []


def test_the_goal_package_imports_only_down_its_own_layers():
    """Every module of goal/ has its layer (ARCHITECTURE.md's goal table, by prefix), every
    row names modules that exist, and none imports a row above its own: the store never a
    rule, a rule never an event handler, the layout nothing of goal/ at all."""
    table = layer_table("goal layers", GOAL)
    graph = import_graph("forge_runtime")
    inside = [module for module in graph if module == GOAL or module.startswith(GOAL + ".")]
    assert [module for module in inside if layer_of(module, table) is None] == []
    assert [prefix for _, prefixes in table for prefix in prefixes
            if not any(module == prefix or module.startswith(prefix + ".")
                       for module in inside)] == []
    assert upward_imports(graph, table, within=GOAL) == []


def test_the_goal_package_map_lists_every_module():
    """goal/__init__.py's map is where a newcomer starts: it names every module of the
    package by its path under goal/, and no module that is gone."""
    package = ROOT / "forge_runtime" / "goal"
    mapped = set(re.findall(r"^ {4}([a-z_]+(?:/[a-z_]+)*)\s", (package / "__init__.py")
                            .read_text(encoding="utf-8"), re.M))
    modules = {path.relative_to(package).with_suffix("").as_posix()
               for path in package.rglob("*.py") if path.name != "__init__.py"}
    assert mapped == modules


# What may use the host kit (the scripted model, the host runner, pinned host builds): the
# kit itself, the demo (which runs a real host session by design) and the drift check (which
# reads pinned builds). forge's rules and the hooks run with no test kit loaded.
HOSTKIT = "forge_runtime.hostkit"
HOSTKIT_USERS = (HOSTKIT, "forge_runtime.demo", "forge_runtime.host_drift")


def test_no_production_module_imports_the_host_kit():
    graph = import_graph("forge_runtime")
    assert sorted((module, target) for module, targets in graph.items() for target in targets
                  if (target == HOSTKIT or target.startswith(HOSTKIT + "."))
                  and not module.startswith(HOSTKIT_USERS)) == []


def test_the_check_sees_lazy_imports_and_circles(tmp_path, monkeypatch):
    """The graph is what the checks above stand on: a lazily closed circle, one closed
    across packages through function-level imports and an annotation-only import (the shape
    of gates/goal.py, held.py, streak.py and goal/events.py before they were untied), and a
    lazy import from the core into a surface are all found."""
    package = tmp_path / "forge_runtime"
    for directory in (package, package / "goal", package / "gates", package / "hooks"):
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "__init__.py").write_text("")
    (package / "goal" / "a.py").write_text("def f():\n    from forge_runtime.goal import b\n")
    (package / "goal" / "b.py").write_text("from . import a\n")
    (package / "goal" / "c.py").write_text("def g():\n    from ..hooks.stop import x\n")
    (package / "hooks" / "stop.py").write_text("x = 1\n")
    (package / "goal" / "events.py").write_text(
        "def stop():\n    from forge_runtime.gates.held import hold_met\n")
    (package / "gates" / "held.py").write_text(
        "TYPE_CHECKING = False\nif TYPE_CHECKING:\n    from forge_runtime.gates.goal import R\n")
    (package / "gates" / "goal.py").write_text(
        "class R:\n    pass\ndef after():\n    from forge_runtime.gates import streak\n")
    (package / "gates" / "streak.py").write_text(
        "def warning():\n    from ..goal.events import CODE\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    graph = import_graph("forge_runtime")
    assert sorted(circles(graph)) == [
        ["forge_runtime.gates.goal", "forge_runtime.gates.held", "forge_runtime.gates.streak",
         "forge_runtime.goal.events"],
        ["forge_runtime.goal.a", "forge_runtime.goal.b"]]
    assert graph["forge_runtime.goal.c"] == {"forge_runtime.hooks.stop"}
    table = [("entry", []), (SURFACES, ["forge_runtime.hooks"]),
             ("core", ["forge_runtime.goal"]), ("ground", ["forge_runtime"])]
    assert layer_of("forge_runtime.hooks.stop", table) < layer_of("forge_runtime.goal.c", table)


def test_the_package_check_sees_a_knot_no_module_circle_shows(tmp_path, monkeypatch):
    """Modules without a circle can still tie packages together: the goal's activation
    reading the guard's rules while the guard reads the goal's sessions (main before the
    goal read guard.yaml from protected/) is a circle of packages. The surfaces calling
    each other, and root modules on different floors, are not."""
    package = tmp_path / "forge_runtime"
    for directory in (package, package / "goal", package / "guard", package / "cli",
                      package / "protected"):
        directory.mkdir(parents=True, exist_ok=True)
        (directory / "__init__.py").write_text("")
    (package / "goal" / "activation.py").write_text(
        "def limits():\n    from forge_runtime.guard import rules\n")
    (package / "goal" / "sessions.py").write_text("from forge_runtime import roots\n")
    (package / "guard" / "rules.py").write_text("from forge_runtime.protected import paths\n")
    (package / "guard" / "decide.py").write_text(
        "def decide():\n    from forge_runtime.goal.sessions import binding\n")
    (package / "protected" / "paths.py").write_text("from forge_runtime import roots\n")
    (package / "cli" / "main.py").write_text("def audit():\n    from .. import hint_audit\n")
    (package / "cli" / "render.py").write_text("")
    (package / "hint_audit.py").write_text("from forge_runtime.cli.render import x\n")
    (package / "roots.py").write_text("")
    (package / "launch.py").write_text("from forge_runtime import roots\n")
    monkeypatch.setattr(sys.modules[__name__], "ROOT", tmp_path)
    graph = import_graph("forge_runtime")
    table = [("entry", ["forge_runtime.launch"]),
             (SURFACES, ["forge_runtime.cli", "forge_runtime.hint_audit"]),
             ("core", ["forge_runtime.goal", "forge_runtime.guard"]),
             ("ground", ["forge_runtime", "forge_runtime.protected", "forge_runtime.roots"])]
    assert circles(graph) == []
    packages = package_graph(graph, table)
    assert circles(packages) == [["forge_runtime.goal", "forge_runtime.guard"]]
    assert upward_packages(packages, ["forge_runtime.guard", "forge_runtime.goal"]) == [
        "forge_runtime.goal imports forge_runtime.guard"]
    graph["forge_runtime.goal.activation"].discard("forge_runtime.guard.rules")
    untied = package_graph(graph, table)
    assert circles(untied) == []
    assert upward_packages(untied, ["forge_runtime.guard", "forge_runtime.goal"]) == []
    assert "forge_runtime.cli" not in packages and packages["forge_runtime.roots"] == set()
