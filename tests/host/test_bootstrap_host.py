"""The SessionStart bootstrap inside the real host: the first session after install builds
forge-env under the host's own CLAUDE_PLUGIN_DATA and the session's later hooks run in it;
without network the person gets one message with a Fix, and the session goes on."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest
from offline_pip import clean_env, make_wheelhouse, refusing_index

pytestmark = pytest.mark.host

SAY_HELLO = """
rules:
  - name: answer
    reply: {text: "Hello."}
"""
# Written into the stand-in environment: every interpreter start there appends its prefix.
PROBE_PTH = ("import os, sys; p = os.environ.get('FORGE_TEST_PROBE'); "
             "p and open(p, 'a').write(sys.prefix + '\\n')\n")


@pytest.fixture
def bare_bin(tmp_path) -> Path:
    """A bin directory whose python3 lacks the hook dependencies, for the launcher's PATH."""
    env = tmp_path / "bare"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(env)], check=True)
    return env / "bin"


def session_env(bare_bin: Path, **pip: str) -> dict[str, str]:
    """No FORGE_PYTHON, so the launcher picks forge-env or the first python3 on PATH."""
    base = clean_env()
    pip_settings = {key: value for key, value in base.items() if key.startswith("PIP_")}
    return {"FORGE_PYTHON": "", "PATH": f"{bare_bin}:{base['PATH']}", **pip_settings, **pip}


def test_first_session_builds_forge_env_and_later_hooks_run_in_it(claude_host, project,
                                                                  tmp_path, bare_bin):
    wheels = make_wheelhouse(tmp_path / "wheels", {"forge_test_probe.pth": PROBE_PTH})
    probe = tmp_path / "probe.txt"
    host = claude_host(SAY_HELLO)
    env = session_env(bare_bin, PIP_NO_INDEX="1", PIP_FIND_LINKS=str(wheels),
                      FORGE_TEST_PROBE=str(probe))
    session = host.run("hi", cwd=project, env=env, timeout=240)

    assert session.terminal_reason == "completed", session.stderr
    assert session.plugin_errors() == []
    responses = {e["hook_event"]: e for e in session.hook_events}
    assert responses["SessionStart"]["exit_code"] == 0
    assert responses["SessionStart"]["output"] == ""              # silent when it works
    forge_env = next(host.home.glob(".claude/plugins/data/*/forge-env"))
    assert forge_env.is_symlink()
    assert not forge_env.resolve().is_relative_to(Path(__file__).resolve().parents[2])
    assert [e["hook_event"] for e in session.hook_events][1:] == ["UserPromptSubmit", "Stop"]
    # The build's own import check ran, in the side directory since renamed into place.
    lines = probe.read_text().splitlines()
    building = [line for line in lines if not Path(line).exists()]
    assert building and {Path(line).parent for line in building} == {forge_env.resolve().parent}

    # Every hook starts forge-env's interpreter, without `site` (so a .pth cannot see it):
    # wrapped for the next session by a script that notes each start and then runs it.
    python = forge_env / "bin" / "python"
    real, starts = python.resolve(), tmp_path / "starts.txt"
    python.unlink()
    python.write_text(f'#!/bin/bash\necho "$0" >> {starts}\nexec -a "$0" {real} "$@"\n')
    python.chmod(0o755)
    again = host.run("hi again", cwd=project, env=env, timeout=120)
    assert again.terminal_reason == "completed"
    assert {e["hook_event"]: e["output"] for e in again.hook_events}["SessionStart"] == ""
    assert [e["hook_event"] for e in again.hook_events] == ["SessionStart", "UserPromptSubmit",
                                                            "Stop"]
    started = starts.read_text().splitlines()  # those three and SessionEnd, as the host exits
    assert len(started) >= 3 and set(started) == {str(python)}
    assert len(list(forge_env.parent.glob("forge-env.d/*"))) == 1    # not built twice


def test_without_network_the_person_sees_one_message_and_the_session_goes_on(
        claude_host, project, bare_bin, tmp_path):
    """Also with the project's own `.venv` activated (first on PATH): its Python, whose
    `.pth` files are the agent's to write, never runs a hook."""
    marker = tmp_path / "project-venv-ran"
    venv = project / ".venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    site = next((venv / "lib").glob("python3*/site-packages"))
    (site / "zz_agent.pth").write_text(f"import os; open({str(marker)!r}, 'a').write('ran')\n")
    host = claude_host(SAY_HELLO)
    with refusing_index() as index:
        env = session_env(bare_bin, PIP_INDEX_URL=index, PIP_RETRIES="0", PIP_TIMEOUT="5")
        env["PATH"] = f"{venv / 'bin'}:{env['PATH']}"
        session = host.run("hi", cwd=project, env=env, timeout=240)

    assert session.terminal_reason == "completed", session.stderr
    assert not marker.exists(), "the project's .venv ran a hook"
    assert all(".venv" not in e["output"] + e["stderr"] for e in session.hook_events)
    start = next(e for e in session.hook_events if e["hook_event"] == "SessionStart")
    assert start["exit_code"] == 0 and "Traceback" not in start["stderr"]
    message = json.loads(start["output"])["systemMessage"]
    assert message.startswith("Error: forge could not install its hook dependencies")
    assert message.count("\nFix: ") == 1
    # The host shows it to the person (a hook_system_message in the transcript) ...
    shown = [entry["attachment"]["content"] for entry in session.transcript()
             if entry.get("attachment", {}).get("type") == "hook_system_message"]
    assert shown == [message]
    # ... and not to the model.
    assert all("forge could not install" not in json.dumps(body)
               for body in session.model_requests())


def test_with_uv_on_the_hosts_path_uv_builds_forge_env_and_a_planted_one_never_runs(
        claude_host, project, tmp_path, bare_bin):
    """The host starts hooks in the project with its own PATH: a trusted uv outside the
    project builds forge-env; the project's own `bin/uv`, reachable through a relative PATH
    entry that comes first, never runs."""
    from uv import find_uv_bin

    tools = tmp_path / "tools"
    tools.mkdir()
    (tools / "uv").symlink_to(find_uv_bin())
    marker = tmp_path / "planted-uv-ran"
    planted = project / "bin" / "uv"
    planted.parent.mkdir()
    planted.write_text(f"#!/bin/sh\necho ran >> {marker}\nexit 0\n")
    planted.chmod(0o755)
    wheels = make_wheelhouse(tmp_path / "wheels")
    host = claude_host(SAY_HELLO)
    with refusing_index() as dead:
        env = session_env(bare_bin, UV_FIND_LINKS=str(wheels), UV_NO_INDEX="1",
                          UV_CACHE_DIR=str(tmp_path / "uv-cache"), PIP_INDEX_URL=dead,
                          PIP_RETRIES="0", PIP_TIMEOUT="5")
        env["PATH"] = f"bin:{tools}:{env['PATH']}"
        session = host.run("hi", cwd=project, env=env, timeout=240)

    assert session.terminal_reason == "completed", session.stderr
    start = next(e for e in session.hook_events if e["hook_event"] == "SessionStart")
    assert (start["exit_code"], start["output"]) == (0, "")
    assert not marker.exists()
    forge_env = next(host.home.glob(".claude/plugins/data/*/forge-env"))
    site = next((forge_env / "lib").glob("python*/site-packages"))
    installers = {info.name.split("-")[0]: (info / "INSTALLER").read_text().strip()
                  for info in site.glob("*.dist-info")}
    assert installers == {"pyyaml": "uv", "filelock": "uv", "jsonschema": "uv",
                          "genai_prices": "uv"}
