"""`forge init`: installs forge's files idempotently, keeps edits, never names anything goal
under .claude/ or .agents/, and merges hook wiring into .claude/settings.json safely."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
from goal_support import cli_project_fixture

from forge_runtime import hook_settings, initializer, resources
from forge_runtime.cli.main import main
from forge_runtime.project import find_project

EVENTS = ["SessionStart", "UserPromptSubmit", "PreToolUse", "PostToolUse", "Stop", "StopFailure",
          "Interrupt", "SubagentStop", "SessionEnd"]


project = cli_project_fixture()


def forge(*words: str) -> int:
    return main(list(words))


def snapshot(root: Path) -> dict[str, tuple[bytes, int]]:
    """Every file under `root` (but .git) with its bytes and modification time."""
    return {path.relative_to(root).as_posix(): (path.read_bytes(), path.stat().st_mtime_ns)
            for path in root.rglob("*") if path.is_file() and ".git" not in path.parts}


def test_init_installs_workflows_skills_hook_helpers_and_the_state_template(project):
    assert forge("init") == 0
    bundle = resources.bundle_root()
    for name in initializer.shipped_files(bundle):
        assert (project / ".forge" / name).read_bytes() == (bundle / name).read_bytes()
    assert (project / ".forge/workflows/goal.md").is_file()
    assert (project / ".forge/workflows/clarify.md").is_file()
    assert (project / ".forge/skills/forge-status/SKILL.md").is_file()
    state = (project / ".forge/local/state.md").read_text()
    assert state.startswith("---\ngoal: null\n---\n") and "## Checklist" in state
    assert (project / ".forge/local/.gitignore").read_text() == "*\n"
    ignored = subprocess.run(["git", "-C", str(project), "status", "--porcelain",
                              "--ignored", ".forge/local"], capture_output=True, text=True)
    assert "!! .forge/local/" in ignored.stdout


def test_hook_helpers_keep_their_executable_bit(project, tmp_path):
    bundle = tmp_path / "bundle"
    for name in ("workflows", "skills", "hooks/lib"):
        (bundle / name).mkdir(parents=True)
    helper = bundle / "hooks/lib/goal-ledger.sh"
    helper.write_text("#!/bin/sh\nexit 0\n")
    helper.chmod(0o755)
    (bundle / "hooks/lib/goal-ledger.ps1").write_text("exit 0\n")
    initializer.Installer(find_project(project), bundle=bundle).run()
    assert os.access(project / ".forge/hooks/lib/goal-ledger.sh", os.X_OK)
    assert not os.access(project / ".forge/hooks/lib/goal-ledger.ps1", os.X_OK)


def test_a_second_init_changes_nothing(project, capsys):
    forge("init", "--hooks")
    before = snapshot(project)
    capsys.readouterr()
    assert forge("init", "--hooks") == 0
    assert snapshot(project) == before
    assert "unchanged .claude/settings.json" in capsys.readouterr().out
    assert forge("init") == 0
    assert snapshot(project) == before
    assert "nothing changed" in capsys.readouterr().out


def test_an_edited_file_is_kept_and_named_until_force(project, capsys):
    forge("init")
    edited = project / ".forge/workflows/goal.md"
    edited.write_text("my own notes\n")
    capsys.readouterr()
    assert forge("init") == 0
    out = capsys.readouterr().out
    assert "kept      .forge/workflows/goal.md" in out
    assert "Or: forge init --force" in out
    assert edited.read_text() == "my own notes\n"
    assert forge("init") == 0                      # still kept on every later run
    assert edited.read_text() == "my own notes\n"
    assert forge("init", "--force") == 0
    assert "replaced  .forge/workflows/goal.md" in capsys.readouterr().out
    assert edited.read_bytes() == (resources.bundle_root() / "workflows/goal.md").read_bytes()


def test_a_file_forge_installed_and_nobody_edited_is_updated(project, tmp_path):
    bundle = tmp_path / "bundle"
    for name in ("workflows", "skills", "hooks/lib"):
        (bundle / name).mkdir(parents=True)
    (bundle / "workflows/flow.md").write_text("version 1\n")
    proj = find_project(project)
    initializer.Installer(proj, bundle=bundle).run()
    (bundle / "workflows/flow.md").write_text("version 2\n")
    outcomes = initializer.Installer(proj, bundle=bundle).run()
    assert initializer.FileOutcome(".forge/workflows/flow.md", initializer.UPDATED) in outcomes
    assert (project / ".forge/workflows/flow.md").read_text() == "version 2\n"


def test_without_a_record_a_differing_file_counts_as_edited(project):
    forge("init")
    (project / ".forge/installed.json").unlink()
    (project / ".forge/workflows/clarify.md").write_text("mine\n")
    outcomes = initializer.Installer(find_project(project)).run()
    assert initializer.FileOutcome(".forge/workflows/clarify.md", initializer.KEPT) in outcomes
    assert (project / ".forge/workflows/clarify.md").read_text() == "mine\n"


def test_force_never_replaces_the_live_state_file(project):
    forge("init")
    state = project / ".forge/local/state.md"
    state.write_text("---\ngoal: null\n---\n## Checklist\n- [ ] my step\n")
    assert forge("init", "--force") == 0
    assert "- [ ] my step" in state.read_text()


def test_nothing_named_goal_is_ever_created_under_claude_or_agents(project):
    forge("init", "--hooks")
    forge("init", "--force", "--hooks")
    for top in (".claude", ".agents"):
        for path in (project / top).rglob("*"):
            assert "goal" not in path.name.lower(), path
    assert not (project / ".claude/commands/goal.md").exists()
    assert not (project / ".claude/skills/goal").exists()
    assert not (project / ".agents/skills/goal/SKILL.md").exists()
    # the hooks, and the kernel layer's record where this machine can sandbox
    names = {p.name for p in (project / ".claude").iterdir()}
    assert "settings.json" in names <= {"settings.json", "settings.json.forge-record"}
    assert not (project / ".agents").exists()


def test_forge_ships_no_skill_or_command_named_goal():
    bundle = resources.bundle_root()
    names = [p.name.lower() for p in (bundle / "skills").rglob("*")]
    assert not [name for name in names if "goal" in name]
    assert not (bundle / "commands").exists()


def test_hooks_wiring_registers_every_event_in_exec_form(project):
    assert forge("init", "--hooks") == 0
    settings = json.loads((project / ".claude/settings.json").read_text())
    assert list(settings["hooks"]) == EVENTS
    plugin = hook_settings.plugin_registrations()
    for event in EVENTS:
        groups = settings["hooks"][event]
        assert len(groups) == len(plugin[event])
        for group, declared in zip(groups, plugin[event], strict=True):
            (hook,) = group["hooks"]
            assert hook["command"] == sys.executable
            assert hook["args"] == ["-I", "-m", "forge_runtime.hooks", event]
            assert hook["timeout"] == declared["hooks"][0]["timeout"]
            assert hook.get("if") == declared["hooks"][0].get("if")
            assert group.get("matcher") == declared.get("matcher")


def test_the_wired_command_really_runs_the_hook(project):
    forge("init", "--hooks")
    hook = json.loads((project / ".claude/settings.json").read_text())["hooks"]["SessionEnd"]
    spec = hook[0]["hooks"][0]
    event = {"session_id": "s1", "hook_event_name": "SessionEnd", "reason": "other"}
    done = subprocess.run([spec["command"], *spec["args"]], input=json.dumps(event),
                          capture_output=True, text=True, cwd=project, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")


def test_hooks_wiring_keeps_other_hooks_and_keys_and_never_duplicates(project):
    settings_path = project / ".claude/settings.json"
    settings_path.parent.mkdir()
    theirs = {"type": "command", "command": "/usr/local/bin/audit-log", "args": ["stop"]}
    settings_path.write_text(json.dumps({
        "model": "opus", "permissions": {"allow": ["Bash(ls:*)"]},
        "hooks": {"Stop": [{"hooks": [theirs]}],
                  "PostToolUse": [{"matcher": "Write", "hooks": [theirs]}]}}))
    forge("init", "--hooks")
    forge("init", "--hooks")
    settings = json.loads(settings_path.read_text())
    assert settings["model"] == "opus"
    assert settings["permissions"]["allow"] == ["Bash(ls:*)"]
    post = settings["hooks"]["PostToolUse"]
    assert post[0] == {"matcher": "Write", "hooks": [theirs]}
    assert len(post) == 2 and hook_settings.is_forge_hook(post[1]["hooks"][0])
    stop = settings["hooks"]["Stop"]
    assert stop[0] == {"hooks": [theirs]}
    assert len(stop) == 2 and hook_settings.is_forge_hook(stop[1]["hooks"][0])


def test_hooks_wiring_replaces_an_older_forge_entry_instead_of_adding_one(project):
    settings_path = project / ".claude/settings.json"
    settings_path.parent.mkdir()
    old = {"type": "command", "command": "/old/venv/bin/python",
           "args": ["-m", "forge_runtime.hooks", "Stop"]}
    settings_path.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [old]}]}}))
    forge("init", "--hooks")
    (group,) = json.loads(settings_path.read_text())["hooks"]["Stop"]
    assert group["hooks"][0]["command"] == sys.executable


@pytest.mark.parametrize("content", ['{"hooks": ', "[1, 2]", '{"hooks": [1]}', "\udcff"])
def test_unusable_settings_give_error_and_fix_and_stay_untouched(project, capsys, content):
    settings_path = project / ".claude/settings.json"
    settings_path.parent.mkdir()
    raw = content.encode("utf-8", "surrogateescape")
    settings_path.write_bytes(raw)
    assert forge("init", "--hooks") == 1
    err = capsys.readouterr().err
    assert "Error: " in err and str(settings_path) in err
    assert "Fix: " in err and "-m json.tool" in err
    assert settings_path.read_bytes() == raw


def test_init_json_reports_each_file_and_the_settings(project, capsys):
    forge("init", "--hooks", "--json")
    payload = json.loads(capsys.readouterr().out)
    actions = {entry["path"]: entry["action"] for entry in payload["files"]}
    assert actions[".forge/workflows/goal.md"] == "installed"
    assert payload["settings"]["changed"] is True
    assert payload["_next_action"] == "forge doctor"


def test_init_for_codex_installs_skills_under_agents_and_merges_its_hooks(project):
    hooks_file = project / ".codex" / "hooks.json"
    hooks_file.parent.mkdir()
    mine = {"type": "command", "command": "my-linter --check"}
    hooks_file.write_text(json.dumps({"hooks": {"Stop": [{"hooks": [mine]}]}, "x": 1}))
    assert forge("init", "--host", "codex") == 0
    bundle = resources.bundle_root()
    skill = project / ".agents" / "skills" / "forge-status" / "SKILL.md"
    assert skill.read_bytes() == (bundle / "skills" / "forge-status" / "SKILL.md").read_bytes()
    assert not (project / ".agents" / "skills" / "goal").exists()
    wired = json.loads(hooks_file.read_text())
    assert wired["x"] == 1 and wired["hooks"]["Stop"][0]["hooks"] == [mine]
    for event in hook_settings.CODEX_EVENTS:
        commands = [hook["command"] for group in wired["hooks"][event]
                    for hook in group["hooks"] if hook_settings.is_forge_hook(hook)]
        assert commands == [f"{sys.executable} -I -m forge_runtime.hooks --host codex {event}"]
    assert "SessionStart" not in wired["hooks"]
    assert not (project / ".claude").exists()  # Codex's kernel layer is its own sandbox
    before = snapshot(project)
    assert forge("init", "--host", "all") == 0  # idempotent, but for Claude Code's layer
    changed = {path for path, content in snapshot(project).items()
               if before.get(path) != content}
    assert changed <= {".claude/settings.json", ".claude/settings.json.forge-record"}


def test_init_for_codex_keeps_an_edited_skill(project):
    forge("init", "--host", "codex")
    skill = project / ".agents" / "skills" / "forge-status" / "SKILL.md"
    skill.write_text("mine\n")
    assert forge("init", "--host", "codex") == 0
    assert skill.read_text() == "mine\n"
    forge("init")  # a Claude-only run keeps the record of the Codex files
    assert forge("init", "--host", "codex", "--force") == 0
    assert skill.read_text() != "mine\n"


def test_forge_refuses_to_ship_a_skill_named_goal(tmp_path):
    (tmp_path / "skills" / "goal").mkdir(parents=True)
    (tmp_path / "skills" / "goal" / "SKILL.md").write_text("---\nname: goal\n---\n")
    with pytest.raises(ValueError, match="native /goal"):
        initializer.agent_skill_files(tmp_path)


def test_the_codex_hook_command_runs_forge_not_a_forge_runtime_planted_in_the_project(project):
    forge("init", "--host", "codex")
    hooks = json.loads((project / ".codex/hooks.json").read_text())["hooks"]
    command = hooks["SessionEnd"][0]["hooks"][0]["command"]
    planted = project / "forge_runtime" / "hooks"
    planted.mkdir(parents=True)
    (project / "forge_runtime" / "__init__.py").write_text("")
    (planted / "__init__.py").write_text("")
    (planted / "__main__.py").write_text("open('PWNED', 'w').write('the agent ran')\n")
    event = {"session_id": "s1", "hook_event_name": "SessionEnd", "reason": "other",
             "transcript_path": str(project / "rollout-x.jsonl"), "cwd": str(project)}
    done = subprocess.run(command, shell=True, input=json.dumps(event), capture_output=True,
                          text=True, cwd=project, timeout=60)
    assert (done.returncode, done.stderr) == (0, "")
    assert not (project / "PWNED").exists()
