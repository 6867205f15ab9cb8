"""forge's own run of a goal's final gates, confined by the posture the goal recorded: on
Codex as on Claude Code, and at least as tight as the agent's Bash (no Unix sockets, no
network, a clean environment, the ledger read-only). Each escape is run for real, by a
gate whose code tries it, under bubblewrap; the same probe run unconfined shows that it
would reach each one."""

from __future__ import annotations

import json
import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from goal_support import activate_with_gates, goal_project, with_sandbox_layer
from test_gates import age, write
from test_gates_confirm import gates_file

from forge_runtime.gates import confined, confirm, recorded, seccomp
from forge_runtime.sandbox.posture import OPTED_OUT, SANDBOXED

OBJECTIVE = "the parser passes its tests"

# A gate's test code as an attacker writes it (a conftest.py would do the same): each way
# out of the confinement, and what it reached written where the test reads it.
PROBE = """\
import json, os, socket
reached = []
def unix(name, path):
    try:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(2)
        client.connect(path)
        reached.append(name)
    except OSError as exc:
        print(name, exc)
bus = os.environ.get("DBUS_SESSION_BUS_ADDRESS", "unix:path={bus}").split("=", 1)[1]
unix("session bus", bus)
unix("docker socket", {docker!r})
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    reached.append("network")
except OSError as exc:
    print("network", exc)
for path in ({ledger!r} + "/planted", {key!r}):
    try:
        with open(path, "a") as handle:
            handle.write("forged")
        reached.append("ledger")
    except OSError as exc:
        print("ledger", exc)
if os.environ.get("FORGE_PROBE_TOKEN"):
    reached.append("hook environment")
with open("src/reached.json", "w") as handle:
    json.dump(reached, handle)
"""
EVERY_ESCAPE = ["session bus", "docker socket", "network", "ledger", "ledger"]


@pytest.fixture
def project(tmp_path, monkeypatch):
    """A project in no posture of Claude Code's (no sandbox settings at all): only what the
    goal recorded can decide how its gates run, as on Codex."""
    project = goal_project(tmp_path, monkeypatch, cli=True)
    write(project.root, "src/parser.py", "parse = 'good'\n")
    age(project.root)
    return project


def goal_with(project, command: str, sandbox: str | None) -> tuple[str, recorded.Recorded]:
    write(project.root, ".forge/gates.yaml", gates_file(command))
    nonce = activate_with_gates(project, OBJECTIVE, sandbox=sandbox).goal["nonce"]
    return nonce, recorded.of_goal(project, nonce)


def _listening_unix(path: Path) -> socket.socket:
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(str(path))
    server.listen(4)
    return server


@pytest.fixture
def services(project, monkeypatch):
    """A session bus, a docker-like socket and a TCP service on loopback, listening where
    the gate can see them (the project: the run's /tmp is its own), and a token in forge's
    own environment (as a hook has the host's)."""
    run = project.root / "r"
    run.mkdir()
    bus, docker = run / "bus", run / "docker.sock"
    servers = [_listening_unix(bus), _listening_unix(docker)]
    tcp = socket.socket()
    tcp.bind(("127.0.0.1", 0))
    tcp.listen(4)
    servers.append(tcp)
    monkeypatch.setenv("DBUS_SESSION_BUS_ADDRESS", f"unix:path={bus}")
    monkeypatch.setenv("FORGE_PROBE_TOKEN", "secret")
    yield {"bus": str(bus), "docker": str(docker), "port": tcp.getsockname()[1]}
    for server in servers:
        server.close()


def _probe_run(project, services, sandbox: str | None) -> tuple[dict, list[str]]:
    probe = PROBE.format(ledger=str(project.ledger_root),
                         key=str(project.ledger_root / "gates" / "receipt.key"), **services)
    write(project.root, "probe.py", probe)
    nonce, gates = goal_with(project, f"{sys.executable} probe.py", sandbox)
    result = confirm.confirm(project, nonce, gates, 20)
    log = Path(confirm.log_path(project, nonce, "g0")).read_text()
    assert result["results"]["g0"]["verdict"] == "passed", (result, log)
    return result, json.loads((project.root / "src" / "reached.json").read_text())


@pytest.mark.parametrize("host", ["codex", "claude-code"])
def test_a_gate_of_a_sandboxed_goal_reaches_no_socket_network_ledger_or_hook_variable(
        project, services, host, tmp_path, monkeypatch):
    """On Codex nothing of Claude Code's settings says "sandboxed", only the goal does; on
    Claude Code the layer is in force (where forge confined its run before, without a
    filter on Unix sockets and with the hook's environment)."""
    if host == "claude-code":
        monkeypatch.setenv("HOME", str(tmp_path / "home"))
        with_sandbox_layer(project.root)
    result, reached = _probe_run(project, services, SANDBOXED)
    assert result["confinement"] == confined.BWRAP
    assert reached == []
    assert not (project.ledger_root / "planted").exists()


def test_a_goal_from_before_postures_were_recorded_is_confined_too(project, services):
    result, reached = _probe_run(project, services, None)
    assert result["confinement"] == confined.BWRAP and reached == []


def test_the_probe_reaches_every_escape_where_the_goal_opted_out(project, services):
    """The project opted out: the agent's Bash runs unconfined, and so does the gate; the
    probe reaches everything but the hook's variables (no posture passes those on), so an
    empty list above means the confinement held."""
    result, reached = _probe_run(project, services, OPTED_OUT)
    assert result["confinement"] == confined.NONE
    assert reached == EVERY_ESCAPE


TESTS = """\
import asyncio, os, socket, subprocess

def test_ordinary_things_work(tmp_path):
    (tmp_path / "a.txt").write_text("a")
    left, right = socket.socketpair()
    left.sendall(b"x")
    assert right.recv(1) == b"x"
    assert asyncio.run(asyncio.sleep(0, "done")) == "done"
    assert subprocess.run(["sh", "-c", "echo hi"], capture_output=True).stdout == b"hi\\n"
    common = subprocess.run(["git", "rev-parse", "--git-common-dir"], capture_output=True,
                            text=True, check=True).stdout.strip()
    assert os.path.realpath(common) == os.path.realpath(".git")
    subprocess.run(["git", "status", "--short"], capture_output=True, check=True)
    assert os.environ["HOME"] == "/tmp/home" and os.environ["FORGE_GATE"] == "g0"
    with open("src/written.txt", "w") as handle:
        handle.write("ok")
"""


def test_ordinary_test_runs_work_confined(project):
    subprocess.run(["git", "init", "-q", str(project.root)], check=True)
    write(project.root, "src/test_ordinary.py", TESTS)
    nonce, gates = goal_with(project, f"{sys.executable} -m pytest -q -p no:cacheprovider "
                                      "src/test_ordinary.py", SANDBOXED)
    result = confirm.confirm(project, nonce, gates, 20)
    assert result["problem"] is None, result
    log = Path(confirm.log_path(project, nonce, "g0")).read_text()
    assert result["results"]["g0"]["verdict"] == "passed", log
    assert result["confinement"] == confined.BWRAP and "1 passed" in log
    assert (project.root / "src" / "written.txt").read_text() == "ok"


def test_codex_host_and_git_directories_in_the_project_stay_read_only(project):
    (project.root / ".codex").mkdir()
    write(project.root, ".codex/hooks.json", "{}\n")
    nonce, gates = goal_with(project, "set +e; echo '{\"hooks\": {}}' > .codex/hooks.json; "
                                      "mkdir -p .agents/skills/x .claude/skills/x; "
                                      "echo x > .codex/config.toml; "
                                      "echo /elsewhere > .git/commondir; "
                                      "mkdir -p .git/info && echo '*' > .git/info/exclude; "
                                      "exit 0", SANDBOXED)
    assert confirm.confirm(project, nonce, gates, 20)["results"]["g0"]["verdict"] == "passed"
    assert (project.root / ".codex/hooks.json").read_text() == "{}\n"
    assert not (project.root / ".codex/config.toml").exists()
    assert not (project.root / ".agents").exists()  # mount point removed after the run
    assert not (project.root / ".claude/skills").exists()
    assert not (project.root / ".git/commondir").exists()
    assert not (project.root / ".git/info").exists()  # all of .git is read-only


def test_no_seccomp_filter_for_the_machine_verifies_nothing(project, monkeypatch):
    nonce, gates = goal_with(project, "true", SANDBOXED)
    monkeypatch.setattr("platform.machine", lambda: "riscv64")
    result = confirm.confirm(project, nonce, gates, 10)
    assert not result["passed"] and "no seccomp filter for this machine (riscv64)" in \
        result["problem"]
    assert confirm.describe(result).startswith("forge could not run the recorded gates")


def test_the_filter_is_a_valid_program_for_each_supported_machine():
    for machine in ("x86_64", "aarch64"):
        program = seccomp.program(machine)
        assert program is not None and len(program) % 8 == 0 and len(program) // 8 <= 16
    assert seccomp.program("riscv64") is None
    fd = confined.descriptor_of(b"12345678")
    try:
        assert os.read(fd, 16) == b"12345678"
    finally:
        os.close(fd)


def test_a_bubblewrap_that_cannot_start_here_verifies_nothing_and_says_why(project, tmp_path,
                                                                            monkeypatch):
    """Not the agent's failing test: forge's run never began."""
    fake = tmp_path / "bin"
    fake.mkdir()
    (fake / "bwrap").write_text("#!/bin/sh\necho 'bwrap: setting up uid map: Permission "
                                "denied' >&2\nexit 1\n")
    (fake / "bwrap").chmod(0o755)
    nonce, gates = goal_with(project, "true", SANDBOXED)
    monkeypatch.setenv("PATH", f"{fake}:{os.environ['PATH']}")
    result = confirm.confirm(project, nonce, gates, 10)
    assert not result["passed"] and result["results"] == {}
    assert result["problem"] == ("bubblewrap could not start the confined run here: bwrap: "
                                 "setting up uid map: Permission denied")


SYSCALLS = """\
import ctypes, errno, json, platform
libc = ctypes.CDLL(None, use_errno=True)
def errno_of(number, *args):
    ctypes.set_errno(0)
    libc.syscall(number, *args)
    return errno.errorcode.get(ctypes.get_errno(), "none")
found = {"io_uring_setup": errno_of(425, 1, None)}
if platform.machine() == "x86_64":  # socket(AF_UNIX, SOCK_STREAM, 0) through the x32 ABI
    found["x32 socket"] = errno_of(0x40000000 | 41, 1, 1, 0)
with open("src/errnos.json", "w") as handle:
    json.dump(found, handle)
"""


def test_the_ways_around_a_socket_filter_are_closed_too(project):
    """io_uring makes sockets and connects without those system calls, and the x32 ABI has
    its own socket number: both answer EPERM in the confined run."""
    write(project.root, "calls.py", SYSCALLS)
    nonce, gates = goal_with(project, f"{sys.executable} calls.py", SANDBOXED)
    result = confirm.confirm(project, nonce, gates, 20)
    assert result["results"]["g0"]["verdict"] == "passed", \
        Path(confirm.log_path(project, nonce, "g0")).read_text()
    found = json.loads((project.root / "src" / "errnos.json").read_text())
    assert set(found.values()) == {"EPERM"}, found
