"""How forge runs a goal's recorded final gates itself: as confined as the agent's own Bash.

A gate's command is code the agent may have written (a test, a Makefile), and forge runs it
from a hook or a person's terminal, outside the host's sandbox. Where the project's posture
is sandboxed (the kernel layer in force, sandbox/posture.py), an unconfined run would be the
agent's way out, so the command runs under bubblewrap with what the agent's sandboxed Bash
gets: the whole file system read-only, the project and a private /tmp writable, and forge's
protected paths in the project read-only again (the ledger, the guard files, state.md, the
host's settings, git's hooks and config, the gates file). Its own PID namespace (it cannot
see or signal forge's hooks), no network but loopback, and it dies with its parent. A
protected file that does not exist yet is bound to /dev/null, so the run cannot create it;
bubblewrap leaves an empty file where it mounted that, which is removed after the run.

Where the posture is not sandboxed the agent's Bash runs unconfined anyway, and so does the
gate: confining it would stop nothing the agent cannot already do.
"""

from __future__ import annotations

import os

from forge_runtime.agent_roots import tool
from forge_runtime.records import record

BWRAP, NONE = "bwrap", "none"
CONFINE_FAILED = 125  # the exit code of a confinement that could not be set up


class Confinement(record("Confinement", "kind argv created problem")):
    """How a command is run: `argv` to prefix to `/bin/sh -c <command>`, the mount points
    it creates (removed after), and why it cannot be run confined (None: it can)."""

    __slots__ = ()

    def command(self, text: str) -> str | list[str]:
        """What runs the gate command `text`: itself in a shell when unconfined."""
        return [*self.argv, "/bin/sh", "-c", text] if self.argv else text

    def clean_up(self) -> None:
        """Remove the empty files and directories bubblewrap made as mount points."""
        for path in reversed(self.created):
            try:
                if os.path.isdir(path) and not os.path.islink(path):
                    os.rmdir(path)
                elif os.path.getsize(path) == 0:
                    os.unlink(path)
            except OSError:
                pass  # not empty: something else wrote there meanwhile; keep it


def protected_in(project) -> list[str]:
    """The paths a confined gate may not write, as absolute paths."""
    from forge_runtime.gates import GATES_FILE
    from forge_runtime.guard.paths import protected_paths

    root = str(project.root)
    found = [entry.path for entry in protected_paths((root, _str(project.git_dir),
                                                       _str(project.git_common_dir)))]
    found += [os.path.join(root, ".claude", name)
              for name in ("settings.json", "settings.local.json")]
    found += [os.path.join(root, ".forge", GATES_FILE), os.path.join(root, ".mcp.json")]
    if project.git_dir is not None:
        found += [os.path.join(str(project.git_dir), name) for name in ("hooks", "config")]
    return list(dict.fromkeys(os.path.realpath(path) for path in found))


def _str(value) -> str | None:
    return None if value is None else str(value)


def for_project(project, sandboxed: bool) -> Confinement:
    """The confinement a recorded gate runs in, in this project's posture."""
    if not sandboxed:
        return Confinement(NONE, [], [], None)
    binary = tool("bwrap")
    if binary is None:
        return Confinement(BWRAP, [], [], "the project's posture is sandboxed and bubblewrap "
                                          "(bwrap) is not installed, so forge cannot run its "
                                          "gates as confined as the agent's Bash")
    root = os.path.realpath(project.root)
    argv = [binary, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net",
            "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc", "--tmpfs", "/tmp",
            "--bind", root, root]
    created: list[str] = []
    for path in protected_in(project):
        if os.path.lexists(path):
            argv += ["--ro-bind", path, path]
        elif path.startswith(root + os.sep):  # outside the project all is read-only already
            created += _mount_points(root, path)
            argv += ["--ro-bind", "/dev/null", path]
    return Confinement(BWRAP, [*argv, "--chdir", root], created, None)


def _mount_points(root: str, path: str) -> list[str]:
    """The directories and the file bubblewrap creates to mount over `path`, outermost
    first."""
    missing = [path]
    parent = os.path.dirname(path)
    while parent != root and not os.path.lexists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    return list(reversed(missing))


def sandboxed_posture(project) -> bool:
    """True when the project's posture is sandboxed: the kernel layer is in force."""
    from forge_runtime.sandbox.posture import ledger_protected

    return ledger_protected(project)
