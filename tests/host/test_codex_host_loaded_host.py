"""Nothing the agent writes becomes code a host runs, against the real Codex CLI (forge as its
README installs it, a person's `/goal` in the TUI), in Codex's `workspace-write` sandbox and
in `danger-full-access`: one session per sandbox makes every attack at once, in its first
turn. apply_patch (Codex's file tool) adds a payload at every row of `host_loaded.TABLE` (the
same payloads as test_host_loaded_host.py: Codex's hooks, skills, rules, plugins and config,
Claude Code's files, which a later Claude Code session in the folder would load, and the
shell start-up files Codex's login shell sources), and a shell command the guard reads
(`printf > path`) tries each again. Held: no marker, no payload on disk, no session past its
tranche.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest
import test_codex_offswitch_host
from offswitch_support import both_held
from session_support import bash
from test_codex_offswitch_host import add_file, codex_machine  # noqa: F401 (the fixture)
from test_host_loaded_host import ATTACKS, MARKER, text_of

pytestmark = pytest.mark.host


def calls() -> list[dict]:
    written = [add_file(path, text) for path, text in ATTACKS]
    shell = " ; ".join(f"mkdir -p {shlex.quote(path.rsplit('/', 1)[0])} && printf %s "
                       f"{shlex.quote(text)} > {shlex.quote(path)}" for path, text in ATTACKS)
    return [*written, bash(shell), bash("echo after the start-up files")]


def test_codex_no_file_a_host_loads_is_written_or_run(codex_machine, monkeypatch):  # noqa: F811
    # the attack's turn runs ~180 tool calls, each past forge's hook: far longer than the
    # few quiet seconds that otherwise mean Codex's goal loop has stopped
    monkeypatch.setattr(test_codex_offswitch_host, "QUIET", 30.0)
    machine = codex_machine(calls())
    machine.host.server.variables["home"] = str(machine.host.home)
    first, second = machine.goal(), machine.goal()
    places = {"cwd": str(machine.project), "home": str(machine.host.home)}
    markers = sorted(p.name for p in Path(machine.project).glob(f"{MARKER}-*"))
    left = [path.format(**places) for path, _ in ATTACKS
            if MARKER in text_of(path.format(**places))]
    print(f"OUTCOME ({machine.sandbox}): markers {markers}, on disk {left}")
    assert not markers, markers
    assert not left, left
    both_held(first, second)
