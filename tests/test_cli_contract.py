"""Every forge command, in text and JSON mode, ends with a hint that follows the contract.

Commands are discovered from forge's own parser, so a command added later is covered
without editing this file, except for one line in ARGUMENTS: each command must appear
there with the argument lists to run it with (an empty list when it needs none).
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
from pathlib import Path

import pytest

from forge_runtime.cli.main import build_parser
from forge_runtime.hint_audit import json_problems, output_problems
from forge_runtime.surface_audit import hinted, ids_missing

# Command path -> argument lists to run it with, in a fresh git project where `forge init`
# has run. Add your command here when you register it.
ARGUMENTS: dict[tuple[str, ...], list[list[str]]] = {
    (): [[], ["--no-such-flag"]],
    ("init",): [[], ["--hooks"], ["--force"], ["--host", "codex"], ["--host", "all"],
                ["--host", "nano"], ["--statusline"], ["--remove-statusline"]],
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
    ("goal", "report"): [[], ["--nonce", "0" * 32], ["--html"]],
    ("goal", "prices"): [[], ["--compile"]],
    ("goal", "verify-gates"): [[]],
    ("goal", "publish"): [[], ["--restore"]],
    ("goal", "adopt"): [[]],
    ("ledger", "activate"): [["--project", ".", "--state", ".forge/local/state.md"]],
    ("ledger", "charge"): [[], ["--session", "contract-1", "--transcript", "missing.jsonl"]],
    ("ledger", "verify"): [["--project", "."]],
    ("brief", "check"): [[], ["missing.md"], ["-"]],
    ("brief", "freeze"): [[], ["-"]],
    ("brief", "show"): [[]],
    # Refusal paths; the full run: tests/host/test_clarify_runtime.py
    ("clarify",): [["  "], ["x", "--asks", "-1"]],
    # Artifacts: each list runs in text, then in JSON, in this order, in one project, so
    # each must answer alike twice (their state-by-state behaviour: tests/test_artifacts_*).
    ("route",): [["add a --verbose flag"], [""]],
    ("new",): [["prd", "Contract PRD"], ["note"],
               ["evidence", "Evidence for PRD-001", "--verdict", "supports", "--congruence",
                "CL3", "--type", "test"]],
    ("get",): [["PRD-001"], ["PRD-404"]],
    ("list",): [[], ["--kind", "prd", "--status", "draft"]],
    ("tree",): [[]],
    ("link",): [["EVIDENCE-001", "PRD-001"], ["PRD-001", "PRD-404"]],
    ("unlink",): [["PRD-001", "PRD-002"]],
    ("validate",): [["PRD-001"], ["--all", "--ci"], []],
    ("score",): [["PRD-001"]],
    ("activate",): [["PRD-001"]],
    ("supersede",): [["PRD-001", "--by", "PRD-002"]],
    ("deprecate",): [["PRD-001"]],
    ("renew",): [["PRD-001"]],
    ("claim",): [["PRD-001", "--agent", "contract-1"], ["PRD-001", "--agent", "bad name"]],
    ("release",): [["PRD-001", "--agent", "contract-1"]],
    ("claims",): [[]],
    ("dispatch",): [["--agents", "2"]],
    ("mcp",): [["--check"]],  # the served protocol: tests/test_mcp_server.py
    ("statusline",): [[], ["--session", "contract-1"]],
    # in the order the parser lists them: init writes the gates file the others read
    ("gate", "init"): [[], []],
    ("gate", "run"): [["no-such-gate"]],
    ("gate", "status"): [[]],
    ("gate", "evidence"): [["tests", "--for", "PRD-001"]],
    # the full council runs against the real host: tests/host/test_council_host.py
    ("council",): [["Which cache layout?", "--check"], ["Which?", "--record", "missing.json"]],
    # Project scope only: the user and managed scopes are this machine's real files.
    ("sandbox", "enable"): [[]],
    ("sandbox", "status"): [[]],
    ("sandbox", "disable"): [[]],
    ("sandbox", "diff"): [[]],
    # no channel configured here: the sends themselves are tests/test_notify_outbox.py's
    ("notify", "test"): [[]],
}


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
        problems = output_problems(text.stdout + text.stderr)
        assert not problems, f"{shown}: {problems}\n{text.stdout}{text.stderr}"
        assert text.returncode in (0, 1, 2), f"{shown} exited {text.returncode}"

        as_json = _run(project, [*words, "--json"])
        assert "Traceback" not in as_json.stderr, f"{shown} --json crashed:\n{as_json.stderr}"
        problems = json_problems(as_json.stdout, as_json.stderr)
        assert not problems, f"{shown} --json: {problems}\n{as_json.stdout}{as_json.stderr}"
        assert as_json.returncode == text.returncode
        for answer, where in ((text, shown), (as_json, f"{shown} --json")):
            missing = ids_missing(hinted(answer.stdout, answer.stderr), project)
            assert not missing, f"{where} names artifacts that do not exist: {missing}"


@pytest.mark.parametrize("output, problem", [
    ("done it", "does not end with Next:, Wait:, Done. or Error: + Fix:"),
    ("Next: forge doctor\nNext: forge init", "a Next line before the final hint"),
    ("Next: /goal x\nError: stopped\nFix: forge goal status", "a Next line before the final hint"),
    ("Done.\nOr: forge init", "does not end with Next:, Wait:, Done. or Error: + Fix:"),
    ("Next: forge goal status <id>", "`forge goal status <id>` holds a placeholder"),
    ("Next: forge frobnicate", "`forge frobnicate` does not parse as a forge command"),
    ("Error: boom", "Error: without Fix:"),
    ("Fix: forge init", "Fix: without the Error: it repairs"),
])
def test_the_checker_rejects_outputs_that_break_the_contract(output, problem):
    assert problem in output_problems(output)


def test_the_checker_accepts_a_conforming_output():
    assert output_problems("body\nError: bad\nFix: forge init\nOr: forge doctor") == []
    assert json_problems('{"_next_action": null, "_hint": {"marker": "Done"}}', "") == []


@pytest.mark.parametrize("path", COMMANDS, ids=lambda path: " ".join(path) or "forge")
def test_help_of_every_command_ends_with_a_hint(project, path):
    shown = _run(project, [*path, "--help"])
    assert shown.returncode == 0
    assert not output_problems(shown.stdout), shown.stdout


def test_version_is_its_first_line_and_ends_done(project):
    shown = _run(project, ["--version"])
    from forge_runtime import __version__

    assert shown.stdout.splitlines()[0] == f"forge {__version__}"
    assert not output_problems(shown.stdout)


def _subparser(parser: argparse.ArgumentParser, path: tuple[str, ...]):
    """The parser of the command at `path` (the top level for `()`)."""
    for word in path:
        parser = next(action for action in parser._actions
                      if isinstance(action, argparse._SubParsersAction)).choices[word]
    return parser


@pytest.mark.parametrize("path", [path for path in COMMANDS if path], ids=" ".join)
def test_the_parser_of_one_command_line_is_that_commands_part_of_the_whole(path):
    """`forge` registers only the command it is asked to run; its help and its options are
    those it has among all the commands."""
    whole, alone = build_parser(), build_parser([*path, "--json"])
    assert set(_subparser(alone, ()).commands.choices) < set(whole.commands.choices)
    assert _subparser(alone, path).format_help() == _subparser(whole, path).format_help()


@pytest.mark.parametrize("words", [[], ["--json"], ["--help"], ["no-such-command"], ["-h", "x"]])
def test_a_command_line_naming_no_known_command_gets_the_whole_parser(words):
    assert build_parser(words).format_help() == build_parser().format_help()
