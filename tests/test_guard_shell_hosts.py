"""The host CLIs' off switches in Bash (`claude plugin disable forge`, `codex features disable
hooks`), however spelled, and the host's files named beside code forge cannot read."""

from __future__ import annotations

import json
import os
from pathlib import Path

import pytest
import yaml
from guard_support import event, make_project

from forge_runtime.guard import decide
from forge_runtime.protected import paths

CORPUS = yaml.safe_load((Path(__file__).parent / "guard_corpus" / "commands.yaml").read_text())
HOST_GROUP = next(group for name, group in CORPUS["hostile"].items()
                  if name.startswith("the host's off switches"))


@pytest.fixture
def world(tmp_path):
    project = make_project(tmp_path / "proj")
    home = tmp_path / "home"
    plugins = home / ".claude" / "plugins"
    plugins.mkdir(parents=True)
    (plugins / "installed_plugins.json").write_text(json.dumps(
        {"version": 2, "plugins": {"forge@team-tools": [], "other@x": []}}))
    return project, home


def ask(world, command: str, **env):
    project, home = world
    return decide.decide(event("Bash", {"command": command}, project),
                         env={"HOME": str(home), "PATH": os.environ["PATH"], **env})


@pytest.mark.parametrize("command", HOST_GROUP)
def test_every_host_off_switch_of_the_corpus_is_refused(world, command):
    assert ask(world, command) is not None


@pytest.mark.parametrize("command", [
    "claude plugin disable forge@forge",
    "claude plugins disable forge",
    "claude plugin disable --scope user forge@forge",
    "claude plugin disable -s=local FORGE@forge",
    "claude plugin uninstall --scope project forge@anything",
    "claude plugin uninstall forge@forge --prune -y",
    "claude plugin remove forge",
    "claude plugin disable --all",
    "claude plugin disable",
    "claude plugin disable other@x forge@forge",
    "claude plugin disable $UNKNOWN",
    "claude plugin disable fo*",
    "claude plugin $ACTION forge",
    "claude plugin marketplace remove forge",
    "claude plugin marketplace rm team-tools",
    "claude plugin marketplace remove --scope user $M",
    "claude plugin marketplace $SUB team-tools",
    "'claude' 'plugin' 'disable' 'forge@forge'",
    "cl''aude plu\\gin disable forge",
    "/usr/local/lib/node_modules/@anthropic-ai/claude-code/bin/claude plugin disable forge",
    "~/.local/share/venv/lib/python3.11/site-packages/claude_agent_sdk/_bundled/claude "
    "plugin disable forge@forge",
    "sudo -u someone claude plugin disable forge",
    "nohup claude plugin disable forge &",
    "timeout 5 claude plugin disable forge",
    "X=plugin; claude $X disable forge",
    "A='plugin disable'; claude $A forge",
    "f() { claude plugin disable forge; }; f",
    "bash -c 'claude plugin disable forge@forge'",
    "eval 'claude plugin disable forge'",
    "$CLAUDE plugin disable forge",
    "\"$(command -v claude)\" plugin disable forge",
    "./c plugin disable forge",
    "npm exec @anthropic-ai/claude-code -- plugin disable forge",
    "bunx @anthropic-ai/claude-code plugin uninstall forge",
    "node -e \"require('child_process').execSync('claude plugin disable forge')\"",
    "perl -e 'system(\"claude\", \"plugins\", \"uninstall\", \"forge\")'",
    "claude --bare -p hi",
    "claude --safe-mode",
    "claude --restricted -p hi",
    "claude --setting-sources project -p hi",
    "claude --settings=/tmp/s.json -p hi",
    "export CLAUDE_CODE_SIMPLE=1; claude -p hi",
    "CLAUDE_CONFIG_DIR=/tmp/c claude -p hi",
    "claude $PROMPT",
    "codex features disable hooks",
    "codex features disable $F",
    "codex --disable hooks",
    "codex --disable=hooks exec hi",
    "codex -c features.hooks=false",
    "codex -cfeatures.hooks=false exec hi",
    "codex --config 'hooks.state={}' exec hi",
    "codex -c 'projects.\"/p\".trust_level=\"untrusted\"' exec hi",
    "codex -c sandbox_mode=danger-full-access exec hi",
    "codex -c 'shell_environment_policy.set={FORGE_PYTHON=\"x\"}' exec hi",
    "codex --sandbox danger-full-access exec hi",
    "codex -s $MODE exec hi",
    "codex --dangerously-bypass-approvals-and-sandbox",
    "codex --ignore-user-config exec hi",
    "CODEX_HOME=/tmp/c codex exec hi",
    "codex plugin remove forge",
    "codex $SUB",
    "python3 -c 'import os; os.system(\"codex features disable hooks\")'",
    "HOME=/tmp/elsewhere claude -p hi",
    "export HOME=$(mktemp -d); claude -p hi",
    "HOME=/tmp/elsewhere codex exec hi",
    "claude mcp add killer -- sh -c 'pkill -f forge-hook'",
    "claude mcp add-json killer '{\"command\": \"sh\"}'",
    "claude mcp $ACTION killer",
    "forge sandbox disable",
    "forge sandbox disable --scope user",
    "python3 -m forge_runtime sandbox disable",
])
def test_the_host_cli_aimed_at_forge_is_refused(world, command):
    hint = ask(world, command)
    assert hint is not None, command
    rendered = hint.render()
    assert "Fix: " in rendered


def test_a_refusal_says_what_it_protects_and_how_a_person_does_it(world):
    rendered = ask(world, "claude plugin disable forge@forge").render()
    assert f"runs `claude plugin disable forge@forge`: {paths.SWITCH_OFF}" in rendered
    assert "Fix: forge sandbox status" in rendered
    assert "their own terminal" in rendered
    assert "`claude plugin disable <no name>`" in ask(world, "claude plugin disable").render()
    assert "<a name forge cannot know>" in ask(world, "claude plugin disable fo*").render()
    marketplace = ask(world, "claude plugin marketplace rm team-tools").render()
    assert "forge is installed from it" in marketplace


def test_a_host_session_started_with_a_goal_prompt_is_refused(world):
    rendered = ask(world, "claude -p '/goal ship the release'").render()
    assert "runs `claude` with the prompt `/goal ...`" in rendered
    assert "its /goal activates nothing" in rendered
    assert ask(world, "codex exec '  /goal ship it'") is not None
    assert ask(world, "claude -p 'how do we use /goal here'") is None
    assert ask(world, "claude -p '/goals of this sprint, summarised'") is None


@pytest.mark.parametrize("command", [
    "claude --version",
    "claude -v",
    "claude --help",
    "claude plugin list",
    "claude plugin list --json",
    "claude plugins list",
    "claude plugin install other@x",
    "claude plugin update forge@forge",
    "claude plugin enable forge@forge",
    "claude plugin validate .",
    "claude plugin disable other@x",
    "claude plugin uninstall --scope user other@x",
    "claude plugin marketplace list",
    "claude plugin marketplace add ./market",
    "claude plugin marketplace update",
    "claude plugin marketplace remove other-market",
    "claude -p 'write the tests' --output-format json",
    "claude doctor",
    "claude mcp list",
    "claude mcp remove old-server",
    "HOME=~ claude -p hi",
    "git commit -m 'docs: how to plugin disable'",
    "echo claude plugin disable forge",
    "grep -rn 'plugin disable' README.md",
    "codex --version",
    "codex features list",
    "codex features enable goals",
    "codex features disable goals",
    "codex -c model=o3 exec 'fix the tests'",
    "codex --sandbox read-only exec hi",
    "codex exec 'fix the tests'",
    "codex plugin list",
    "forge sandbox enable",
    "forge sandbox status",
    "cat ~/.claude/settings.json",
    "jq . .claude/settings.json",
    "jq '.permissions' ~/.claude/settings.local.json",
    "ls -la ~/.claude/plugins/cache",
    "cat ~/.codex/config.toml",
])
def test_ordinary_use_of_the_host_clis_is_allowed(world, command):
    assert ask(world, command) is None, command


def test_symlinked_settings_are_protected_as_links_and_as_what_they_point_to(world, tmp_path):
    _, home = world
    dotfiles = tmp_path / "dotfiles" / "claude"
    dotfiles.mkdir(parents=True)
    (dotfiles / "settings.json").write_text('{"enabledPlugins": {"forge@forge": true}}')
    claude = home / ".claude"
    (claude / "settings.local.json").symlink_to(dotfiles / "settings.json")
    for command in ("rm ~/.claude/settings.local.json", "unlink ~/.claude/settings.local.json",
                    f"echo '{{}}' > {dotfiles / 'settings.json'}",
                    "mv ~/.claude/settings.local.json ../x"):
        assert ask(world, command) is not None, command
    linked_home = tmp_path / "linked-home"
    linked_home.mkdir()
    (linked_home / ".claude").symlink_to(dotfiles)
    for command in ("rm ~/.claude", "mv ~/.claude ~/.claude.off",
                    "echo '{}' > ~/.claude/settings.json"):
        assert ask(world, command, HOME=str(linked_home)) is not None, command
    assert ask(world, "cat ~/.claude/settings.json", HOME=str(linked_home)) is None
