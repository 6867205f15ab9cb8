"""Every forge command, in text and JSON mode, ends with a hint that follows the contract.

Commands are discovered from forge's own parser, so a command added later is covered
without editing this file, except for one line in ARGUMENTS: each command must appear
there with the argument lists to run it with (an empty list when it needs none).
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forge_runtime import hints
from forge_runtime.cli.main import build_parser, parses

# Command path -> argument lists to run it with, in a fresh git project where `forge init`
# has run. Add your command here when you register it.
ARGUMENTS: dict[tuple[str, ...], list[list[str]]] = {
    (): [[], ["--no-such-flag"]],
    ("init",): [[], ["--hooks"], ["--force"]],
    ("doctor",): [[]],
    ("hints",): [[]],
    ("hints", "audit"): [[]],
    ("guard", "roles"): [[]],
    ("guard", "check"): [["--role", "clarifier", "--tool", "Write"], ["--tool", "Read"]],
    ("mode", "enter"): [["clarifier", "--session", "contract-1"], ["nobody", "--session", "x"]],
    ("mode", "exit"): [["--session", "contract-1"]],
    ("mode", "status"): [[]],
    ("demo",): [["--keep", "."]],  # refusal path; full run: tests/host/test_demo_session.py
    # With no goal yet: the states with a goal are the goal ledger's own tests.
    ("goal", "status"): [[], ["--nonce", "00000000000000000000000000000000"]],
    ("goal", "sync"): [[]],
    ("goal", "verify"): [[]],
    ("goal", "history"): [[]],
    ("ledger", "activate"): [["--project", ".", "--state", ".forge/local/state.md"]],
    ("ledger", "charge"): [[], ["--session", "contract-1", "--transcript", "missing.jsonl"]],
    ("ledger", "verify"): [["--project", "."]],
}

TERMINAL = {hints.NEXT, hints.WAIT, hints.DONE, hints.FIX}


def _subcommands(parser: argparse.ArgumentParser, path: tuple[str, ...] = ()):
    """Every command path the parser accepts, with whether it runs something itself."""
    yield path, parser.get_default("handler") is not None or not path
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, child in action.choices.items():
                yield from _subcommands(child, (*path, name))


COMMANDS = [path for path, runnable in _subcommands(build_parser()) if runnable]


def _run(project: Path, words: list[str]) -> subprocess.CompletedProcess:
    env = {**os.environ, "CLAUDE_PROJECT_DIR": str(project), "NO_COLOR": "1"}
    return subprocess.run([sys.executable, "-m", "forge_runtime", *words], cwd=project,
                          env=env, capture_output=True, text=True, timeout=120)


def _check_commands(commands: list[str]) -> list[str]:
    problems = []
    for command in commands:
        if hints.has_placeholder(command):
            problems.append(f"placeholder in {command!r}")
        if command.split()[:1] == ["forge"] and not parses(command):
            problems.append(f"{command!r} does not parse with forge's parser")
    return problems


def contract_problems_text(output: str) -> list[str]:
    found = hints.parse_lines(output)
    markers = [marker for marker, _ in found]
    problems = []
    if not TERMINAL & set(markers):
        problems.append("no Next:, Wait:, Done. or Fix: marker")
    if markers.count(hints.NEXT) > 1:
        problems.append("more than one Next:")
    if "Error" in markers and hints.FIX not in markers:
        problems.append("Error: without Fix:")
    commands = [rest for marker, rest in found if marker in (hints.NEXT, hints.OR, hints.FIX)]
    return problems + _check_commands(commands)


def contract_problems_json(stdout: str, stderr: str) -> list[str]:
    try:
        payload = json.loads(stdout)
    except ValueError:
        return [f"stdout is not JSON: {stdout[:200]!r}"]
    if isinstance(payload, list):
        return contract_problems_text(stderr)
    hint = payload.get("_hint")
    if not isinstance(hint, dict) or "_next_action" not in payload:
        return ["JSON lacks _next_action or _hint"]
    if hint.get("marker") not in TERMINAL:
        return [f"_hint marker is {hint.get('marker')!r}"]
    commands = [c for c in [payload["_next_action"], *hint.get("or", [])] if c]
    return _check_commands(commands)


@pytest.fixture(scope="module")
def project(tmp_path_factory) -> Path:
    root = tmp_path_factory.mktemp("contract")
    subprocess.run(["git", "init", "-q", str(root)], check=True)
    assert _run(root, ["init"]).returncode == 0
    return root


def test_every_registered_command_is_in_the_argument_table():
    missing = [" ".join(path) for path in COMMANDS if path not in ARGUMENTS]
    assert not missing, (
        f"add these commands to ARGUMENTS in tests/test_cli_contract.py with the arguments "
        f"to run them with (an empty list when they need none): {missing}")


def test_the_table_names_only_commands_that_exist():
    assert set(ARGUMENTS) <= set(COMMANDS)


@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: " ".join(path) or "forge")
def test_every_command_follows_the_hint_contract_in_text_and_json(project, path):
    assert path in ARGUMENTS, f"add {' '.join(path)!r} to ARGUMENTS in this file"
    for extra in ARGUMENTS[path]:
        words = [*path, *extra]
        text = _run(project, words)
        shown = f"forge {' '.join(words)}"
        assert "Traceback" not in text.stderr, f"{shown} crashed:\n{text.stderr}"
        problems = contract_problems_text(text.stdout + text.stderr)
        assert not problems, f"{shown}: {problems}\n{text.stdout}{text.stderr}"
        assert text.returncode in (0, 1, 2), f"{shown} exited {text.returncode}"

        as_json = _run(project, [*words, "--json"])
        assert "Traceback" not in as_json.stderr, f"{shown} --json crashed:\n{as_json.stderr}"
        problems = contract_problems_json(as_json.stdout, as_json.stderr)
        assert not problems, f"{shown} --json: {problems}\n{as_json.stdout}{as_json.stderr}"
        assert as_json.returncode == text.returncode


@pytest.mark.parametrize("output, problem", [
    ("done it", "no Next:, Wait:, Done. or Fix: marker"),
    ("Next: forge doctor\nNext: forge init", "more than one Next:"),
    ("Next: forge goal status <id>", "placeholder in 'forge goal status <id>'"),
    ("Next: forge frobnicate", "'forge frobnicate' does not parse with forge's parser"),
    ("Error: boom", "Error: without Fix:"),
])
def test_the_checker_rejects_outputs_that_break_the_contract(output, problem):
    assert problem in contract_problems_text(output)


def test_the_checker_accepts_a_conforming_output():
    assert contract_problems_text("body\nError: bad\nFix: forge init\nOr: forge doctor") == []
    assert contract_problems_json('{"_next_action": null, "_hint": {"marker": "Done"}}', "") == []


@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: " ".join(path) or "forge")
def test_help_of_every_command_ends_with_a_hint(project, path):
    shown = _run(project, [*path, "--help"])
    assert shown.returncode == 0
    assert not contract_problems_text(shown.stdout), shown.stdout


def test_version_is_its_first_line_and_ends_done(project):
    shown = _run(project, ["--version"])
    from forge_runtime import __version__

    assert shown.stdout.splitlines()[0] == f"forge {__version__}"
    assert not contract_problems_text(shown.stdout)
