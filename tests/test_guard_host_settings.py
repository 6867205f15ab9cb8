"""The host's settings files and Codex's config through the file tools: judged on the result.

Every case goes through `decide` with the event a host sends, against a real project and a
scratch home holding the files a fresh install of forge leaves; the verdict is what the
guard answers, the file on disk is what the edit would start from.
"""

from __future__ import annotations

import json
import os

import pytest
from guard_support import event, make_project

from forge_runtime.guard import decide
from forge_runtime.host_contract import claude_code
from forge_runtime.protected import paths

ENABLED = {"enabledPlugins": {"forge@forge": True},
           "permissions": {"allow": ["Bash(git status)"], "deny": ["Read(./secrets/**)"]}}
LAYER = {"sandbox": {"enabled": True, "failIfUnavailable": True,
                     "allowUnsandboxedCommands": False},
         "permissions": {"deny": ["Edit(/.git/forge-goals/**)", "Edit(~/.claude/plugins/**)",
                                  "Read(./secrets/**)"]}}


@pytest.fixture
def world(tmp_path):
    project = make_project(tmp_path / "proj")
    home = tmp_path / "home"
    for path, value in ((home / ".claude" / "settings.json", ENABLED),
                        (project / ".claude" / "settings.json", LAYER),
                        (project / ".claude" / "settings.local.json", ENABLED)):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(value, indent=2) + "\n")
    (home / ".codex").mkdir()
    (home / ".codex" / "config.toml").write_text(
        'model = "o3"\nsandbox_mode = "workspace-write"\n\n[features]\nhooks = true\n\n'
        f'[projects."{project}"]\ntrust_level = "trusted"\n')
    return project, home


def ask(world, tool: str, tool_input: dict, **env):
    project, home = world
    return decide.decide(event(tool, tool_input, project),
                         env={"HOME": str(home), "PATH": os.environ["PATH"], **env})


def write(world, path: str, value) -> object:
    text = value if isinstance(value, str) else json.dumps(value)
    return ask(world, "Write", {"file_path": path, "content": text})


def with_(base: dict, **changes) -> dict:
    result = json.loads(json.dumps(base))
    result.update(changes)
    return result


LOCAL = ".claude/settings.local.json"
USER = "~/.claude/settings.json"
PROJECT = ".claude/settings.json"


@pytest.mark.parametrize("path", [LOCAL, USER])
@pytest.mark.parametrize("settings", [
    with_(ENABLED, enabledPlugins={"forge@forge": False}),
    with_(ENABLED, enabledPlugins={}),
    with_(ENABLED, enabledPlugins={"forge@forge": False, "forge@other": True}),
    with_(ENABLED, enabledPlugins={"forge@forge": 0}),
    with_(ENABLED, enabledPlugins={"forge@forge": "true"}),
    with_(ENABLED, enabledPlugins=[]),
    {"permissions": ENABLED["permissions"]},
    {},
    with_(ENABLED, disableAllHooks=True),
    with_(ENABLED, allowManagedHooksOnly=True),
    with_(ENABLED, env={"FORGE_PYTHON": "/bin/true"}),
    with_(ENABLED, env={"PATH": "/tmp/evil:/usr/bin"}),
    with_(ENABLED, env={"PYTHONPATH": "/tmp/evil"}),
    with_(ENABLED, env={"CLAUDE_PLUGIN_DATA": "/tmp/evil"}),
    with_(ENABLED, env="FORGE_PYTHON=/bin/true"),
    with_(ENABLED, hooks={"SessionStart": [{"hooks": [{"type": "command",
                                                       "command": "pkill -f forge-hook"}]}]}),
    with_(ENABLED, statusLine={"type": "command", "command": "pkill -f forge-hook"}),
    with_(ENABLED, apiKeyHelper="pkill -f forge-hook"),
    with_(ENABLED, enableAllProjectMcpServers=True),
    with_(ENABLED, sandbox={"enabled": False}),
    with_(ENABLED, sandbox={"failIfUnavailable": False}),
    with_(ENABLED, sandbox={"allowUnsandboxedCommands": True}),
    with_(ENABLED, sandbox={"excludedCommands": ["python3"]}),
    with_(ENABLED, sandbox={"filesystem": {"allowWrite": ["~/.claude"]}}),
])
def test_an_edit_that_switches_forge_off_is_refused(world, path, settings):
    hint = write(world, path, settings)
    assert hint is not None
    rendered = hint.render()
    assert paths.SWITCH_OFF in rendered and "Fix: forge sandbox status" in rendered


@pytest.mark.parametrize("settings", [
    with_(LAYER, sandbox={"enabled": False, "failIfUnavailable": True,
                          "allowUnsandboxedCommands": False}),
    with_(LAYER, sandbox={"enabled": True, "allowUnsandboxedCommands": False}),
    with_(LAYER, permissions={"deny": ["Edit(~/.claude/plugins/**)", "Read(./secrets/**)"]}),
    with_(LAYER, permissions={"allow": ["Bash"]}),
    {"permissions": LAYER["permissions"]},
])
def test_weakening_forges_sandbox_layer_is_refused(world, settings):
    assert write(world, PROJECT, settings) is not None


def test_ordinary_permission_edits_go_through(world):
    assert write(world, LOCAL, with_(ENABLED, permissions={
        "allow": ["Bash(git status)", "Bash(npm test)"], "deny": []})) is None
    assert ask(world, "Edit", {"file_path": LOCAL, "old_string": '"Bash(git status)"',
                               "new_string": '"Bash(git status)", "Bash(pytest *)"'}) is None
    assert write(world, PROJECT, with_(LAYER, permissions={
        "deny": [*LAYER["permissions"]["deny"][:2]], "ask": ["Bash(git push)"]})) is None
    assert write(world, USER, with_(ENABLED, model="opus", includeCoAuthoredBy=False,
                                    enabledPlugins={"forge@forge": True, "other@x": False},
                                    env={})) is None
    # an env entry may be removed, a forge that is off may be switched on, hooks back on
    assert write(world, USER, with_(ENABLED, sandbox={"enabled": True})) is None
    assert ask(world, "MultiEdit", {"file_path": LOCAL, "edits": [
        {"old_string": "git status", "new_string": "git diff"}]}) is None


def test_a_file_with_forge_already_off_may_be_edited_elsewhere(world):
    project, _ = world
    off = with_(ENABLED, enabledPlugins={"forge@forge": False})
    (project / ".claude" / "settings.local.json").write_text(json.dumps(off))
    assert write(world, LOCAL, with_(off, permissions={"allow": ["Bash(ls)"]})) is None
    assert write(world, LOCAL, with_(off, enabledPlugins={"forge@forge": True})) is None


def test_an_edit_the_guard_cannot_parse_is_refused(world):
    hint = write(world, LOCAL, '{"enabledPlugins": {"forge@forge": true}')
    assert hint is not None and "unreadable" in hint.render()
    assert write(world, LOCAL, "[1, 2]") is not None
    assert ask(world, "Edit", {"file_path": LOCAL, "old_string": "true",
                               "new_string": "true,,"}) is not None
    assert ask(world, "Edit", {"file_path": LOCAL, "old_string": 1, "new_string": "x"})


def test_a_new_settings_file_is_judged_like_an_edit(world):
    project, _ = world
    (project / ".claude" / "settings.local.json").unlink()
    assert write(world, LOCAL, {"enabledPlugins": {"forge@forge": False}}) is not None
    assert write(world, LOCAL, {"disableAllHooks": True}) is not None
    assert write(world, LOCAL, {"permissions": {"allow": ["Bash(ls)"]}}) is None


def test_the_managed_and_config_dir_scopes_are_covered(world, tmp_path):
    config_dir = tmp_path / "config"
    config_dir.mkdir()
    hint = ask(world, "Write", {"file_path": str(config_dir / "settings.json"),
                                "content": '{"disableAllHooks": true}'},
               CLAUDE_CONFIG_DIR=str(config_dir))
    assert hint is not None
    assert write(world, "/etc/claude-code/managed-settings.json",
                 {"disableAllHooks": True}) is not None
    assert write(world, "/etc/claude-code/managed-settings.d/99-x.json", {}) is not None


def test_a_symlinked_settings_file_is_judged_where_it_points(world, tmp_path):
    _, home = world
    dotfiles = tmp_path / "dotfiles"
    dotfiles.mkdir()
    real = dotfiles / "claude-settings.json"
    os.replace(home / ".claude" / "settings.json", real)
    (home / ".claude" / "settings.json").symlink_to(real)
    assert write(world, str(real), with_(ENABLED, disableAllHooks=True)) is not None
    assert write(world, USER, with_(ENABLED, model="opus")) is None


def test_a_deny_rule_forges_record_names_may_not_be_removed(world):
    project, _ = world
    settings = project / ".claude" / "settings.json"
    settings.write_text(json.dumps({"permissions": {"deny": ["Edit(/custom/**)"]}}))
    (project / ".claude" / "settings.json.forge-record").write_text(
        json.dumps({"added": {"deny": ["Edit(/custom/**)"]}}))
    assert write(world, PROJECT, {"permissions": {"deny": []}}) is not None
    assert write(world, PROJECT + ".forge-record", {}) is not None


@pytest.mark.parametrize("tool_input", [
    {"file_path": "~/.claude/plugins/cache/forge/forge/0.1.0/hooks/forge-hook",
     "content": "exit 0"},
    {"file_path": "~/.claude/plugins/data/forge-forge/forge-env/lib/json.py", "content": ""},
    {"file_path": "~/.claude/plugins/installed_plugins.json", "content": "{}"},
    {"file_path": "~/.codex/hooks.json", "content": "{}"},
    {"file_path": "~/.codex/goals_1.sqlite", "content": ""},
    {"file_path": "~/.codex/goals_9.sqlite-wal", "content": ""},
    {"file_path": "~/.codex/fast.config.toml", "content": ""},
    {"file_path": ".codex/hooks.json", "content": "{}"},
])
def test_the_plugin_tree_and_codex_files_refuse_every_write(world, tool_input):
    assert ask(world, "Write", tool_input) is not None


def test_plugin_data_named_by_the_host_is_protected(world, tmp_path):
    data = tmp_path / "data"
    hint = ask(world, "Write", {"file_path": str(data / "forge-env" / "bin" / "python"),
                                "content": "#!/bin/sh\n"}, CLAUDE_PLUGIN_DATA=str(data))
    assert hint is not None


CODEX = "~/.codex/config.toml"


@pytest.mark.parametrize("change", [
    ("hooks = true", "hooks = false"),
    ("[features]\nhooks = true\n", ""),
    ('sandbox_mode = "workspace-write"', 'sandbox_mode = "danger-full-access"'),
    ('trust_level = "trusted"', 'trust_level = "untrusted"'),
    ('model = "o3"', 'model = "o3"\nnotify = ["pkill", "-f", "forge"]'),
    ('model = "o3"', 'model = "o3"\n[shell_environment_policy]\nset = {FORGE_PYTHON = "x"}'),
    ('model = "o3"', 'model = "o3"\n[hooks.state]\n"x" = {}'),
    ('model = "o3"', 'model = "o3"\n[profiles.p]\nsandbox_mode = "danger-full-access"'),
    ("hooks = true", "hooks = tru"),
])
def test_codex_config_edits_that_switch_forge_off_are_refused(world, change):
    old, new = change
    assert ask(world, "Edit", {"file_path": CODEX, "old_string": old,
                               "new_string": new}) is not None


def test_ordinary_codex_config_edits_go_through(world):
    assert ask(world, "Edit", {"file_path": CODEX, "old_string": 'model = "o3"',
                               "new_string": 'model = "gpt-5"'}) is None
    assert ask(world, "Edit", {"file_path": CODEX, "old_string": '"workspace-write"',
                               "new_string": '"read-only"'}) is None
    assert ask(world, "Write", {"file_path": ".codex/config.toml",
                                "content": 'model = "o3"\n'}) is None


def test_apply_patch_on_a_settings_file_is_judged_on_its_result(world):
    def patch(old: str, new: str) -> str:
        return (f"*** Begin Patch\n*** Update File: {LOCAL}\n@@\n-{old}\n+{new}\n"
                "*** End Patch\n")

    off = ask(world, "apply_patch", {"command": patch('    "forge@forge": true',
                                                      '    "forge@forge": false')})
    assert off is not None
    allow = ask(world, "apply_patch", {"command": patch('      "Bash(git status)"',
                                                        '      "Bash(git status)", "Bash(ls)"')})
    assert allow is None


def test_forges_own_code_is_protected_unless_the_project_is_forge(world, tmp_path):
    plugin = tmp_path / "marketplace-clone"
    (plugin / "forge_runtime" / "guard").mkdir(parents=True)
    target = str(plugin / "forge_runtime" / "guard" / "decide.py")
    assert ask(world, "Write", {"file_path": target, "content": ""},
               CLAUDE_PLUGIN_ROOT=str(plugin)) is not None
    package = os.path.dirname(paths.__file__)
    assert ask(world, "Write", {"file_path": os.path.join(package, "decide.py"),
                                "content": ""}) is not None
    project, _ = world
    assert ask(world, "Write", {"file_path": str(project / "src" / "app.py"), "content": ""},
               CLAUDE_PLUGIN_ROOT=str(project)) is None


def test_an_mcp_tool_naming_the_hosts_files_is_refused(world):
    for value in ("~/.claude/settings.json", ".claude/settings.local.json",
                  "~/.codex/config.toml", "~/.claude/plugins/data/x"):
        assert ask(world, "mcp__files__write_file", {"path": value, "content": "{}"}), value
    assert ask(world, "mcp__files__write_file", {"path": "notes.md", "content": "{}"}) is None


def test_mcp_servers_the_host_starts_may_not_be_added(world):
    project, home = world
    config = {"numStartups": 3, "projects": {str(project): {"hasTrustDialogAccepted": True}}}
    (home / ".claude.json").write_text(json.dumps(config))
    server = {"killer": {"command": "sh", "args": ["-c", "pkill -f forge-hook"]}}
    assert write(world, "~/.claude.json", {**config, "mcpServers": server}) is not None
    per_project = {"numStartups": 3, "projects": {str(project): {"mcpServers": server}}}
    assert write(world, "~/.claude.json", per_project) is not None
    assert write(world, ".mcp.json", {"mcpServers": server}) is not None
    assert write(world, "~/.claude.json", {**config, "numStartups": 4}) is None


@pytest.mark.parametrize("settings", [
    with_(ENABLED, processWrapper=["/tmp/evil/launcher"]),
    with_(ENABLED, proxyAuthHelper="pkill -f forge-hook; echo Basic x"),
    with_(ENABLED, policyHelper="/tmp/evil/policy"),
    with_(ENABLED, sshHostCommands=[{"id": "x", "name": "x", "command": "pkill -f forge"}]),
    with_(ENABLED, additionalMarketplaces={"evil": {"source": {"source": "directory",
                                                               "path": "/tmp/evil"}}}),
    with_(ENABLED, disableCommandPluginSources=False),
])
def test_helpers_and_launchers_the_host_runs_may_not_be_added(world, settings):
    """Claude Code 2.1.332+ runs these (its settings schema says so): an agent that sets
    one gets a command run outside forge's guard, as the user."""
    hint = write(world, LOCAL, settings)
    assert hint is not None and "code the host runs outside forge's guard" in hint.render()


@pytest.mark.parametrize("key", sorted(claude_code.SETTINGS_CODE))
def test_every_settings_key_the_contract_calls_code_is_judged(world, key):
    assert write(world, USER, with_(ENABLED, **{key: "sh -c 'pkill -f forge-hook'"}))


@pytest.mark.parametrize("added", [
    '[plugins."evil@x"]\nenabled = true',
    '[marketplaces.evil]\nsource = "/tmp/evil"',
    'js_repl_node_path = "/tmp/evil/node"',
    '[otel.exporter.otlp-http]\nendpoint = "http://x"\nheaders_helper = "pkill -f forge"',
    '[model_providers.evil]\nname = "x"\nbase_url = "http://127.0.0.1:9"',
])
def test_codex_config_that_runs_code_may_not_be_added(world, added):
    assert ask(world, "Edit", {"file_path": CODEX, "old_string": 'model = "o3"',
                               "new_string": f'model = "o3"\n{added}'}) is not None
