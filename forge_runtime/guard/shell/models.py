"""Which model judges each command: the one table the walk reads.

A command family is a module of this package with a `MODELS` table, command name -> model
`model(name, args, ctx, child)`, which returns a Finding or (are the command's effects
modelled, does it name a protected path). "Modelled" means every file it writes was
checked, so it may run even beside a protected location; anything else is code forge
cannot prove read-only (`check_unmodelled`).

`files` models most commands a session runs and is imported with the walk; the other
families are imported the first time one of their commands runs (a Bash call that runs no
git pays nothing for git's model), so their commands are named here. A new model is a
function and its `MODELS` row in its family, plus its name in LAZY_FAMILIES when the family
is a lazy one; a new family is a module and its row here. tests/test_guard_shell_models.py
holds the table and the families' own tables to each other.
"""

import sys

from forge_runtime.guard.paths import Finding
from forge_runtime.guard.shell import files
from forge_runtime.guard.shell.operands import check_unmodelled
from forge_runtime.guard.shell.state import Context

PACKAGE = "forge_runtime.guard.shell"
# The families imported only when one of their commands runs, and the commands they model.
LAZY_FAMILIES = {
    "git": frozenset({"git"}),
    "archives": frozenset({"tar", "bsdtar", "gtar", "unzip", "cpio", "zip", "patch", "pax",
                           "ar", "7z", "7za", "7zr", "7zz", "gzip", "gunzip", "pigz", "bzip2",
                           "bunzip2", "xz", "unxz", "lzma", "unlzma", "compress", "uncompress",
                           "lzip", "zstd", "unzstd", "lz4", "brotli"}),
    "hosts": frozenset({"claude", "codex"}),  # the host CLIs' off switches
}
# Command name -> the family that models it.
TABLE = {**dict.fromkeys(files.MODELS, "files"),
         **{name: family for family, names in LAZY_FAMILIES.items() for name in names}}


def family(name: str):
    """The module of family `name` (`__import__` and sys.modules: `importlib` is one more
    import for every Bash call)."""
    qualified = f"{PACKAGE}.{name}"
    __import__(qualified)
    return sys.modules[qualified]


def check_command(name: str, args: list[str], ctx: Context,
                  child) -> Finding | tuple[bool, bool]:
    """The model of command `name`; `child(code, ctx)` judges code it runs in a child."""
    owner = TABLE.get(name)
    if owner is None:
        return check_unmodelled(name, args, ctx)
    models = files.MODELS if owner == "files" else family(owner).MODELS
    return models[name](name, args, ctx, child)
