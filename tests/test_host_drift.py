"""The drift check against the real host builds: the newest Claude Code (what `.ci/run`
installs), every build the contract was measured on (2.1.332, 2.1.337) and Codex 0.171.0
have nothing the contract does not classify; a surface taken out of the contract, a read
one the build lacks, or an anchor that finds nothing fails it."""

from __future__ import annotations

import copy
import json
import subprocess
import sys
from pathlib import Path

import pytest

from forge_runtime import hook_settings, host_drift
from forge_runtime.claude_binary import find_claude
from forge_runtime.hooks.dispatch import EVENT_MODULES
from forge_runtime.host_contract import READ, claude_code, codex
from forge_runtime.host_drift import GONE, UNCLASSIFIED, Drift, bun
from forge_runtime.host_drift.claude_code import AnchorLost
from forge_runtime.hostkit.binary import pinned_claude
from forge_runtime.hostkit.codex_binary import find_codex, native

REPO = Path(__file__).resolve().parents[1]


@pytest.fixture(scope="module")
def newest_claude() -> Path:
    return find_claude()


@pytest.fixture(scope="module")
def measured_codex() -> Path:
    return native(find_codex(codex.MEASURED[-1]))


@pytest.fixture(scope="module")
def claude_found(newest_claude) -> tuple[str, dict]:
    """(version, surfaces) of the newest Claude Code, read once for the module."""
    from forge_runtime.host_drift import claude_code as extract

    contract = host_drift.claude_contract()
    return extract.surfaces(newest_claude, {category: tuple(contract[category])
                                            for category in extract.PRESENCE_ONLY})


@pytest.fixture(scope="module")
def codex_found(measured_codex) -> tuple[str, dict]:
    from forge_runtime.host_drift import codex as extract

    contract = host_drift.codex_contract()
    return extract.surfaces(measured_codex, {category: tuple(contract[category])
                                             for category in extract.PRESENCE_ONLY})


def claude_drift(found: tuple[str, dict], contract: dict) -> list[Drift]:
    return host_drift.compare(found[1], contract, found[0], claude_code.MEASURED,
                              host_drift.COMPLETE_CLAUDE)


def test_the_newest_claude_code_has_nothing_the_contract_does_not_classify(newest_claude):
    report = host_drift.check_claude(newest_claude)
    assert report.drift == [] and report.surfaces > 700


@pytest.mark.parametrize("version", claude_code.MEASURED)
def test_each_measured_claude_code_build_has_nothing_unclassified(version):
    report = host_drift.check_claude(pinned_claude(version))
    assert report.version == version and report.drift == []


def test_the_measured_codex_build_has_nothing_unclassified(measured_codex):
    report = host_drift.check_codex(measured_codex)
    assert report.version == codex.MEASURED[-1] and report.drift == []
    assert report.surfaces > 300


@pytest.mark.parametrize("category, name", [
    ("home path", "sessions"), ("home path", "cowork_plugins"), ("hook event", "Interrupt"),
    ("settings", "processWrapper"), ("settings", "disableAllHooks"),
    ("prompt input", "wakeupText"), ("goal_status", "condition,met=*,sentinel=true"),
    ("turn origin", "unknown"),
])
def test_a_surface_removed_from_the_claude_code_contract_fails_the_check(claude_found,
                                                                         category, name):
    contract = copy.deepcopy(host_drift.claude_contract())
    assert claude_drift(claude_found, contract) == []
    del contract[category][name]
    assert Drift(category, name, UNCLASSIFIED) in claude_drift(claude_found, contract)


@pytest.mark.parametrize("category, name", [
    ("hook event", "Interrupt"), ("config key", "js_repl_node_path"),
    ("rollout event", "thread_goal_updated"), ("hook input", "Stop.turn_id"),
])
def test_a_surface_removed_from_the_codex_contract_fails_the_check(codex_found,
                                                                   category, name):
    contract = copy.deepcopy(host_drift.codex_contract())
    del contract[category][name]
    version, found = codex_found
    assert Drift(category, name, UNCLASSIFIED) in host_drift.compare(
        found, contract, version, codex.MEASURED, host_drift.COMPLETE_CODEX)


def test_a_surface_forge_reads_that_the_build_lacks_is_drift(newest_claude):
    contract = copy.deepcopy(host_drift.claude_contract())
    contract["hook input"]["Stop.verdict"] = (READ, claude_code.MEASURED)
    contract["prompt entry"]["typedAtKeyboard"] = (READ, claude_code.MEASURED)
    drift = host_drift.check_claude(newest_claude, contract).drift  # presence read anew
    assert Drift("hook input", "Stop.verdict", GONE) in drift
    assert Drift("prompt entry", "typedAtKeyboard", GONE) in drift


def test_a_newer_build_is_held_to_what_forge_relies_on_as_of_the_newest_measured():
    contract = {"hook input": {"Stop.old": (READ, (claude_code.V332,)),
                               "Stop.relied": (READ, claude_code.MEASURED),
                               "Stop.ignored": ("ignored", claude_code.MEASURED)}}
    found = {"hook input": {"Stop.new"}}
    drift = host_drift.compare(found, contract, "2.1.400", claude_code.MEASURED,
                               ("hook input",))
    assert drift == [Drift("hook input", "Stop.new", UNCLASSIFIED),
                     Drift("hook input", "Stop.relied", GONE)]


def _bundle(tmp_path: Path, source: str, version: str = "2.1.400") -> Path:
    """A file laid out as a Bun executable's module sources are: banner, version, code."""
    path = tmp_path / "claude"
    path.write_bytes(b"\x7fELF...native code...\0// @bun @bytecode\n"
                     b"// (c) Anthropic PBC. All rights reserved.\n\n"
                     + f"// Version: {version}\n{source}".encode() + b"\0more native\0")
    return path


def test_an_anchor_that_finds_nothing_fails_loudly(tmp_path):
    bundle = _bundle(tmp_path, 'var a=["PreToolUse","PostToolUse"];function b(){return 1}')
    with pytest.raises(AnchorLost, match="anchor lost"):
        host_drift.check_claude(bundle)
    plain = tmp_path / "plain"
    plain.write_bytes(b"\x7fELF no modules here\0")
    with pytest.raises(bun.NotABunBuild):
        host_drift.check_claude(plain)


def test_the_command_line_fails_with_a_fix_on_a_build_it_cannot_read(tmp_path):
    bundle = _bundle(tmp_path, "var x=1;")
    done = subprocess.run([sys.executable, "-m", "forge_runtime.host_drift", "--claude",
                           str(bundle)], capture_output=True, text=True, cwd=REPO)
    lines = done.stdout.strip().splitlines()
    assert done.returncode == 1
    assert lines[0].startswith("Error: cannot read") and "anchor lost" in lines[0]
    assert lines[1].startswith("Fix: ${EDITOR:-vi} ") and "host_drift" in lines[1]


def test_the_command_line_passes_the_real_builds(newest_claude, measured_codex):
    done = subprocess.run([sys.executable, "-m", "forge_runtime.host_drift", "--claude",
                           str(newest_claude), "--codex", str(measured_codex)],
                          capture_output=True, text=True, cwd=REPO, timeout=300)
    assert done.returncode == 0, done.stdout + done.stderr
    assert "every surface is classified by forge's host contract" in done.stdout
    assert "Done." in done.stdout.splitlines()


def test_every_fact_is_measured_on_a_version_of_its_contract():
    for contract, measured in ((host_drift.claude_contract(), claude_code.MEASURED),
                               (host_drift.codex_contract(), codex.MEASURED)):
        for category, names in contract.items():
            for name, (_, versions) in names.items():
                assert versions and set(versions) <= set(measured), (category, name)


def test_forge_registers_exactly_the_hook_events_its_contracts_read():
    declared = json.loads((REPO / "hooks" / "hooks.json").read_text())["hooks"]
    assert set(declared) == set(claude_code.HOOK_EVENTS)
    assert set(hook_settings.CODEX_EVENTS) == set(codex.HOOK_EVENTS)
    assert set(claude_code.HOOK_EVENTS) | set(codex.HOOK_EVENTS) <= set(EVENT_MODULES)


def test_a_build_with_no_known_sdk_release_is_an_error_not_a_guess():
    from forge_runtime.claude_binary import ClaudeNotFound

    with pytest.raises(ClaudeNotFound, match="no claude-agent-sdk release"):
        pinned_claude("2.1.0")


def test_the_native_codex_behind_the_npm_launcher_is_found(tmp_path):
    from forge_runtime.hostkit.codex_binary import CodexNotFound

    modules = tmp_path / "node_modules"
    launcher = modules / "@openai" / "codex" / "bin" / "codex.js"
    launcher.parent.mkdir(parents=True)
    launcher.write_text("#!/usr/bin/env node\n")
    (modules / ".bin").mkdir()
    (modules / ".bin" / "codex").symlink_to(launcher)
    with pytest.raises(CodexNotFound):
        native(modules / ".bin" / "codex")
    executable = modules / "@openai" / "codex-linux-x64" / "vendor" / "x86_64" / "bin" / "codex"
    executable.parent.mkdir(parents=True)
    executable.write_bytes(b"\x7fELF")
    assert native(modules / ".bin" / "codex") == executable
    assert native(executable) == executable
