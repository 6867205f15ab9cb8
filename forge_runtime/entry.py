"""How the plugin's launchers run forge: as this file, in isolated mode, so no project file runs.

`hooks/forge-hook` runs `<python> -I -S <plugin>/forge_runtime/entry.py hook` (the event in
FORGE_HOOK_EVENT; `killed <signal>` after a Stop killed by a signal) and `cli/forge` runs
`<python> -I <plugin>/forge_runtime/entry.py cli <args>`. A hook's working directory is the
project, where an agent can write anything: `python -m pkg` would put that
directory first on `sys.path` (a planted `forge_runtime/` or `json.py` would be what the hook
imports), and PYTHONPATH, PYTHONHOME, PYTHONSTARTUP, PYTHONPYCACHEPREFIX or PYTHONWARNINGS
from a settings file's `env` could point the interpreter at code in the project too. `-I`
ignores every PYTHON* variable, the user site directory and the script's own directory, so
`sys.path` is this plugin's root (inserted here) followed by the interpreter's own library.

It checks that the forge_runtime it imports is the one beside it (else it exits with
`FOREIGN_RUNTIME`) and hands over to forge_runtime/launch.py. A script is compiled at every
start (only imported modules have a `.pyc`), so this one is kept to those few statements,
at module level: a function is one more code object to compile before every hook.
"""

import os
import sys

# Exit status when the imported forge_runtime is not the one beside this file.
FOREIGN_RUNTIME = 96
# Resolved, so a plugin whose forge_runtime/ is a symlink is the forge_runtime it links to.
ROOT = os.path.dirname(os.path.dirname(os.path.realpath(__file__)))

if __name__ == "__main__":
    sys.path.insert(0, ROOT)
    import forge_runtime

    found = os.path.dirname(os.path.realpath(forge_runtime.__file__))
    if found != os.path.join(ROOT, "forge_runtime"):
        sys.stderr.write(f"forge: this interpreter imports forge_runtime from {found}, not "
                         f"from the plugin at {ROOT}\n")
        raise SystemExit(FOREIGN_RUNTIME)
    from forge_runtime import launch

    raise SystemExit(launch.main(ROOT, sys.argv[1:]))
