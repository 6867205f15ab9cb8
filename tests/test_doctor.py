"""`forge doctor`: each check says yes or names its own fix; exit 0 when ready, 1 otherwise."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from forge_runtime import bootstrap, command_path, distribution, doctor, hook_python, resources
from forge_runtime.cli.main import main
from forge_runtime.project import find_project

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture
def project(cli_project, monkeypatch) -> Path:
    monkeypatch.delenv("FORGE_CLAUDE_BIN", raising=False)
    return cli_project


def doctor_json(capsys) -> tuple[int, dict]:
    code = main(["doctor", "--json"])
    return code, json.loads(capsys.readouterr().out)


def failing(payload: dict) -> dict[str, str]:
    return {c["name"]: c["fix"] for c in payload["checks"] if not c["ok"]}


def test_a_ready_project_passes_every_check(project, capsys):
    main(["init"])
    capsys.readouterr()
    assert main(["doctor"]) == 0
    out = capsys.readouterr().out
    assert out.rstrip().endswith("Done.\n  all 9 checks passed")
    code, payload = doctor_json(capsys)
    assert code == 0 and payload["ok"] is True and failing(payload) == {}
    assert [c["name"] for c in payload["checks"]] == [
        "python", "dependencies", "plugin", "hook interpreter", "project", "host",
        "host version", "sandbox", "command"]
    assert payload["_hint"]["marker"] == "Done"


def test_an_uninitialised_project_is_fixed_by_forge_init(project, capsys):
    code, payload = doctor_json(capsys)
    assert code == 1
    assert failing(payload) == {"project": "forge init"}
    assert payload["_next_action"] == "forge init"
    main(["init"])
    capsys.readouterr()
    assert doctor_json(capsys)[0] == 0


def test_a_broken_state_file_gets_a_fix_that_really_fixes_it(project, capsys):
    main(["init"])
    (project / ".forge/local/state.md").write_text("---\ngoal: [unclosed\n---\n")
    capsys.readouterr()
    code, payload = doctor_json(capsys)
    fix = failing(payload)["project"]
    assert code == 1 and "not YAML" in payload["checks"][4]["detail"]
    subprocess.run(["sh", "-c", fix.replace("forge init", "python3 -m forge_runtime init")],
                   cwd=project, check=True, capture_output=True)
    assert (project / ".forge/local/state.md.broken").exists()
    assert doctor_json(capsys)[0] == 0


@pytest.mark.parametrize("text, detail", [
    ("no front matter\n", "does not start with a `---` front matter fence"),
    ("---\ngoal: 3\n---\n", "neither null nor a mapping"),
])
def test_state_front_matter_problems_are_named(project, capsys, text, detail):
    main(["init"])
    (project / ".forge/local/state.md").write_text(text)
    capsys.readouterr()
    check = doctor.check_project(find_project(project))
    assert not check.ok and detail in check.detail


def test_missing_dependencies_name_the_pip_command(monkeypatch):
    monkeypatch.setattr(hook_python, "missing_modules", lambda modules=(): ["jsonschema"])
    check = doctor.check_dependencies()
    assert (check.ok, check.fix) == (False, bootstrap.pip_fallback())
    assert "jsonschema" in check.detail


def test_a_missing_host_binary_names_the_install_command(project, monkeypatch, tmp_path):
    monkeypatch.setenv("FORGE_CLAUDE_BIN", str(tmp_path / "nowhere" / "claude"))
    check = doctor.check_host_binary()
    assert not check.ok and check.fix.endswith("-m pip install claude-agent-sdk")


def test_a_host_binary_that_fails_is_reported(project, monkeypatch, tmp_path):
    fake = tmp_path / "claude"
    fake.write_text("#!/bin/sh\nexit 3\n")
    fake.chmod(0o755)
    monkeypatch.setenv("FORGE_CLAUDE_BIN", str(fake))
    check = doctor.check_host_binary()
    assert not check.ok and "exited 3" in check.detail


def test_the_real_host_binary_reports_its_version():
    check = doctor.check_host_binary()
    assert check.ok and "(Claude Code)" in check.detail


@pytest.fixture
def running_host(tmp_path, monkeypatch):
    """A process that stands for the running Claude Code, as the SDK bundle lays it out
    (an executable `claude` with `claude.version` beside it), its pid in CLAUDE_PID as the
    host gives every hook and the agent's Bash."""
    def start(version: str) -> Path:
        binary = tmp_path / "bundle" / "claude"
        binary.parent.mkdir(exist_ok=True)
        shutil.copy(shutil.which("sleep"), binary)
        (tmp_path / "bundle" / "claude.version").write_text(f"{version} (Claude Code)\n")
        process = subprocess.Popen([str(binary), "30"])
        started.append(process)
        monkeypatch.setenv("CLAUDE_PID", str(process.pid))
        return binary

    started: list[subprocess.Popen] = []
    yield start
    for process in started:
        process.kill()
        process.wait()


def test_a_host_newer_than_the_contract_is_named_with_the_drift_check(running_host):
    binary = running_host("2.1.999")
    check = doctor.check_host_version()
    assert not check.ok and "Claude Code 2.1.999" in check.detail
    assert "newer than 2.1.337" in check.detail
    assert check.fix.endswith(f"-m forge_runtime.host_drift --claude {binary}")


def test_a_measured_host_passes_the_version_check(running_host):
    running_host("2.1.337")
    check = doctor.check_host_version()
    assert check.ok and "Claude Code 2.1.337" in check.detail


def test_without_a_running_host_the_version_of_the_found_one_is_checked(monkeypatch):
    monkeypatch.delenv("CLAUDE_PID", raising=False)
    monkeypatch.delenv("CLAUDE_CODE_EXECPATH", raising=False)
    check = doctor.check_host_version()
    assert check.ok and "claude_agent_sdk" in check.detail


@pytest.fixture
def plugin_copy(tmp_path) -> Path:
    copy = tmp_path / "plugin"
    shutil.copytree(REPO / ".claude-plugin", copy / ".claude-plugin")
    shutil.copytree(REPO / "hooks", copy / "hooks")
    return copy


def test_a_sound_plugin_bundle_has_no_problem(plugin_copy):
    assert doctor._plugin_problem(plugin_copy) is None


def test_a_launcher_without_its_executable_bit_is_fixed_by_chmod(plugin_copy):
    (plugin_copy / "hooks/forge-hook").chmod(0o644)
    detail, fix = doctor._plugin_problem(plugin_copy)
    assert "not executable" in detail
    subprocess.run(fix, shell=True, check=True)
    assert doctor._plugin_problem(plugin_copy) is None


def test_a_hooks_file_missing_an_event_is_named(plugin_copy):
    hooks_file = plugin_copy / "hooks/hooks.json"
    declared = json.loads(hooks_file.read_text())
    del declared["hooks"]["Stop"]
    hooks_file.write_text(json.dumps(declared))
    detail, fix = doctor._plugin_problem(plugin_copy)
    assert detail == "hooks/hooks.json does not register Stop"
    # the copy is not a checkout: reinstall from the source this forge came from
    assert fix.endswith(f"pip install --force-reinstall {distribution.source()}")


def test_without_a_plugin_bundle_the_settings_wiring_is_checked(project, monkeypatch):
    monkeypatch.setattr(resources, "plugin_root", lambda: None)
    check = doctor.check_hook_wiring(find_project(project))
    assert (check.name, check.ok, check.fix) == ("hooks", False, "forge init --hooks")
    main(["init", "--hooks"])
    assert doctor.check_hook_wiring(find_project(project)).ok


def test_a_wiring_that_leaves_reads_out_of_the_guard_is_a_failed_check(project, monkeypatch):
    """An older forge wired PreToolUse for every tool but Read, Grep and Glob: reads of a goal
    session would pass its budget unchecked until `forge init --hooks` wires it again."""
    monkeypatch.setattr(resources, "plugin_root", lambda: None)
    main(["init", "--hooks"])
    path = project / ".claude/settings.json"
    settings = json.loads(path.read_text())
    (guard,) = settings["hooks"]["PreToolUse"]
    settings["hooks"]["PreToolUse"] = [{**guard, "matcher": "^(?!(Read|Grep|Glob)$).*"}]
    path.write_text(json.dumps(settings))
    check = doctor.check_hook_wiring(find_project(project))
    assert (check.ok, check.fix) == (False, "forge init --hooks")
    assert "PreToolUse" in check.detail and "budget" in check.detail
    main(["init", "--hooks"])
    assert doctor.check_hook_wiring(find_project(project)).ok


def test_unreadable_settings_are_a_failed_check_not_a_crash(project, monkeypatch):
    monkeypatch.setattr(resources, "plugin_root", lambda: None)
    (project / ".claude").mkdir()
    (project / ".claude/settings.json").write_text("{broken")
    check = doctor.check_hook_wiring(find_project(project))
    assert not check.ok and "-m json.tool" in check.fix


def test_several_failures_give_the_first_fix_and_the_others_as_fallbacks(project, capsys,
                                                                        monkeypatch, tmp_path):
    monkeypatch.setenv("FORGE_CLAUDE_BIN", str(tmp_path / "nowhere"))
    code, payload = doctor_json(capsys)
    assert code == 1
    assert payload["_hint"]["error"] == "2 of 9 checks failed: project, host"
    assert payload["_next_action"] == "forge init"
    assert payload["_hint"]["or"][0].endswith("-m pip install claude-agent-sdk")


def test_codex_hooks_are_checked_for_wiring_project_trust_and_hook_trust(project, monkeypatch,
                                                                        tmp_path):
    home = tmp_path / "codex-home"
    home.mkdir()
    monkeypatch.setenv("CODEX_HOME", str(home))
    assert not doctor.codex_installed(find_project(project))
    main(["init", "--host", "codex"])
    check = doctor.check_codex(find_project(project))
    assert (check.ok, check.fix) == (False, "codex")
    assert "the project is not trusted by Codex" in check.detail
    hooks_file = project / ".codex" / "hooks.json"
    lines = [f'[projects."{project}"]', 'trust_level = "trusted"', "", "[hooks.state]"]
    (home / "config.toml").write_text("\n".join(lines) + "\n")
    check = doctor.check_codex(find_project(project))
    assert "has not trusted forge's UserPromptSubmit, PreToolUse, Stop, SessionEnd" in check.detail
    for event in ("user_prompt_submit", "pre_tool_use", "stop", "session_end"):
        lines += [f'[hooks.state."{hooks_file}:{event}:0:0"]', 'trusted_hash = "sha256:0"']
    (home / "config.toml").write_text("\n".join(lines) + "\n")
    assert doctor.check_codex(find_project(project)).ok
    hooks_file.write_text('{"hooks": {}}')
    check = doctor.check_codex(find_project(project))
    assert (check.ok, check.fix) == (False, "forge init --host codex")


def _fake_forge(directory: Path, body: str) -> Path:
    directory.mkdir(parents=True, exist_ok=True)
    program = directory / "forge"
    program.write_text(body)
    program.chmod(0o755)
    return program


def test_a_foreign_forge_first_on_path_is_named_with_the_fix(tmp_path, monkeypatch):
    """Foundry's and Laravel's CLIs are also called `forge`: one first on PATH would run
    every `Next: forge ...` hint."""
    foreign = _fake_forge(tmp_path / "foundry", "#!/bin/sh\necho 'forge 0.2.0 (foundry)'\n")
    monkeypatch.setenv("PATH", f"{foreign.parent}{os.pathsep}{os.environ['PATH']}")
    check = doctor.check_command()
    assert not check.ok and str(foreign) in check.detail
    assert check.fix.startswith("export PATH=") and check.fix.endswith(':"$PATH"')
    fixed = subprocess.run(["sh", "-c", f"{check.fix}; command -v forge"],
                           capture_output=True, text=True, env={**os.environ})
    assert command_path.is_ours(fixed.stdout.strip())  # the fix puts a forge of ours first


def test_our_own_forge_on_path_passes(tmp_path, monkeypatch):
    ours = _fake_forge(tmp_path / "venv-bin", "#!/usr/bin/python3\nfrom forge_runtime.cli.main "
                                              "import main\nmain()\n")
    monkeypatch.setenv("PATH", f"{ours.parent}{os.pathsep}{os.environ['PATH']}")
    assert doctor.check_command().ok
