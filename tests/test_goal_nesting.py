"""A host session an agent started is not a person (goal/hosts/nesting.py), read from a /proc
laid out as Linux lays it out, and from the environment the host gives its tools."""

from __future__ import annotations

from pathlib import Path

import pytest

from forge_runtime.errors import ForgeError
from forge_runtime.goal.hosts import nesting

CLAUDE = "/opt/claude/bin/claude"
HOOK = ["python3", "-I", "entry.py", "hook"]


def _proc(tmp_path: Path, chain: list[tuple[str, list[str]]], init: str = "init") -> str:
    """A /proc whose `self` is the first of `chain` (comm, argv), each the parent of the one
    before; pid 1 is `init`."""
    proc = tmp_path / "proc"
    pids = [str(100 + index) for index in range(len(chain))]
    for index, (comm, argv) in enumerate(chain):
        parent = pids[index + 1] if index + 1 < len(pids) else "1"
        _process(proc / pids[index], comm, argv, parent)
    _process(proc / "1", init, [f"/sbin/{init}"], "0")
    (proc / "self").symlink_to(pids[0])
    return str(proc)


def _process(where: Path, comm: str, argv: list[str], parent: str) -> None:
    where.mkdir(parents=True)
    (where / "stat").write_text(f"{where.name} ({comm}) S {parent} {parent} {parent} 0 -1\n")
    (where / "cmdline").write_bytes(b"\0".join(arg.encode() for arg in argv) + b"\0")


PERSON = [("python3", HOOK), ("sh", ["/bin/sh", "forge-hook"]),
          ("claude", [CLAUDE, "-p", "/goal x"]), ("bash", ["-bash"]), ("sshd", ["sshd"])]
NESTED = [("python3", HOOK), ("sh", ["/bin/sh", "forge-hook"]),
          ("claude", [CLAUDE, "-p", "/goal x"]), ("bash", ["/bin/bash", "-c", "claude -p"]),
          ("claude", [CLAUDE]), ("bash", ["-bash"])]


def test_a_persons_session_is_a_persons(tmp_path):
    assert nesting.started_by_agent({}, _proc(tmp_path, PERSON)) is None


def test_a_session_below_another_hosts_tool_is_an_agents(tmp_path):
    why = nesting.started_by_agent({}, _proc(tmp_path, NESTED))
    assert why.startswith("its host (claude (pid 102)) was started below another host "
                          "session (claude (pid 104))")


def test_a_host_execd_straight_from_another_counts_twice(tmp_path):
    chain = [("python3", HOOK), ("claude", [CLAUDE, "-p", "/goal x"]), ("claude", [CLAUDE])]
    assert nesting.started_by_agent({}, _proc(tmp_path, chain)) is not None


def test_codexs_npm_launcher_and_its_binary_are_one_host(tmp_path):
    codex = [("python3", HOOK), ("codex", ["/npm/@openai/codex/vendor/codex", "exec"]),
             ("node", ["node", "/npm/@openai/codex/bin/codex.js", "exec"]),
             ("bash", ["-bash"])]
    assert nesting.started_by_agent({}, _proc(tmp_path, codex)) is None
    inside_claude = codex[:-1] + [("bash", ["/bin/bash", "-c", "codex exec"]),
                                  ("claude", [CLAUDE])]
    why = nesting.started_by_agent({}, _proc(tmp_path / "nested", inside_claude))
    assert "claude (pid 104)" in why


def test_a_session_inside_a_hosts_bash_sandbox_is_an_agents(tmp_path):
    why = nesting.started_by_agent({}, _proc(tmp_path, PERSON, init="bwrap"))
    assert "Bash sandbox" in why


@pytest.mark.parametrize("marker", ["CLAUDE_CODE_EXECPATH", "CODEX_TOOL_CALL_ID"])
def test_the_tools_environment_marker_tells_too(tmp_path, marker):
    why = nesting.started_by_agent({marker: "x"}, _proc(tmp_path, PERSON))
    assert marker in why


def test_an_unreadable_proc_says_nothing(tmp_path):
    assert nesting.started_by_agent({}, str(tmp_path / "no-proc")) is None


def test_require_person_refuses_with_the_way_a_person_takes(monkeypatch):
    monkeypatch.setattr(nesting, "started_by_agent", lambda: "a reason")
    with pytest.raises(ForgeError) as caught:
        nesting.require_person("ship it")
    text = caught.value.hint().render()
    assert text.startswith("Error: FORGE_GOAL_NOT_A_PERSON: this /goal comes from a host "
                           "session an agent started (a reason)")
    assert "\nFix: /goal ship it\n" in text
    monkeypatch.setattr(nesting, "started_by_agent", lambda: None)
    nesting.require_person("ship it")
