"""Every file a comment or docstring under forge_runtime/ names exists.

A newcomer follows `see goal/hosts/transcript.py` to learn why; a name that leads nowhere
(a module renamed or never written) sends them looking for it instead. A path with a
folder resolves against the repository, forge_runtime/ or a folder the module sits in; a
bare file name must be some file of the project's, or a standard library module's (a
planted `json.py`).
"""

import ast
import io
import re
import sys
import tokenize
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
PACKAGE = REPO / "forge_runtime"
# `a/b.py` or `b.py`, not part of a longer word, path or dotted name
FILE = re.compile(r"(?<![\w./-])((?:[\w.-]+/)*[\w-]+\.py)\b")


def prose(path: Path):
    """(line, text) of every comment and docstring-like string statement of `path`."""
    source = path.read_text(encoding="utf-8")
    for token in tokenize.generate_tokens(io.StringIO(source).readline):
        if token.type == tokenize.COMMENT:
            yield token.start[0], token.string
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Expr) and isinstance(node.value, ast.Constant) \
                and isinstance(node.value.value, str):
            yield node.lineno, node.value.value


def project_files() -> set[str]:
    tops = [PACKAGE, REPO / "bench", REPO / "tests", REPO / "hooks", REPO / "cli"]
    return {path.name for top in tops for path in top.rglob("*.py")} | \
        {path.name for path in REPO.glob("*.py")}


def resolves(name: str, module: Path, known: set[str]) -> bool:
    if "/" not in name:
        return name in known or name[:-3] in sys.stdlib_module_names
    return any((base / name).exists() for base in (REPO, PACKAGE, *module.parents))


def dangling() -> set[tuple[str, str]]:
    known = project_files()
    return {(path.relative_to(PACKAGE).as_posix(), name)
            for path in sorted(PACKAGE.rglob("*.py"))
            for _, text in prose(path) for name in FILE.findall(text)
            if not resolves(name, path, known)}


def test_every_file_a_comment_names_exists():
    assert dangling() == set()


def test_a_module_that_never_existed_is_found(tmp_path):
    module = tmp_path / "forge_runtime" / "goal" / "charging.py"
    module.parent.mkdir(parents=True)
    module.write_text('"""Turns no person typed (goal/origin.py)."""\n# see transcript.py\n')
    names = {name for _, text in prose(module) for name in FILE.findall(text)}
    assert names == {"goal/origin.py", "transcript.py"}
    assert not resolves("goal/origin.py", module, project_files())
    assert resolves("goal/hosts/transcript.py", PACKAGE / "goal" / "rules" / "charging.py",
                    project_files())
