"""Which Python runs forge's hooks: decided at every SessionStart, without building anything.

Almost every SessionStart finds nothing to do: the hooks already run in the plugin's current
`forge-env`, or in an interpreter that holds the dependencies itself (a pip-installed forge).
That answer must cost close to a bare interpreter start (every hook of a session without a
goal stays within 1.5x of one: bench/targets.py), so this module works on strings and asks
the import system's own finders, instead of importing pathlib, importlib.util, hashlib or
shlex.
Everything else (building, reporting a failure) is forge_runtime.bootstrap's, which the
SessionStart hook imports only when `settled` has no answer.
"""

import os
import sys

from forge_runtime.digest import sha256_hex

# What hooks import, as pip requirements and as module names; pyproject.toml lists the same
# requirements (a test keeps the two in step). genai-prices is no hook's import: the first
# /goal in an environment compiles its price table from it (goal/budget/price_table.py), and the
# hooks read that file.
HOOK_REQUIREMENTS: tuple[str, ...] = ("pyyaml>=6.0", "filelock>=3.12", "jsonschema>=4.20",
                                      "genai-prices>=0.2.3")
HOOK_MODULES: tuple[str, ...] = ("yaml", "filelock", "jsonschema", "genai_prices")
ENV_NAME = "forge-env"
STAMP_FILE = "forge-stamp"


def stamp_of(requirements) -> str:
    """A short digest of the dependency list: a changed list means a rebuilt environment."""
    return sha256_hex("\n".join(sorted(requirements)).encode("utf-8"))[:16]


def findable(name: str) -> bool:
    """Whether `import name` (a top-level module) would find it, without importing it: what
    `importlib.util.find_spec` asks of each meta-path finder (PEP 451). A finder that fails
    on the name counts as not finding it."""
    if name in sys.modules:
        return True
    for finder in sys.meta_path:
        find_spec = getattr(finder, "find_spec", None)
        try:
            if find_spec is not None and find_spec(name, None) is not None:
                return True
        except (ImportError, ValueError):
            return False
    return False


def missing_modules(modules=HOOK_MODULES) -> list[str]:
    """The hook dependencies the running interpreter cannot import (found, not imported)."""
    return [name for name in modules if not findable(name)]


def env_python(env: str | os.PathLike):
    """The environment's interpreter, of `env`'s own kind (a str, or a Path for bootstrap)."""
    if isinstance(env, str):
        return os.path.join(env, "bin", "python")
    return env / "bin" / "python"


def is_current(env: str | os.PathLike, stamp: str) -> bool:
    """True when `env` is a complete environment built for this dependency list."""
    try:
        with open(os.path.join(env, STAMP_FILE), encoding="utf-8") as stream:
            recorded = stream.read().strip()
    except OSError:
        return False
    return recorded == stamp and os.path.exists(env_python(os.fspath(env)))


def running_inside(env: str | os.PathLike) -> bool:
    """Whether this interpreter is the one of `env` (the hooks already run in forge-env).

    `site` is what sets a virtual environment's `sys.prefix`; the hook launcher starts Python
    without it (-S), and then the interpreter's own path names the environment."""
    prefix = os.path.dirname(os.path.dirname(sys.executable)) if sys.flags.no_site else sys.prefix
    return os.path.realpath(prefix) == os.path.realpath(env)


def nothing_to_build(env: str | os.PathLike, stamp: str) -> str | None:
    """"present" when the running interpreter has the hook dependencies and is not a
    forge-env that went stale, "ready" when `env` is current for `stamp`, else None: how
    both `settled` and `bootstrap.ensure` begin."""
    if not running_inside(env) and not missing_modules():
        return "present"
    if is_current(env, stamp):
        return "ready"
    return None


def settled(data_dir: str | None) -> str | None:
    """The Python that has the hook dependencies when nothing has to be built, else None."""
    if not data_dir:
        return None if missing_modules() else sys.executable
    env = os.path.join(data_dir, ENV_NAME)
    found = nothing_to_build(env, stamp_of(HOOK_REQUIREMENTS))
    if found is None:
        return None
    return sys.executable if found == "present" else env_python(env)
