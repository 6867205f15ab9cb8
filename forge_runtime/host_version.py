"""Which Claude Code build this process runs under, found without starting the host again.

`claude --version` starts a second copy of a 400 MB executable, too slow for SessionStart.
The host gives every hook its own process id (`CLAUDE_PID`) and its Bash tool the path of
its executable (`CLAUDE_CODE_EXECPATH`), and each way it is installed names the version
beside or in that path:
- the claude-agent-sdk bundle: `claude` with `claude.version` beside it
  (`2.1.337 (Claude Code)`);
- the native installer: the executable is `.../versions/<version>`;
- the npm package: Node.js runs `.../@anthropic-ai/claude-code/cli.js`, whose
  `package.json` names the version.
A few system calls, no process started. None when nothing tells (another layout, a
system without /proc): forge then says nothing about the version.
"""

import os

PACKAGE = "@anthropic-ai/claude-code"
_PACKAGE_DEPTH = 3


def claude_version(env=None) -> str | None:
    """The running Claude Code's version, or None when it cannot be told cheaply."""
    found = running_claude(env)
    return None if found is None else found[0]


def running_claude(env=None) -> tuple[str, str] | None:
    """(version, the file that told it) of the running Claude Code, or None."""
    from forge_runtime.host_contract import version_key

    env = os.environ if env is None else env
    for path in _executables(env):
        found = _stated(path)
        if found is not None and version_key(found) is not None:
            return found, path
    return None


def _executables(env):
    """The host's executable and, for a script host (npm), the script it runs."""
    pid = env.get("CLAUDE_PID", "")
    if pid.isdigit():
        try:
            executable = os.readlink(f"/proc/{pid}/exe").removesuffix(" (deleted)")
        except OSError:
            executable = None
        if executable is not None:
            yield executable
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as handle:
                arguments = handle.read(8192).split(b"\0")
        except OSError:
            arguments = []
        for argument in arguments[1:3]:
            if argument.endswith(b".js"):
                yield os.fsdecode(argument)
    if env.get("CLAUDE_CODE_EXECPATH"):
        yield env["CLAUDE_CODE_EXECPATH"]


def _stated(path: str) -> str | None:
    """The version `path`'s install states: beside it, in its name, or in its package."""
    try:
        with open(path + ".version", encoding="utf-8") as handle:
            words = handle.read(200).split()
        if words:
            return words[0]
    except (OSError, UnicodeDecodeError):
        pass
    name = os.path.basename(path)
    if name[:1].isdigit():
        return name
    folder = os.path.dirname(path)
    for _ in range(_PACKAGE_DEPTH):
        found = _package_version(os.path.join(folder, "package.json"))
        if found is not None:
            return found
        folder = os.path.dirname(folder)
    return None


def _package_version(path: str) -> str | None:
    import json

    try:
        with open(path, encoding="utf-8") as handle:
            package = json.load(handle)
    except (OSError, ValueError):
        return None
    if not isinstance(package, dict) or package.get("name") != PACKAGE:
        return None
    version = package.get("version")
    return version if isinstance(version, str) else None
