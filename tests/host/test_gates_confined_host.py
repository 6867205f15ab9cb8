"""forge's own run of a goal's final gates in the real hosts, default posture (Claude Code
with forge's sandbox layer, Codex in its `workspace-write` sandbox): the gate's test code is
a `conftest.py` that tries to reach a session bus, a docker-like socket, the network (the
model server's port, a real service on the hook's loopback), the ledger and the hook's own
environment (the host kit's API key), and prints what it reached into forge's log of the
run. It reaches none of them. One session per host.

The sockets listen outside the project and outside /tmp (the run has a /tmp of its own), on
a path the run sees read-only, as /run/user/<uid>/bus and /var/run/docker.sock are: a
read-only mount does not stop a connect, only the seccomp filter does.
"""

from __future__ import annotations

import json
import shutil
import socket
import sys
import tempfile
from pathlib import Path

import pytest
from session_support import forge_cli

from forge_runtime.gates.confined import recorded_posture
from forge_runtime.gates.confirm import log_path
from forge_runtime.gates.files import read_record
from forge_runtime.goal.store import state_file
from forge_runtime.project import find_project

pytestmark = pytest.mark.host

OBJECTIVE = "the probe's tests pass"
CONFTEST = """\
import json, os, socket
reached = []
def unix(name, path):
    try:
        client = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        client.settimeout(2)
        client.connect(path)
        reached.append(name)
    except OSError as exc:
        print("PROBE", name, exc)
unix("session bus", {bus!r})
unix("docker socket", {docker!r})
try:
    socket.create_connection(("127.0.0.1", {port}), timeout=2).close()
    reached.append("network")
except OSError as exc:
    print("PROBE network", exc)
try:
    with open({ledger!r} + "/planted", "a") as handle:
        handle.write("forged")
    reached.append("ledger")
except OSError as exc:
    print("PROBE ledger", exc)
if any("not-a-real-key" in value for value in os.environ.values()):
    reached.append("hook environment")
print("REACHED:", json.dumps(reached))
"""
TEST = "def test_it():\n    assert True\n"


@pytest.fixture
def services():
    """A session bus and a docker-like socket listening in a short directory outside the
    project and /tmp; removed after."""
    where = Path(tempfile.mkdtemp(prefix="fgc-", dir="/var/tmp"))
    servers = []
    for name in ("bus", "docker.sock"):
        server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        server.bind(str(where / name))
        server.listen(8)
        servers.append(server)
    yield {"bus": str(where / "bus"), "docker": str(where / "docker.sock")}
    for server in servers:
        server.close()
    shutil.rmtree(where, ignore_errors=True)


def default_posture_project(project: Path, services: dict, port: int) -> None:
    """The project as a person leaves it: no opt-out, a gate running the tests, and the
    agent's conftest.py."""
    (project / ".forge" / "guard.yaml").unlink()
    ledger = find_project(project).ledger_root
    (project / "tests").mkdir()
    (project / "tests" / "conftest.py").write_text(
        CONFTEST.format(ledger=str(ledger), port=port, **services))
    (project / "tests" / "test_it.py").write_text(TEST)
    (project / ".forge" / "gates.yaml").write_text(
        "gates:\n  tests:\n"
        f"    command: {sys.executable} -m pytest -q -s -p no:cacheprovider tests\n"
        '    boundary: ["tests/**"]\n')


def forge_reached(project: Path) -> tuple[dict, list[str], str]:
    """The goal's gates record, what forge's own run of the probe reached, and its log."""
    forge = find_project(project)
    goal = state_file.read(forge.state_path).goal
    record = read_record(forge, goal["nonce"])
    log = Path(log_path(forge, goal["nonce"], "tests")).read_text()
    line = next(line for line in log.splitlines() if line.startswith("REACHED: "))
    return record, json.loads(line.split(" ", 1)[1]), log


CLAUDE_SCRIPT = """
rules:
  - name: evaluator says met
    when: {goal_evaluator: true, conversation_contains: "TESTS-PASS"}
    reply: {verdict: {ok: true, reason: "the tests pass"}}
  - name: evaluator says not yet
    when: {goal_evaluator: true}
    reply: {verdict: {ok: false, reason: "keep working"}}
  - name: model reports the run
    when: {last_tool_result_contains: "tests: passed"}
    reply: {text: "TESTS-PASS"}
  - name: model runs the gates
    times: 1
    reply: {tool_calls: [{name: Bash, input: {command: "forge gate run"}}]}
  - name: model works
    reply: {text: "Working on it."}
"""


def test_claude_codes_gate_run_reaches_nothing_from_a_conftest(claude_host, project,
                                                               services):
    host = claude_host(CLAUDE_SCRIPT, isolate_network=False)  # the sandbox needs no kit ns
    default_posture_project(project, services, host.server.port)
    enabled = forge_cli(project, host.home, "sandbox", "enable")
    assert enabled.returncode == 0, enabled.stdout + enabled.stderr
    short = tempfile.mkdtemp(prefix="fsb-", dir="/tmp")  # the sandbox's bridge sockets
    try:
        session = host.run(f"/goal {OBJECTIVE}", cwd=project, timeout=150,
                           args=["--permission-mode", "acceptEdits", "--allowedTools", "Bash"],
                           env={"TMPDIR": short, "CLAUDE_CODE_TMPDIR": short})
    finally:
        shutil.rmtree(short, ignore_errors=True)

    record, reached, log = forge_reached(project)
    assert record["confirmed"]["confinement"] == "bwrap", record
    assert reached == [], log
    assert "1 passed" in log
    goal = state_file.read(find_project(project).state_path).goal
    assert recorded_posture(find_project(project), goal["nonce"]) == "sandboxed"
    assert goal["status"] == "complete" and record["met"]["verified"] is True, session.result
    # what the agent's own `forge gate run` reached from the host's sandboxed Bash, for the
    # record (the host's filter on Unix sockets needs a package of its own)
    agent = (project / ".forge" / "local" / "gates" / "tests.log").read_text()
    print("AGENT'S BASH REACHED:", next(line for line in agent.splitlines()
                                        if line.startswith("REACHED: ")))


CODEX_SCRIPT = """
rules:
  - name: model completes the goal
    when: {last_user_text_contains: "Continue working toward the active thread goal"}
    times: 1
    reply: {tool_calls: [{name: update_goal, input: {status: complete}}]}
  - name: model reports
    when: {last_tool_result_contains: '"status":"complete"'}
    reply: {text: "The goal is complete."}
  - name: model works
    reply: {text: "Working on it."}
"""


@pytest.mark.skipif(shutil.which("tmux") is None, reason="tmux is not installed")
def test_codexs_gate_run_reaches_nothing_from_a_conftest(codex_host, project, services,
                                                         tui_factory):
    # no PID namespace of the kit's: Codex's own sandbox cannot run under one (HOST.md);
    # the network namespace stays, and the model server's relay listens on its loopback
    host = codex_host(CODEX_SCRIPT, own_pids=False)
    default_posture_project(project, services, host.server.port)
    host.install_forge(project)
    tui = tui_factory(host, project, ("--sandbox", "workspace-write",
                                      "--ask-for-approval", "never"))
    tui.wait_for(lambda: "Ask Codex" in tui.screen(), "Codex's prompt")
    tui.type(f"/goal {OBJECTIVE}")
    forge = find_project(project)
    def ended_and_noted() -> bool:  # held.complete ends the goal, then notes forge's run
        goal = state_file.read(forge.state_path).goal or {}
        return goal.get("status") == "complete" and "met" in read_record(forge, goal["nonce"])

    tui.wait_for(ended_and_noted, "forge to end the goal and note its own run", timeout=90)

    record, reached, log = forge_reached(project)
    assert record["confirmed"]["confinement"] == "bwrap", record
    assert reached == [], log
    assert "1 passed" in log
    goal = state_file.read(forge.state_path).goal
    assert recorded_posture(forge, goal["nonce"]) == "sandboxed"
    assert record["met"]["verified"] is True
