"""goal/store/layout.py alone spells the paths under the ledger root and the witness root.

How a name is told from an unrelated string: a name with a dot or a dash (`head.json`,
`repository-id`, `.pending.json`) is flagged wherever a module holds it as a string (its
docstrings aside); a bare word (`records`, `gates`, `sessions`) only where it is a path part:
an argument of `os.path.join`, `join`, `Path` or `joinpath`, the right side of `/`, a
module-level constant such a call or `/` takes, or one `+ "/"` joins. So `"records"` as a
dict key, `"gates"` as a schema field or `"notify"` as a command word do not trip it.
"""

import ast
from pathlib import Path

from forge_runtime.goal.store import layout

ROOT = Path(__file__).resolve().parents[1] / "forge_runtime"
LAYOUT = ROOT / "goal" / "store" / "layout.py"
# the work tree's `.forge/local/gates/` (gates/config.py) is the project's, not the ledger's;
# `.forge/local/goals` (roots.py) is the ledger root itself outside git, not a place under it
OTHER_ROOTS = {("gates/config.py", "gates"), ("roots.py", "goals")}
PATH_CALLS = {"join", "Path", "joinpath"}


def names() -> set[str]:
    """Layout's names; `.json` (a binding's suffix) names no place on its own."""
    return {value for key, value in vars(layout).items()
            if key.isupper() and isinstance(value, str)} - {layout.BINDING_SUFFIX}


def _strings(node) -> list[str]:
    if isinstance(node, ast.Constant) and isinstance(node.value, str):
        return [node.value]
    if isinstance(node, ast.JoinedStr):
        return [part.value for part in node.values if isinstance(part, ast.Constant)]
    if isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add):
        return _strings(node.left) + _strings(node.right)
    return []


def _path_parts(tree) -> list[ast.AST]:
    parts = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Call):
            func = node.func
            name = func.attr if isinstance(func, ast.Attribute) else getattr(func, "id", None)
            if name in PATH_CALLS:
                parts.extend(node.args)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Div):
            parts.append(node.right)
        elif isinstance(node, ast.BinOp) and isinstance(node.op, ast.Add) and \
                "/" in _strings(node.right):
            parts.append(node.left)
    return parts


def _constants(tree) -> dict[str, str]:
    found = {}
    for node in tree.body:
        if isinstance(node, ast.Assign):
            for target in node.targets:
                pairs = zip(target.elts, node.value.elts, strict=False) if isinstance(
                    target, ast.Tuple) and isinstance(node.value, ast.Tuple) else [
                    (target, node.value)]
                for name, value in pairs:
                    if isinstance(name, ast.Name) and isinstance(value, ast.Constant) and \
                            isinstance(value.value, str):
                        found[name.id] = value.value
    return found


def _docstrings(tree) -> set[int]:
    return {id(node.body[0].value) for node in ast.walk(tree)
            if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef,
                                 ast.AsyncFunctionDef))
            and node.body and isinstance(node.body[0], ast.Expr)}


def spelled(path: Path, taken: set[str]) -> list[str]:
    """Where the module at `path` spells one of `taken` itself."""
    tree = ast.parse(path.read_text(encoding="utf-8"))
    relative = path.relative_to(ROOT).as_posix()
    distinct = {name for name in taken if "." in name or "-" in name}
    found, docs = [], _docstrings(tree)
    for node in ast.walk(tree):
        if id(node) not in docs:
            found += [value for value in _strings(node) if value in distinct]
    constants = _constants(tree)
    for part in _path_parts(tree):
        found += [value for value in _strings(part) if value in taken]
        for node in ast.walk(part):
            if isinstance(node, ast.Name) and constants.get(node.id) in taken:
                found.append(constants[node.id])
    return sorted(f"{relative}: {value!r}" for value in set(found)
                  if (relative, value) not in OTHER_ROOTS)


def test_no_module_but_the_layout_spells_a_path_under_the_ledger_or_witness_root():
    taken = names()
    assert [line for path in sorted(ROOT.rglob("*.py")) if path != LAYOUT
            and "hostkit" not in path.parts for line in spelled(path, taken)] == []


def test_the_check_sees_literals_constants_and_suffixes(tmp_path):
    sample = tmp_path / "sample.py"
    sample.write_text('import os\nSEALED = "prices"\nKEY = {"records": 1}\n'
                      'def f(root, s):\n'
                      '    os.path.join(root, SEALED)\n'
                      '    os.path.join(root, "gates", f"{s}.stat-cache.json")\n'
                      '    return s + ".pending.json", KEY["records"]\n')
    tree_text = sample.read_text()
    probe = ROOT / "goal" / "store" / "_probe_for_test.py"
    try:
        probe.write_text(tree_text)
        found = spelled(probe, names())
    finally:
        probe.unlink()
    assert found == sorted(
        f"goal/store/_probe_for_test.py: {value!r}"
        for value in ("gates", ".pending.json", "prices", ".stat-cache.json"))


def test_the_layout_imports_nothing_of_the_goal_package():
    tree = ast.parse(LAYOUT.read_text(encoding="utf-8"))
    imported = [node.module for node in ast.walk(tree) if isinstance(node, ast.ImportFrom)]
    assert [name for name in imported if name and name.startswith("forge_runtime.goal")] == []
