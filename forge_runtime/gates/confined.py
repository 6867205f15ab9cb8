"""How forge runs a goal's recorded final gates itself: at least as confined as the agent's Bash.

A gate's command is code the agent may have written (a test, a `conftest.py`, a Makefile),
and forge runs it from a hook or a person's terminal, outside the host's sandbox, as the
user. What decides how it runs is the posture the goal's `/goal` recorded in the ledger
(`sandbox`, activation.py: what `sandbox.posture.for_goal` gave on the host it was typed
on, Claude Code's settings or Codex's own sandbox mode), never the settings of one host
read now. A goal that recorded "sandboxed", or that recorded nothing (fail closed), runs its
gates under bubblewrap with no more than the agent's sandboxed Bash gets:

- the whole file system read-only, the project and a private /tmp writable, and forge's
  protected paths in the project read-only again (the ledger, the guard files, state.md,
  the gates file, the host's settings, Codex's `.codex` and `.agents`, the host homes, the
  witness and forge's own code where they lie inside it);
- the project's git directory read-only as a whole, as Codex's sandbox has it (its hooks,
  config, `commondir`, `info/exclude`, the ledger and guard files inside it);
- a protected file that does not exist yet replaced by an empty read-only one, so the run
  cannot create it (bubblewrap leaves an empty mount point, removed after the run);
- its own PID and IPC namespaces (it cannot see or signal forge's hooks), its own network
  namespace (only its own loopback), and it dies with its parent;
- no new Unix domain sockets (seccomp.py): the session bus, `systemd-run --user`, a docker
  socket and an ssh agent are all a socket away from the user's whole account;
- a clean environment: PATH, the locale, HOME and TMPDIR pointing into its private /tmp,
  and FORGE_GATE; nothing of the hook's own (the host's variables, tokens, forge's).

Where this cannot be set up (no bubblewrap, no seccomp filter for this machine, a bubblewrap
that does not start here) the run does not happen and the goal is not verified by it,
saying why. A goal that recorded "unsandboxed" (the project opted out) runs its gates as
the agent's Bash runs, unconfined (confining them would stop nothing the agent cannot
already do), but with the same clean environment.
"""

from __future__ import annotations

import os
from contextlib import contextmanager

from forge_runtime.agent_roots import tool
from forge_runtime.records import record

BWRAP, NONE = "bwrap", "none"
START_TIMEOUT_SECONDS = 10
SCRATCH_HOME = "/tmp/home"  # inside the run's private /tmp
# from forge's own environment, into a gate's
ENV_PASSED = ("PATH", "LANG", "LC_ALL", "LC_CTYPE", "TZ", "USER", "LOGNAME")
DEFAULT_PATH = "/usr/local/bin:/usr/bin:/bin"
# in the project, what Claude Code's and Codex's sandboxes keep read-only for Bash besides
# the settings files: what either host loads as its own (commands, skills, hooks, agents)
HOST_DIRS = (".codex", ".agents", ".claude/commands", ".claude/agents", ".claude/skills",
             ".claude/hooks", ".claude/workflows")


class Launch(record("Launch", "command env pass_fds")):
    """One gate's process: what to run, its environment and the file descriptors it
    inherits."""

    __slots__ = ()


class Confinement(record("Confinement", "kind argv created problem seccomp stubs",
                         defaults=(None, ()))):
    """How a command is run: `argv` to prefix to `/bin/sh -c <command>`, the mount points
    it creates (removed after), why it cannot be run confined (None: it can), the seccomp
    program bubblewrap loads, and the paths where it puts an empty read-only file because a
    protected path does not exist yet, so that the run cannot create it."""

    __slots__ = ()

    @contextmanager
    def launch(self, text: str, gate: str):
        """The Launch of gate `gate`'s command `text`: itself in a shell when unconfined.
        bubblewrap reads each descriptor to its end, so every launch opens its own; they
        are open only while it is in use."""
        if not self.argv:
            yield Launch(text, clean_environment(gate, confined=False), ())
            return
        fds: list[int] = []
        try:
            stubs = []
            for path in self.stubs:  # bubblewrap closes each after it read it
                fds.append(descriptor_of(b""))
                stubs += ["--ro-bind-data", str(fds[-1]), path]
            fds.append(descriptor_of(self.seccomp))
            yield Launch([*self.argv, *stubs, "--seccomp", str(fds[-1]), "/bin/sh", "-c",
                          text], clean_environment(gate, confined=True), tuple(fds))
        finally:
            for fd in fds:
                os.close(fd)

    def start_problem(self) -> str | None:
        """Why this confinement cannot start here (None: it can, or it is none), found by
        starting it with `true`: bubblewrap refuses in some places (no user namespaces, a
        PID namespace it cannot read), and a gate that failed for that reason must not read
        as the agent's failing test (confirm.py asks after a gate's first failure, so a
        run that passes pays nothing for it)."""
        if not self.argv:
            return None
        import subprocess

        with self.launch("true", "start") as launch:
            try:
                done = subprocess.run(launch.command, env=launch.env, pass_fds=launch.pass_fds,
                                      stdin=subprocess.DEVNULL, capture_output=True,
                                      timeout=START_TIMEOUT_SECONDS, check=False)
            except (OSError, subprocess.TimeoutExpired) as exc:
                return f"bubblewrap could not start the confined run here: {exc}"
        if done.returncode == 0:
            return None
        said = done.stderr.decode("utf-8", "replace").strip().splitlines()[-1:] or \
            [f"exit {done.returncode}"]
        return f"bubblewrap could not start the confined run here: {said[0]}"

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


def descriptor_of(data: bytes) -> int:
    """A file descriptor at the start of `data`, for one bubblewrap to read to its end; the
    caller closes it."""
    if hasattr(os, "memfd_create"):
        fd = os.memfd_create("forge-gate", os.MFD_CLOEXEC)
        os.write(fd, data)
        os.lseek(fd, 0, os.SEEK_SET)
        return fd
    read_end, write_end = os.pipe()  # what forge passes fits any pipe's buffer
    os.write(write_end, data)
    os.close(write_end)
    return read_end


def clean_environment(gate: str, confined: bool) -> dict[str, str]:
    """What a gate's environment holds: a short allow-list, never the hook's own variables
    (the host's keys and tokens, forge's settings), in every posture: Codex gives the
    agent's shell no variable named like a key either. Confined, HOME is a scratch
    directory in the run's private /tmp (nothing of the person's dotfiles to write);
    unconfined, HOME and TMPDIR are the person's, as the agent's Bash has them."""
    env = {name: os.environ[name] for name in ENV_PASSED if name in os.environ}
    env.setdefault("PATH", DEFAULT_PATH)
    if confined:
        return {**env, "HOME": SCRATCH_HOME, "TMPDIR": "/tmp", "FORGE_GATE": gate}
    mine = {name: os.environ[name] for name in ("HOME", "TMPDIR") if name in os.environ}
    return {**env, **mine, "FORGE_GATE": gate}


def protected_in(project) -> list[str]:
    """The paths a confined gate may not write, as absolute paths."""
    from forge_runtime.gates import GATES_FILE
    from forge_runtime.protected.paths import protected_paths

    root = str(project.root)
    found = [entry.path for entry in protected_paths((root, _str(project.git_dir),
                                                       _str(project.git_common_dir)))]
    found += [os.path.join(root, ".claude", name)
              for name in ("settings.json", "settings.local.json")]
    found += [os.path.join(root, ".forge", GATES_FILE), os.path.join(root, ".mcp.json")]
    found += [os.path.join(root, name) for name in HOST_DIRS]
    if project.git_dir is not None:  # all of it, as Codex's sandbox has it: its hooks,
        found.append(str(project.git_dir))  # config, commondir, info/exclude, the ledger
    found += host_paths()
    return list(dict.fromkeys(os.path.realpath(path) for path in found))


def host_paths() -> list[str]:
    """What switches forge or a host off, outside any project: the host homes, forge's
    plugin data, the goal witness and forge's own code (read-only to a confined gate
    wherever they are; they matter when a project holds them, a home directory as a
    project)."""
    import forge_runtime
    from forge_runtime.roots import witness_dir

    home = os.path.expanduser("~")
    found = [os.path.join(home, ".claude"), os.path.join(home, ".codex"), witness_dir(),
             os.path.dirname(os.path.abspath(forge_runtime.__file__))]
    found += [os.environ[name] for name in ("CODEX_HOME", "CLAUDE_CONFIG_DIR",
                                            "CLAUDE_PLUGIN_DATA", "CLAUDE_PLUGIN_ROOT")
              if os.environ.get(name)]
    return found


def _str(value) -> str | None:
    return None if value is None else str(value)


def for_project(project, sandboxed: bool) -> Confinement:
    """The confinement a recorded gate runs in, sandboxed or not."""
    if not sandboxed:
        return Confinement(NONE, [], [], None)
    from forge_runtime.gates.seccomp import program

    binary = tool("bwrap")
    if binary is None:
        return Confinement(BWRAP, [], [], "the goal's posture is sandboxed and bubblewrap "
                                          "(bwrap) is not installed, so forge cannot run its "
                                          "gates as confined as the agent's Bash")
    seccomp = program()
    if seccomp is None:
        import platform

        return Confinement(BWRAP, [], [], "the goal's posture is sandboxed and forge has no "
                                          "seccomp filter for this machine "
                                          f"({platform.machine()}), so it cannot keep its "
                                          "gates off Unix sockets as the agent's Bash is")
    root = os.path.realpath(project.root)
    argv = [binary, "--die-with-parent", "--new-session", "--unshare-pid", "--unshare-net",
            "--unshare-ipc", "--ro-bind", "/", "/", "--dev", "/dev", "--proc", "/proc",
            "--tmpfs", "/tmp", "--dir", SCRATCH_HOME, "--bind", root, root]
    argv += [arg for path in _toolchain_in_tmp(root) for arg in ("--ro-bind", path, path)]
    created: list[str] = []
    stubs: list[str] = []
    for path in _outermost(path for path in protected_in(project)
                           if path.startswith(root + os.sep)):  # outside: read-only already
        if os.path.lexists(path):
            argv += ["--ro-bind", path, path]
        else:
            created += _mount_points(root, path)
            stubs.append(path)
    return Confinement(BWRAP, [*argv, "--chdir", root], list(dict.fromkeys(created)), None,
                       seccomp, stubs)


def _toolchain_in_tmp(root: str) -> list[str]:
    """The gate's interpreters and PATH directories that live under /tmp (a checkout's
    virtual environment there, say), which the confined run's private /tmp would hide:
    bound back read-only, so a gate finds the same programs confined as not."""
    import sys

    found = []
    for entry in [sys.prefix, sys.base_prefix,
                  *os.environ.get("PATH", DEFAULT_PATH).split(os.pathsep)]:
        path = os.path.realpath(entry) if entry else ""
        if path.startswith("/tmp/") and os.path.isdir(path) and \
                not (path == root or path.startswith(root + os.sep)):
            found.append(path)
    return _outermost(dict.fromkeys(found))


def _outermost(paths) -> list[str]:
    """`paths` without those under another of them: one read-only bind covers its tree, and
    nothing can be mounted inside the empty file that stands for a missing one."""
    kept: list[str] = []
    for path in sorted(paths, key=len):
        if not any(path.startswith(outer + os.sep) for outer in kept):
            kept.append(path)
    return kept


def _mount_points(root: str, path: str) -> list[str]:
    """The directories and the file bubblewrap creates to mount over `path`, outermost
    first."""
    missing = [path]
    parent = os.path.dirname(path)
    while parent != root and not os.path.lexists(parent):
        missing.append(parent)
        parent = os.path.dirname(parent)
    return list(reversed(missing))


def readiness(project) -> str | None:
    """Why a sandboxed goal's gates cannot be run confined here (None: they can), found as
    forge's own run finds it: `forge sandbox status` says so before a goal ends
    unverified for it."""
    confinement = for_project(project, True)
    try:
        return confinement.problem or confinement.start_problem()
    finally:
        confinement.clean_up()


def for_goal(project, nonce: str) -> Confinement:
    """The confinement goal `nonce`'s recorded gates run in: by the posture its `/goal`
    recorded (see the module's docstring)."""
    from forge_runtime.sandbox.posture import OPTED_OUT

    return for_project(project, recorded_posture(project, nonce) != OPTED_OUT)


def recorded_posture(project, nonce: str) -> str | None:
    """The posture goal `nonce` recorded ("sandboxed", "unsandboxed"; None for a goal from
    before forge recorded it), read from its ledger's head as held.py reads the goal. No
    witness is noted for it: the kernel layer keeps a sandboxed goal's ledger from the
    agent, and an opted-out goal's gates run unconfined whatever its ledger says."""
    from forge_runtime.goal.store.ledger import Ledger

    posture = Ledger(project.ledger_root, nonce).current().goal.get("sandbox")
    return posture if isinstance(posture, str) else None
