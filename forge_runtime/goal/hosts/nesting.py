"""Was this hook's host session started by an agent? Then its `/goal` is nobody's.

A person starts a host session from their own shell; an agent starts one from its tools
(`claude -p "/goal ..."` or `codex exec` in its Bash), and that session's transcript reads
like a person's `/goal`. forge tells them apart by what the agent cannot easily erase, as
measured (Claude Code 2.1.332, Codex CLI 0.171.0, Linux):

- Process ancestry. The hook's host runs below the host session whose tool started it:
  hook -> launcher -> claude -> bash (the Bash tool) -> claude. Two host processes in the
  hook's ancestry mean a session inside a session. An npm launcher right above the host it
  starts (`node .../codex.js` -> `codex`) is that one host.
- The host's sandbox. Claude Code's and Codex's Bash sandboxes are bubblewrap with a PID
  namespace of their own: a hook whose PID 1 is `bwrap` runs inside an agent's tool.
- What the host puts in its tools' environment and never in its hooks': Claude Code's
  Bash gets `CLAUDE_CODE_EXECPATH`, Codex's `exec_command` gets `CODEX_TOOL_CALL_ID`, and
  neither host's hooks do; a nested session's hooks inherit them.

None of these survives an agent that both empties the environment (`env -i`) and
double-forks out of its tool's process tree (`setsid -f`): measured, that nested session
looks like any other. In the default posture the kernel layer holds it (the sandbox's
bwrap runs Bash with `--die-with-parent` and keeps the ledger read-only, so a session
started there can neither outlive its call nor write a pending activation); in the
opted-out posture the guard refuses a Bash command that starts a host session with a
`/goal` prompt (guard/shell/hosts.py). Reading /proc costs a few ms, paid only by a
`/goal` prompt and the Stop that would activate one.
"""

from __future__ import annotations

import os

HOSTS = ("claude", "codex")
# set by Claude Code in its Bash tool's environment and by Codex in its exec_command's,
# never in either host's hooks' (measured)
TOOL_ENV_MARKERS = ("CLAUDE_CODE_EXECPATH", "CODEX_TOOL_CALL_ID")
LAUNCHERS = ("node", "nodejs", "bun", "deno")
MAX_DEPTH = 64


def started_by_agent(environ: dict | None = None, proc: str = "/proc") -> str | None:
    """Why this process's host session was started from inside another host session (an
    agent's tool), or None when nothing says so."""
    environ = os.environ if environ is None else environ
    for marker in TOOL_ENV_MARKERS:
        if environ.get(marker):
            return (f"its environment holds {marker}, which the host sets only for the "
                    "commands its agent runs")
    if _command(proc, "1")[:1] == ["bwrap"] or _name(proc, "1") == "bwrap":
        return "it runs inside a host's Bash sandbox (bubblewrap)"
    hosts = _hosts_above(proc)
    if len(hosts) > 1:
        return (f"its host ({hosts[0]}) was started below another host session "
                f"({hosts[1]}), from that session's tools")
    return None


def _hosts_above(proc: str) -> list[str]:
    """The host sessions among this process's ancestors, nearest first (`claude (pid 12)`);
    a launcher right above the host of its kind it started counts once."""
    chain, pid = [], "self"
    while pid not in ("0", "") and len(chain) < MAX_DEPTH:
        chain.append((_own_pid(proc, pid), _host_kind(proc, pid)))
        pid = _parent(proc, pid)
    hosts: list[str] = []
    below = None  # the kind of the process just below, when it is a host
    for own, kind in chain:
        if kind is not None and not (kind[1] and below == kind[0]):
            hosts.append(f"{kind[0]} (pid {own})")
        below = kind[0] if kind is not None else None
    return hosts


def _host_kind(proc: str, pid: str) -> tuple[str, bool] | None:
    """("claude" | "codex", is a launcher) when process `pid` is a host CLI, else None."""
    argv = _command(proc, pid)
    name = _name(proc, pid)
    program = os.path.basename(argv[0]) if argv else ""
    for host in HOSTS:
        if name == host or program == host:
            return host, False
    if program in LAUNCHERS or name in LAUNCHERS:
        for arg in argv[1:3]:
            lowered = arg.lower()
            if "claude-code" in lowered or os.path.basename(lowered) == "claude":
                return "claude", True
            if "@openai/codex" in lowered or os.path.basename(lowered) in ("codex",
                                                                            "codex.js"):
                return "codex", True
    return None


def _stat(proc: str, pid: str) -> tuple[str, list[str]] | None:
    """(comm, the fields after it) of /proc/<pid>/stat, or None."""
    try:
        with open(f"{proc}/{pid}/stat", "rb") as handle:
            text = handle.read().decode("utf-8", "replace")
    except OSError:
        return None
    left, right = text.find("("), text.rfind(")")
    if left < 0 or right < left:
        return None
    return text[left + 1:right], text[right + 2:].split()


def _name(proc: str, pid: str) -> str:
    stat = _stat(proc, pid)
    return stat[0] if stat else ""


def _parent(proc: str, pid: str) -> str:
    stat = _stat(proc, pid)
    return stat[1][1] if stat and len(stat[1]) > 1 else "0"


def _own_pid(proc: str, pid: str) -> str:
    if pid != "self":
        return pid
    try:
        return os.path.basename(os.readlink(f"{proc}/self"))
    except OSError:
        return "?"


def _command(proc: str, pid: str) -> list[str]:
    try:
        with open(f"{proc}/{pid}/cmdline", "rb") as handle:
            raw = handle.read()
    except OSError:
        return []
    return [part.decode("utf-8", "replace") for part in raw.split(b"\0") if part]


NOT_A_PERSON = "FORGE_GOAL_NOT_A_PERSON"


def require_person(objective: str) -> None:
    """Refuse a `/goal` whose host session an agent started (`started_by_agent`): it
    activates nothing, in every posture."""
    why = started_by_agent()
    if why is None:
        return
    from forge_runtime import hints
    from forge_runtime.errors import EXIT_REFUSED, ForgeError

    raise ForgeError(
        f"this /goal comes from a host session an agent started ({why}); only a person's "
        "/goal activates a goal, so it activates nothing", f"/goal {hints.sanitize(objective)}",
        exit_code=EXIT_REFUSED, code=NOT_A_PERSON,
        rationale="typed by you, in a session started from your own shell")
