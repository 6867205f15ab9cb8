"""The directories the agent can write, from which forge never takes a program.

forge's hooks, its MCP server and its gate runs are processes outside the agent's sandbox.
An interpreter in a directory the agent writes runs the agent's code in every hook (a
project `.venv`'s `.pth` files run whenever `site` does), and a `git` or `bwrap` found there
by PATH runs in place of the tool. Those directories: the project (the host's project dir,
and the working directory a hook starts in; a relative PATH entry names the latter) and
the agent's temp directories (`$TMPDIR`, `$CLAUDE_CODE_TMPDIR`, and `/tmp/claude-<uid>`,
where Claude Code's sandbox writes when neither is set). `/tmp` as a whole is not among
them: a checkout or a CI virtual environment there is common and a person's own.

hooks/forge-hook applies the same rule, in sh, to the `python3` it falls back to; the uv
the bootstrap may use is chosen by forge_runtime.installers.find_uv. Strings and `os` only:
a hook asks for `git` here.
"""

import os

TEMP_VARIABLES = ("TMPDIR", "CLAUDE_CODE_TMPDIR")
_found: dict[tuple, str | None] = {}  # by name and everything the answer depends on


def _working_directory() -> str:
    try:
        return os.getcwd()
    except OSError:  # removed under the process: there is none to count
        return ""


def roots(project_root: str | os.PathLike | None = None) -> list[str]:
    """The agent's directories, resolved: `project_root` (default: the host's project dir
    and the working directory) and the agent's temp directories."""
    if project_root is not None:
        places = [os.fspath(project_root)]
    else:
        places = [os.environ.get("CLAUDE_PROJECT_DIR", ""), _working_directory()]
    places += [os.environ.get(name, "") for name in TEMP_VARIABLES]
    places.append(f"/tmp/claude-{os.getuid()}")
    found: list[str] = []
    for place in places:
        if place and os.path.isabs(place):
            real = os.path.realpath(place)
            if real != os.sep and real not in found:
                found.append(real)
    return found


def holder(path: str | os.PathLike, agent_roots: list[str]) -> str | None:
    """The agent's directory that holds `path` (as written, with its directory resolved,
    or resolved whole), "the working directory" for a relative path, else None."""
    path = os.fspath(path)
    if not os.path.isabs(path):
        return "the working directory"
    places = {os.path.normpath(path), os.path.realpath(path),
              os.path.join(os.path.realpath(os.path.dirname(path)), os.path.basename(path))}
    for root in agent_roots:
        for place in places:
            if place == root or place.startswith(root + os.sep):
                return root
    return None


def tool(name: str) -> str | None:
    """The absolute path of the first `name` on PATH outside the agent's directories, or
    None: what forge's own processes run as `git` or `bwrap`."""
    path = os.environ.get("PATH", os.defpath)
    key = (name, path, _working_directory(),
           *(os.environ.get(variable) for variable in ("CLAUDE_PROJECT_DIR", *TEMP_VARIABLES)))
    if key not in _found:
        agent_roots = roots()
        found = None
        for entry in path.split(os.pathsep):
            if not entry or holder(entry, agent_roots) is not None:
                continue
            candidate = os.path.join(entry, name)
            if os.path.isfile(candidate) and os.access(candidate, os.X_OK) \
                    and holder(candidate, agent_roots) is None:
                found = candidate
                break
        _found[key] = found
    return _found[key]


def program(name: str) -> str:
    """`tool(name)`, or OSError (what a failed start raises: callers already handle it)."""
    found = tool(name)
    if found is None:
        raise FileNotFoundError(f"no {name} on PATH outside the directories the agent can "
                                "write (the project, its temp directories)")
    return found
