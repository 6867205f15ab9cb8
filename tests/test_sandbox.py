"""`forge sandbox`: the kernel layer merged into a settings file, read back, and undone exactly.

Every test has its own HOME and managed-settings directory, so no file of this machine is
read or written. The real host enforcing these settings: tests/host/test_sandbox_host.py.
"""

from __future__ import annotations

import json
import subprocess
import uuid
from pathlib import Path

import pytest

from forge_runtime.cli.main import main
from forge_runtime.errors import ForgeError
from forge_runtime.goal.store import sessions
from forge_runtime.guard.decide import decide
from forge_runtime.project import find_project
from forge_runtime.sandbox import layer, posture, scopes, tools

THEIRS = (b'{"model": "opus",   "permissions": {"deny": ["Bash(curl:*)"]},\n'
          b' "sandbox": {"enabled": false}}')


FIND = tools.find  # the real probe, before the fixture replaces it


@pytest.fixture
def project(cli_project, tmp_path, monkeypatch) -> Path:
    monkeypatch.setenv("HOME", str(tmp_path / "home"))
    monkeypatch.setattr(scopes, "MANAGED_DIR", tmp_path / "etc-claude-code")
    monkeypatch.setattr(tools, "find", lambda: tools.Tools(True, (0, 8, 0), "/usr/bin/socat"))
    return cli_project


def settings_file(project: Path) -> Path:
    return project / ".claude" / "settings.json"


def run(capsys, *words: str) -> tuple[int, dict]:
    code = main([*words, "--json"])
    return code, json.loads(capsys.readouterr().out)


def test_enable_merges_the_layer_and_keeps_every_other_key(project, capsys):
    path = settings_file(project)
    path.parent.mkdir()
    path.write_bytes(THEIRS)
    code, payload = run(capsys, "sandbox", "enable")
    assert code == 0 and payload["changed"] is True
    settings = json.loads(path.read_text())
    assert settings["model"] == "opus"
    assert settings["sandbox"] == {"enabled": True, "failIfUnavailable": True,
                                   "allowUnsandboxedCommands": False}
    deny = settings["permissions"]["deny"]
    assert deny[0] == "Bash(curl:*)"
    # In the project's shared settings, project paths are written from its root: no path
    # of this machine goes into a file that is usually committed.
    assert "Edit(/.git/forge-goals/**)" in deny and "Edit(/.git/forge-guard/**)" in deny
    assert "Edit(/.forge/guard.yaml)" in deny and "Edit(/.git/commondir)" in deny
    assert "Edit(/.claude/settings.local.json)" in deny
    assert "Edit(~/.claude/settings.json)" in deny and "Edit(~/.claude/plugins/**)" in deny
    assert f"Edit({layer.witness_root()}/**)" in deny
    assert str(project.resolve()) not in path.read_text()
    assert (project / ".git" / "forge-goals").is_dir(), "a bind needs the directory to exist"
    assert payload["_next_action"] == "forge sandbox status"


def test_the_witness_is_denied_where_forge_keeps_it(project, monkeypatch, tmp_path):
    monkeypatch.delenv("XDG_STATE_HOME", raising=False)
    assert layer.witness_root() == "~/.local/state/forge/witness"
    monkeypatch.setenv("XDG_STATE_HOME", str(tmp_path / "state"))
    assert layer.witness_root() == f"/{tmp_path.resolve()}/state/forge/witness"


def test_enable_twice_changes_nothing_and_disable_restores_the_bytes(project, capsys):
    path = settings_file(project)
    path.parent.mkdir()
    path.write_bytes(THEIRS)
    path.chmod(0o640)
    run(capsys, "sandbox", "enable")
    enabled = path.read_bytes()
    code, payload = run(capsys, "sandbox", "enable")
    assert (code, payload["changed"]) == (0, False)
    assert path.read_bytes() == enabled
    code, payload = run(capsys, "sandbox", "disable")
    assert (code, payload["outcome"]) == (0, "restored")
    assert path.read_bytes() == THEIRS
    assert path.stat().st_mode & 0o777 == 0o640
    assert not layer.record_path(path).exists()
    assert run(capsys, "sandbox", "disable")[1]["outcome"] == "nothing"


def test_disable_removes_a_file_that_did_not_exist_before(project, capsys):
    run(capsys, "sandbox", "enable")
    assert settings_file(project).exists()
    run(capsys, "sandbox", "disable")
    assert not settings_file(project).exists()


def test_disable_after_a_later_edit_removes_only_what_forge_added(project, capsys):
    path = settings_file(project)
    path.parent.mkdir()
    path.write_bytes(THEIRS)
    run(capsys, "sandbox", "enable")
    edited = json.loads(path.read_text())
    edited["theme"] = "dark"
    edited["permissions"]["deny"].append("Read(.env)")
    path.write_text(json.dumps(edited))
    code, payload = run(capsys, "sandbox", "disable")
    assert (code, payload["outcome"]) == (0, "removed")
    assert json.loads(path.read_text()) == {**json.loads(THEIRS), "theme": "dark",
                                            "permissions": {"deny": ["Bash(curl:*)",
                                                                     "Read(.env)"]}}


def test_the_user_scope_names_the_project_by_its_absolute_path(project, capsys, tmp_path):
    user_settings = tmp_path / "home" / ".claude" / "settings.json"
    code, payload = run(capsys, "sandbox", "enable", "--scope", "user")
    assert code == 0 and payload["path"] == str(user_settings)
    deny = json.loads(user_settings.read_text())["permissions"]["deny"]
    assert f"Edit(/{project.resolve()}/.git/forge-goals/**)" in deny
    code, payload = run(capsys, "sandbox", "status")
    assert (code, payload["protected"], payload["gaps"]) == (0, True, [])
    run(capsys, "sandbox", "disable", "--scope", "user")
    assert not user_settings.exists()


def test_the_managed_scope_writes_a_drop_in_that_keeps_hooks_on(project, capsys):
    code, payload = run(capsys, "sandbox", "enable", "--scope", "managed")
    assert code == 0
    drop_in = scopes.MANAGED_DIR / "managed-settings.d" / "50-forge.json"
    assert payload["path"] == str(drop_in)
    assert json.loads(drop_in.read_text())["disableAllHooks"] is False
    run(capsys, "sandbox", "disable", "--scope", "managed")
    assert not drop_in.exists()


@pytest.mark.parametrize("found, words", [
    (tools.Tools(True, None, "/usr/bin/socat"), "bubblewrap (bwrap) is not installed"),
    (tools.Tools(True, (0, 6, 2), "/usr/bin/socat"), "bubblewrap 0.6.2 is older than 0.8.0"),
    (tools.Tools(True, (0, 9, 0), None), "socat is not installed"),
])
def test_enable_refuses_without_the_sandbox_tools_and_changes_nothing(
        project, capsys, monkeypatch, found, words):
    monkeypatch.setattr(tools, "find", lambda: found)
    code, payload = run(capsys, "sandbox", "enable")
    assert code == 1
    assert words in payload["_hint"]["error"]
    assert payload["_next_action"] == "apt-get install -y bubblewrap socat"
    assert not settings_file(project).exists()


def test_status_reports_the_gaps_and_ends_with_the_fix_for_the_worst(project, capsys):
    code, payload = run(capsys, "sandbox", "status")
    assert code == 1 and payload["protected"] is False
    assert payload["_next_action"] == "forge sandbox enable"
    run(capsys, "sandbox", "enable")
    code, payload = run(capsys, "sandbox", "status")
    assert (code, payload["protected"], payload["gaps"]) == (0, True, [])
    assert payload["_hint"]["marker"] == "Done"
    local = project / ".claude" / "settings.local.json"
    local.write_text(json.dumps({"disableAllHooks": True, "env": {"FORGE_PYTHON": "/bin/true"},
                                 "keep": 1}))
    code, payload = run(capsys, "sandbox", "status")
    assert code == 1 and [gap["rank"] for gap in payload["gaps"]] == [0, 1]
    assert f"disableAllHooks is true in {local}" in payload["_hint"]["error"]
    # The fix is a real command: run it, and the worst gap is gone, the rest kept.
    subprocess.run(payload["_next_action"], shell=True, check=True)
    assert json.loads(local.read_text()) == {"env": {"FORGE_PYTHON": "/bin/true"}, "keep": 1}
    code, payload = run(capsys, "sandbox", "status")
    assert "sets env FORGE_PYTHON=/bin/true" in payload["_hint"]["error"]
    subprocess.run(payload["_next_action"], shell=True, check=True)
    assert json.loads(local.read_text()) == {"env": {}, "keep": 1}
    assert run(capsys, "sandbox", "status")[0] == 0


def test_init_turns_the_layer_on_and_doctor_says_first_what_a_goal_gets(project, capsys):
    code, payload = run(capsys, "init")
    assert payload["sandbox"]["outcome"] == "enabled"
    assert posture.ledger_protected(find_project(project))
    main(["init"])
    assert "turn it off: forge sandbox disable" in capsys.readouterr().out
    code, payload = run(capsys, "doctor")
    assert payload["goal_posture"] == "a /goal here would be: sandboxed"
    main(["doctor"])
    assert capsys.readouterr().out.splitlines()[0] == "a /goal here would be: sandboxed"
    local = project / ".claude" / "settings.local.json"
    local.write_text('{"disableAllHooks": true}')
    code, payload = run(capsys, "doctor")
    check = {c["name"]: c for c in payload["checks"]}["sandbox"]
    assert code == 1 and check["ok"] is False and "disableAllHooks" in check["detail"]


def test_init_where_the_host_cannot_sandbox_says_why_and_what_to_do_and_succeeds(
        project, capsys, monkeypatch):
    monkeypatch.setattr(tools, "find", lambda: tools.Tools(True, None, None))
    code, payload = run(capsys, "init")
    assert code == 0 and payload["sandbox"]["outcome"] == "skipped"
    assert "bubblewrap (bwrap) is not installed" in payload["sandbox"]["problem"]
    main(["init"])
    line = [line for line in capsys.readouterr().out.splitlines() if "kernel layer" in line][0]
    assert "`apt-get install -y bubblewrap socat`, then `forge sandbox enable`" in line
    assert posture.OPT_OUT in line and not settings_file(project).exists()


def test_a_goal_without_the_kernel_layer_is_refused_naming_both_ways_on(project, capsys):
    found = find_project(project)
    with pytest.raises(ForgeError) as refused:
        posture.goal_notice_once(found, "s1")
    error = refused.value
    assert (error.code, error.fix, error.exit_code) == (posture.UNSANDBOXED, posture.ENABLE, 2)
    assert error.alternatives == ["forge sandbox enable --scope user", posture.OPT_OUT]
    assert "forge's sandbox layer is not in force (the host's Bash sandbox is off" in \
        error.message and "goal: {require_sandbox: false}" in error.message
    main(["sandbox", "status"])
    assert capsys.readouterr().out.splitlines()[0] == (
        "a /goal here would be: refused (no sandbox layer; Fix: forge sandbox enable, or opt "
        "out: goal: {require_sandbox: false} in .forge/guard.yaml)")
    # the opt-out, in the refusal's own words, run as the person would run it
    subprocess.run(error.alternatives[-1], shell=True, cwd=project, check=True)
    assert posture.for_goal(found) == posture.OPTED_OUT
    notice = posture.goal_notice_once(found, "s1")
    assert notice.startswith("FORGE_GOAL_UNSANDBOXED: this goal runs unsandboxed")
    assert notice.splitlines()[-2] == "Next: forge sandbox enable"
    assert posture.goal_notice_once(found, "s1") is None, "once per session"
    assert posture.goal_notice_once(found, "s2") is not None
    assert posture.would_be(found).startswith("unsandboxed by opt-out")
    layer.enable(found, scopes.PROJECT)
    assert posture.goal_notice_once(found, "s3") is None
    assert posture.for_goal(found) == posture.SANDBOXED


@pytest.mark.parametrize("text", ["goal: {require_sandbox: true}\n", "goal: {}\n",
                                  "goal: {require_sandbox: 'no'}\n", "goal: [\n",
                                  "goal: {require_sandbox: false}\ngoal: {}\n"])
def test_only_the_opt_out_in_so_many_words_runs_a_goal_unsandboxed(project, text):
    """Anything but `require_sandbox: false` refuses; a broken file fails closed with its
    own error (it might have said either)."""
    (project / ".forge").mkdir()
    (project / ".forge" / "guard.yaml").write_text(text)
    with pytest.raises(ForgeError) as refused:
        posture.for_goal(find_project(project))
    assert refused.value.code in (posture.UNSANDBOXED, "FORGE_GUARD_RULES_INVALID")
    assert posture.would_be(find_project(project)).startswith("refused (")


@pytest.mark.parametrize("found, fix", [
    (tools.Tools(True, None, "/usr/bin/socat"), "apt-get install -y bubblewrap socat"),
    (tools.Tools(True, (0, 9, 0), "/usr/bin/socat", "bwrap: No permissions to create new "
                 "namespace"), posture.OPT_OUT),
])
def test_where_the_host_cannot_sandbox_the_refusal_says_so(project, monkeypatch, found, fix):
    monkeypatch.setattr(tools, "find", lambda: found)
    with pytest.raises(ForgeError) as refused:
        posture.for_goal(find_project(project))
    assert refused.value.fix == fix
    assert f"this machine cannot sandbox: {found.problem}" in refused.value.message
    assert refused.value.alternatives[-1] == posture.OPT_OUT
    with pytest.raises(ForgeError) as enable:
        layer.enable(find_project(project), scopes.PROJECT)
    assert enable.value.fix == fix


def test_bubblewrap_that_cannot_start_is_found_by_starting_it(tmp_path, monkeypatch):
    """As in a container without user namespaces: bwrap is there, new enough, and fails."""
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "bwrap").write_text(
        '#!/bin/sh\n[ "$1" = --version ] && { echo "bubblewrap 0.9.0"; exit 0; }\n'
        'echo "bwrap: No permissions to create new namespace" >&2; exit 1\n')
    (bin_dir / "bwrap").chmod(0o755)
    (bin_dir / "socat").write_text("#!/bin/sh\n")
    (bin_dir / "socat").chmod(0o755)
    monkeypatch.setenv("PATH", str(bin_dir))
    found = FIND()
    assert found.bwrap_version == (0, 9, 0)
    assert found.start_error == "bwrap: No permissions to create new namespace"
    assert "no user namespaces" in found.problem and not found.installable
    (bin_dir / "bwrap").write_text('#!/bin/sh\n[ "$1" = --version ] && echo "bubblewrap '
                                   '0.9.0"\nexit 0\n')
    assert FIND().problem is None


def test_on_macos_the_settings_are_trusted_and_no_bubblewrap_is_asked_for(project, monkeypatch):
    monkeypatch.setattr(tools.sys, "platform", "darwin")
    monkeypatch.setattr(tools, "find", FIND)
    assert tools.find() == tools.Tools(False, None, None)
    found = find_project(project)
    with pytest.raises(ForgeError) as refused:
        posture.for_goal(found)
    assert refused.value.fix == posture.ENABLE
    layer.enable(found, scopes.PROJECT)
    assert posture.for_goal(found) == posture.SANDBOXED


def _sandbox_escape(project: Path, session_id: str, **fields) -> dict:
    return {"session_id": session_id, "hook_event_name": "PreToolUse", "cwd": str(project),
            "tool_name": "Bash", "tool_input": {"command": "ls",
                                                "dangerouslyDisableSandbox": True}, **fields}


def test_the_guard_refuses_to_leave_the_sandbox_in_a_session_with_a_goal_or_role(project):
    plain = str(uuid.uuid4())
    assert decide(_sandbox_escape(project, plain)) is None
    hint = decide(_sandbox_escape(project, plain, agent_type="forge:clarifier"))
    assert "dangerouslyDisableSandbox is refused" in hint.error
    with_goal = str(uuid.uuid4())
    sessions.write_pending(find_project(project).ledger_root, with_goal,
                           {"objective": "x", "prompt_id": "p"})
    hint = decide(_sandbox_escape(project, with_goal))
    assert "dangerouslyDisableSandbox is refused" in hint.error
    assert hint.text == "forge sandbox status"


def test_status_reports_codex_own_sandbox_for_a_project_wired_for_codex(project, capsys):
    code, payload = run(capsys, "sandbox", "status")
    assert payload["codex"] is None  # no .codex/: Claude Code's layer only
    (project / ".codex").mkdir()
    code, payload = run(capsys, "sandbox", "status")
    assert payload["codex"]["ledger_kernel_protected"] is True  # workspace-write by default
    (project / ".codex" / "config.toml").write_text('sandbox_mode = "danger-full-access"\n')
    code, payload = run(capsys, "sandbox", "status")
    assert payload["codex"]["sandbox_mode"] == "danger-full-access"
    assert payload["codex"]["ledger_kernel_protected"] is False
    main(["sandbox", "status"])
    assert "codex: sandbox_mode danger-full-access" in capsys.readouterr().out


def test_the_managed_drop_ins_in_force_are_every_json_file_there_in_name_order(
        project, monkeypatch, tmp_path):
    """files_in_force lists the drop-in directory by hand (no pathlib on a `/goal`): the
    same files, in the same order, as the glob the host's `*.json` stands for."""
    managed = tmp_path / "managed"
    drop_ins = managed / "managed-settings.d"
    drop_ins.mkdir(parents=True)
    for name in ("b.json", "a.json", ".hidden.json", "notes.txt", "A.json"):
        (drop_ins / name).write_text("{}")
    monkeypatch.setattr(scopes, "MANAGED_DIR", str(managed))
    found = [path for scope, path in scopes.files_in_force(find_project(project))
             if scope == scopes.MANAGED][1:]
    assert found == [str(path) for path in sorted(drop_ins.glob("*.json"))]
    assert [Path(path).name for path in found] == [".hidden.json", "A.json", "a.json",
                                                   "b.json"]


def test_status_says_whether_forge_can_confine_a_sandboxed_goals_gates(project, capsys,
                                                                       monkeypatch, tmp_path):
    """On either host: where it cannot, a sandboxed goal's gates verify nothing, and the
    person learns that here rather than from a goal ending unverified."""
    code, payload = run(capsys, "sandbox", "status")
    assert payload["gate_confinement"].startswith("confined (bubblewrap, no Unix sockets")
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, payload = run(capsys, "sandbox", "status")
    assert payload["gate_confinement"].startswith("cannot be confined, so no sandboxed goal is "
                                                  "verified here: the goal's posture is "
                                                  "sandboxed and bubblewrap (bwrap) is not")
    main(["sandbox", "status"])
    assert "forge's own run of a sandboxed goal's final gates: cannot be confined" in \
        capsys.readouterr().out


def test_init_for_codex_says_whether_its_goals_gates_can_be_confined(project, capsys,
                                                                     monkeypatch, tmp_path):
    code, payload = run(capsys, "init", "--host", "codex")
    assert code == 0 and payload["gate_confinement"].startswith("confined")
    assert not (project / ".claude").exists()  # the check's mount points are gone
    monkeypatch.setenv("PATH", str(tmp_path / "empty"))
    code, payload = run(capsys, "init", "--host", "codex")
    assert code == 0 and "bubblewrap (bwrap) is not installed" in payload["gate_confinement"]
