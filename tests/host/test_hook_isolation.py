"""No file an agent plants in the project runs inside a forge hook, in the real host.

A hook's working directory is the project. The attacks: a `forge_runtime/` package and
stdlib or dependency look-alikes (`json.py`, `yaml/`, `sitecustomize.py`) in the project
root, and a project settings file whose `env` points PYTHONPATH, PYTHONSTARTUP,
PYTHONUSERBASE (with a `.pth` file) and PYTHONPYCACHEPREFIX into the project. Each planted
file leaves a marker when it runs; the real forge's deny of a ledger write proves forge, not
the planted code, answered. A settings `env` that names a non-Python as FORGE_PYTHON makes the
guard fail closed and tells the person.
"""

from __future__ import annotations

import json
import sys

import pytest

pytestmark = pytest.mark.host

# A planted file records which process ran it, for the failure message.
PY = f"{sys.version_info[0]}.{sys.version_info[1]}"
MARK = ("import os, pathlib, sys; pathlib.Path({where!r}).joinpath('planted-{name}').write_text("
        "repr(sys.argv) + ' ' + os.getcwd() + ' ' + repr(sys.flags))\n")

LEDGER_WRITE_SCRIPT = """
rules:
  - name: the model reads the results
    when: {last_is_tool_result: true}
    reply: {text: "ISOLATION-DONE"}
  - name: ordinary work, then a write into the ledger
    reply:
      tool_calls:
        - {name: Bash, input: {command: "echo fine > {cwd}/ordinary.txt"}}
        - {name: Bash, input: {command: "rm -rf .git/forge-goals"}}
"""


def plant(project, markers) -> list[str]:
    """Plant look-alike modules in `project`; each touches `markers/planted-<name>` if run."""
    markers.mkdir()
    files = {
        "forge_runtime/__init__.py": "forge_runtime",
        "forge_runtime/entry.py": "entry",
        "forge_runtime/hooks/__init__.py": "hooks",
        "forge_runtime/hooks/__main__.py": "hooks-main",
        "forge_runtime/hooks/dispatch.py": "dispatch",
        "json.py": "json",
        "yaml/__init__.py": "yaml",
        "filelock.py": "filelock",
        "sitecustomize.py": "sitecustomize",
        "usercustomize.py": "usercustomize",
        "startup.py": "startup",
        f"userbase/lib/python{PY}/site-packages/evil.pth": "pth",
    }
    for relative, name in files.items():
        path = project / relative
        path.parent.mkdir(parents=True, exist_ok=True)
        code = MARK.format(where=str(markers), name=name)
        path.write_text(f"import sys; exec({code!r})\n" if relative.endswith(".pth") else code)
    (project / "pycache").mkdir()
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"env": {
        "PYTHONPATH": str(project), "PYTHONSTARTUP": str(project / "startup.py"),
        "PYTHONUSERBASE": str(project / "userbase"),
        "PYTHONPYCACHEPREFIX": str(project / "pycache"), "PYTHONINSPECT": "1"}}))
    return sorted(files.values())


def test_modules_planted_in_the_project_never_run_in_a_forge_hook(claude_host, project,
                                                                   tmp_path):
    markers = tmp_path / "markers"
    names = plant(project, markers)
    record = project / ".git" / "forge-goals" / "n1" / "records" / "00000001.json"
    record.parent.mkdir(parents=True)
    record.write_text('{"seq": 1}\n')
    # The planted files do run where nothing isolates them: the attack is real.
    import subprocess

    subprocess.run([sys.executable, "-c", "import json"], cwd=project, check=True)
    assert (markers / "planted-json").exists()
    (markers / "planted-json").unlink()

    host = claude_host(LEDGER_WRITE_SCRIPT)
    session = host.run("tidy up", cwd=project, args=["--allowedTools", "Bash"])

    assert session.terminal_reason == "completed", session.stderr
    fired = [hook.event for hook in session.hooks]
    assert fired == ["SessionStart", "UserPromptSubmit", "PreToolUse", "PreToolUse", "Stop",
                     "SessionEnd"], fired
    ran = {p.name: p.read_text() for p in markers.iterdir()}
    assert ran == {}, f"planted code ran (of {names})"
    assert (project / "ordinary.txt").read_text() == "fine\n"
    denied = [c.reply["hookSpecificOutput"]["permissionDecisionReason"]
              for c in session.hooks_for("PreToolUse") if c.reply]
    assert len(denied) == 1 and "Bash deletes the goal ledger" in denied[0], denied
    assert record.read_text() == '{"seq": 1}\n'
    assert all(hook.exit_code == 0 for hook in session.hooks)


FAKE_PYTHON_SCRIPT = """
rules:
  - name: the model reads the refusal
    when: {last_is_tool_result: true}
    reply: {text: "FAKE-DONE"}
  - name: an ordinary command
    reply:
      tool_calls:
        - {name: Bash, input: {command: "echo ran > {cwd}/ran.txt"}}
"""


def test_a_settings_env_naming_a_non_python_interpreter_fails_closed(claude_host, project):
    settings = project / ".claude" / "settings.json"
    settings.parent.mkdir()
    settings.write_text(json.dumps({"env": {"FORGE_PYTHON": "/bin/true"}}))
    host = claude_host(FAKE_PYTHON_SCRIPT)
    session = host.run("run it", cwd=project, args=["--allowedTools", "Bash"])

    # The Stop hook fails closed too: forge cannot charge a goal, so it ends autonomy.
    assert session.terminal_reason == "stop_hook_prevented", session.stderr
    assert not (project / "ran.txt").exists(), "a fake interpreter let the tool run"
    results = [block for request in session.requests
               for message in request["body"].get("messages", [])
               if isinstance(message.get("content"), list)
               for block in message["content"] if block.get("type") == "tool_result"]
    assert results and results[0]["is_error"]
    text = json.dumps(results[0]["content"])
    assert "forge's hook did not run to the end (status 0: not a Python with forge" in text
    assert "Fix: forge doctor" in text
    told = [json.loads(e["stdout"]) for e in session.hook_events
            if e["hook_event"] == "SessionStart" and e["stdout"].strip()]
    assert len(told) == 1, "the person is told once, at the session's start"
    assert told[0]["systemMessage"].startswith("Error: forge's hook did not run to the end")
    assert told[0]["systemMessage"].endswith("\nFix: forge doctor")
