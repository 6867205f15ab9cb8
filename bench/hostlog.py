"""Read hook run times out of Claude Code's own debug log (`--debug-file`).

For every command hook it ran to the end, the host writes one line when the process has
exited, naming the event (with the matcher query: the tool name, the start source), the
command with its arguments, the plugin, the exit status and the duration it measured:

    2026-12-01T13:04:07.061Z [DEBUG] Hooks: PreToolUse:Bash [/p/hooks/forge-hook PreToolUse]
        (plugin forge@inline) finished with status 0 (219ms)

(one line in the log). A hook killed at its timeout gets "... timed out after 1000ms
(1026ms)" instead. It writes no line when a hook starts, and the duration is whole
milliseconds, from the spawn to the exit (hooks of one event run in parallel, each with
its own line). SessionEnd hooks get a different line, "SessionEnd:other [...] completed
with status 0", with no duration and no plugin name, so they cannot be timed from here.
Measured on Claude Code 2.1.332; the format is the host's internal business, which is why
the bench checks that it found every hook it expected rather than trusting silence.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

_FINISHED = re.compile(
    r"^(?P<at>\S+) \[DEBUG\] Hooks: (?P<event>[A-Za-z]+)(?::(?P<query>\S+))? "
    r"\[(?P<command>.*)\] \(plugin (?P<plugin>[^@)\s]+)@(?P<source>[^)\s]+)\) "
    r"(?:finished with status (?P<status>-?\d+)|timed out after \d+ms) \((?P<ms>\d+)ms\)$")


@dataclass(frozen=True)
class HookRun:
    """One finished command hook, as the host timed it (`status` None: killed at its
    timeout)."""

    event: str
    query: str
    command: str
    plugin: str
    status: int | None
    ms: int
    at: str

    @property
    def name(self) -> str:
        """The host's own name for the hook: `PreToolUse:Bash`, `SessionStart:startup`."""
        return f"{self.event}:{self.query}" if self.query else self.event


def hook_runs(log: str) -> list[HookRun]:
    """Every command hook that finished or timed out in a debug log, in log order."""
    found = []
    for line in log.splitlines():
        match = _FINISHED.match(line.rstrip("\r"))
        if match:
            found.append(HookRun(event=match["event"], query=match["query"] or "",
                                 command=match["command"], plugin=match["plugin"],
                                 status=None if match["status"] is None
                                 else int(match["status"]), ms=int(match["ms"]),
                                 at=match["at"]))
    return found
