"""A host's interactive TUI in a private tmux server, for host tests that type like a person."""

from __future__ import annotations

import json
import os
import shlex
import shutil
import subprocess
import time

# found once, when the module loads: a TUI test started early runs in a thread while other
# tests of its worker run, and one of them may have set PATH to a folder of its own
TMUX = shutil.which("tmux") or "tmux"


class Tui:
    """The host's interactive TUI in a private tmux server, with the host kit's pretend HOME."""

    def __init__(self, host, cwd, run_dir, args=()):
        """`host` is a Claude Code `Host` or a `CodexHost`: both offer `interactive`."""
        self.socket = f"forge-test-{os.getpid()}-{id(self)}"
        self.run_dir = run_dir
        command, env = host.interactive(cwd, run_dir, {"TERM": "xterm-256color"}, args)
        line = (f"cd {shlex.quote(str(cwd))} && exec env -i "
                + " ".join(shlex.quote(f"{k}={v}") for k, v in env.items()) + " "
                + shlex.join(command))
        self._tmux("new-session", "-d", "-s", "tui", "-x", "160", "-y", "50", line)

    def _tmux(self, *args: str) -> str:
        return subprocess.run([TMUX, "-L", self.socket, *args], check=True,
                              capture_output=True, text=True).stdout

    def screen(self, colours: bool = False) -> str:
        """The pane's text (with its colours as escape sequences when `colours`)."""
        return self._tmux("capture-pane", "-p", *(["-e"] if colours else []), "-t", "tui",
                          "-S", "-200")

    def type(self, text: str, timeout: float = 30.0) -> None:
        """Type `text` and press Enter; press it again while the text still sits in Claude
        Code's input box (on a loaded machine a TUI still starting up, or busy drawing,
        takes the keys but not the Enter, for seconds at a time)."""
        self._tmux("send-keys", "-t", "tui", "-l", text)
        time.sleep(0.3)
        self._tmux("send-keys", "-t", "tui", "Enter")
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            time.sleep(1.0)
            if text[:40] not in self._input_box():
                return
            self._tmux("send-keys", "-t", "tui", "Enter")

    def _input_box(self) -> str:
        """The text between the last two rules of the screen (Claude Code's input box), or
        "" where the screen has no such box (Codex's TUI draws none)."""
        lines = self.screen().splitlines()
        rules = [i for i, line in enumerate(lines) if len(line) > 20 and set(line) == {"─"}]
        if len(rules) < 2:
            return ""
        return "\n".join(lines[rules[-2] + 1:rules[-1]])

    def keys(self, *names: str) -> None:
        """Press keys by tmux name (`Escape`, `C-c`), as a person would."""
        self._tmux("send-keys", "-t", "tui", *names)

    def wait_for(self, condition, what: str, timeout: float = 30.0):
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            value = condition()
            if value:
                return value
            time.sleep(0.2)
        raise AssertionError(f"timed out waiting for {what}; screen:\n{self.screen()}")

    def hooks(self, event: str) -> list[dict]:
        path = self.run_dir / "hooks.jsonl"
        calls = [json.loads(line) for line in path.read_text().splitlines()] \
            if path.exists() else []
        return [call for call in calls if json.loads(call["stdin"])["hook_event_name"] == event]

    def close(self) -> None:
        subprocess.run([TMUX, "-L", self.socket, "kill-server"], capture_output=True)
