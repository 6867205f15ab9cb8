"""How the plugin's launchers run forge: as this file, in isolated mode, so no project file runs.

`hooks/forge-hook` runs `<python> -I <plugin>/forge_runtime/entry.py hook <Event>` and
`bin/forge` runs `<python> -I <plugin>/forge_runtime/entry.py cli <args>`. A hook's working
directory is the project, where an agent can write anything: `python -m pkg` would put that
directory first on `sys.path` (a planted `forge_runtime/` or `json.py` would be what the hook
imports), and PYTHONPATH, PYTHONHOME, PYTHONSTARTUP, PYTHONPYCACHEPREFIX or PYTHONWARNINGS
from a settings file's `env` could point the interpreter at code in the project too. `-I`
ignores every PYTHON* variable, the user site directory and the script's own directory, so
`sys.path` is this plugin's root (inserted here) followed by the interpreter's own library.

A hook launched this way exits with `LAUNCHED_OK` instead of 0 when forge ran to the end:
the launcher turns that into 0 for the host, and anything else (an interpreter that is not
Python, such as `FORGE_PYTHON=/bin/true`, one that loaded some other forge_runtime, a crash,
the guard's watchdog) into a deny for the guard. Standard library only, nothing imported
beyond what the interpreter has already loaded: this runs before every hook.

The hook launcher also passes `-S`: `site` (the site directories, their `.pth` files and the
look for a `sitecustomize`) costs a quarter of a bare start, and the hooks of a session
without a goal need nothing from site-packages. `SiteOnDemand` runs it the first time an
import needs it, so a dependency such as yaml still imports as it would have.
"""

import os
import sys

# The status that proves the hook ran this plugin's forge to the end (see hooks/forge-hook).
LAUNCHED_OK = 97
# Exit status when the imported forge_runtime is not the one beside this file.
FOREIGN_RUNTIME = 96

# Resolved, so a plugin whose forge_runtime/ is a symlink is the forge_runtime it links to.
ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))


def _foreign_runtime() -> str | None:
    """Where the imported forge_runtime lives, when that is not this plugin's copy."""
    import forge_runtime

    found = os.path.dirname(os.path.realpath(forge_runtime.__file__))
    return None if found == os.path.join(ROOT, "forge_runtime") else found


class SiteOnDemand:
    """The last meta-path finder of a process started without `site` (`-S`).

    Asked for a top-level module that no other finder found, and that is not one of the
    standard library's (a dependency, or a name that does not exist), it leaves the meta path,
    does what `site` does at a normal start (isolated mode still keeps the user's site
    directory out), and asks the path finder again over the longer `sys.path`. A standard
    library name is left alone: those are the probes inside the library's own imports
    (`ntpath` tries `nt`), and a `.pth` file run in the middle of one would meet that module
    half-initialised.
    """

    @staticmethod
    def find_spec(name, path=None, target=None):
        if path is not None or name in sys.stdlib_module_names:
            return None
        sys.meta_path.remove(SiteOnDemand)
        import site
        from importlib.machinery import PathFinder

        site.main()
        return PathFinder.find_spec(name, None, target)


def main(argv: list[str]) -> int:
    sys.path.insert(0, ROOT)
    if sys.flags.no_site:
        sys.meta_path.append(SiteOnDemand)
    foreign = _foreign_runtime()
    if foreign is not None:
        sys.stderr.write(f"forge: this interpreter imports forge_runtime from {foreign}, not "
                         f"from the plugin at {ROOT}\n")
        return FOREIGN_RUNTIME
    surface, rest = (argv[0], argv[1:]) if argv else ("", [])
    if surface == "hook":
        from forge_runtime.hooks.dispatch import run

        code = run(rest, sys.stdin.buffer, sys.stdout, sys.stderr)
        sys.stdout.flush()
        return LAUNCHED_OK if code == 0 else code
    if surface == "cli":
        from forge_runtime.cli.main import main as cli_main

        return cli_main(rest)
    sys.stderr.write("forge: entry.py takes `hook <Event>` or `cli <args>`\n")
    return 2


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
