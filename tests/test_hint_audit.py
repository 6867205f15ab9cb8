"""`forge hints audit`: finds every hint command it can read ahead of time and reports the
ones with a placeholder or that forge's parser rejects."""

from __future__ import annotations

import json

from goal_support import cli_project_fixture

from forge_runtime import resources
from forge_runtime.cli.main import main
from forge_runtime.hint_audit import (
    audit,
    command_problem,
    document_commands,
    markdown_commands,
    source_commands,
    synopsis_problem,
)


def test_markdown_hint_lines_and_forge_spans_are_found():
    text = "\n".join([
        "Run `forge doctor` first.",                # 1: inline span
        "```",
        "Next: /goal make the test suite pass",     # 3: hint line in a code block
        "  Or: forge init --force",                 # 4: indented fallback
        "```",
        "- Fix: `forge goal verify`",               # 6: list item, backticked
        "| `Next: <command>` | run it |",            # 7: a table describing the markers
        "Use forge to budget goals.",               # 8: the word, not a command
    ])
    assert markdown_commands(text) == [
        (1, "forge doctor"), (3, "/goal make the test suite pass"), (4, "forge init --force"),
        (6, "forge goal verify")]


def test_a_documentation_page_s_commands_and_synopses_are_checked_against_the_parser():
    """README.md and docs/ (tests/test_docs.py): shell lines, printed hints and complete
    spans must parse; a synopsis must name a real command and only options it has."""
    page = "\n".join(["Run `forge frobnicate` or `forge goal status`.",
                      "```sh", "pip install -e . && forge demo --bogus", "```",
                      "```text", "Next: forge gate run docs", "```",
                      "See `forge brief check [FILE|-] [--jsn]` and `forge nope [X]`.",
                      "And `forge council \"<q>\" [--for PRD-001]`, not `forge init [--forc]`.",
                      "", "A span may wrap: `forge goal", "stauts --json`."])
    commands, synopses = document_commands(page)
    assert [(n, c, command_problem(c)) for n, c in commands] == [
        (1, "forge frobnicate", "does not parse as a forge command"),
        (1, "forge goal status", None),
        (3, "forge demo --bogus", "does not parse as a forge command"),
        (6, "forge gate run docs", None),
        (11, "forge goal stauts --json", "does not parse as a forge command")]
    assert [synopsis_problem(s) for _, s in synopses] == [
        "no option --jsn in its --help", "`forge nope` is not a forge command", None,
        "no option --forc in its --help"]          # a prefix of --force is not an option


SOURCE = '''
from forge_runtime import hints
from forge_runtime.errors import ForgeError

FIX = "forge doctor"

def a():
    return hints.next_("forge init", "why", or_=["forge doctor", f"forge {x}"])

def b(name):
    raise ForgeError(f"{name} broke", FIX)

def c(nonce):
    return hints.error("bad", fix=f"forge goal status --nonce {nonce}")

def d(log):
    log.error("not a hint %s", "forge nope")
    return hints.wait("the lock is free")
'''


def test_source_literals_are_found_and_run_time_hints_counted():
    found, dynamic = source_commands(SOURCE)
    assert found == [(8, "forge init"), (8, "forge doctor"), (11, "forge doctor")]
    assert dynamic == 2          # the f-string fallback and the f-string fix


def test_findings_name_the_place_and_the_problem(tmp_path):
    docs = tmp_path / "docs"
    docs.mkdir()
    (docs / "flow.md").write_text("ok: `forge doctor`\nNext: forge goal status <id>\n"
                                  "Fix: forge frobnicate --now\n")
    src = tmp_path / "src"
    src.mkdir()
    (src / "mod.py").write_text('from forge_runtime import hints\n'
                                'H = hints.next_("forge init --bogus")\n')
    result = audit([(docs, "workflows")], src)
    assert (result.checked, result.files) == (4, 2)
    assert [(f.where, f.command, f.problem) for f in result.findings] == [
        ("workflows/flow.md:2", "forge goal status <id>", "holds a placeholder"),
        ("workflows/flow.md:3", "forge frobnicate --now", "does not parse as a forge command"),
        ("forge_runtime/mod.py:2", "forge init --bogus", "does not parse as a forge command"),
    ]


def test_everything_forge_ships_passes_the_audit():
    bundle = resources.bundle_root()
    result = audit([(bundle / "workflows", "workflows"), (bundle / "skills", "skills")],
                   resources.PACKAGE_DIR)
    assert result.checked > 10
    assert result.findings == []


project = cli_project_fixture()


def test_a_stale_installed_copy_is_fixed_by_init_force(project, capsys):
    main(["init"])
    installed = project / ".forge/workflows/clarify.md"
    text = installed.read_text() + "\nNext: forge clarify <brief-id>\n"
    installed.write_text(text)
    capsys.readouterr()
    assert main(["hints", "audit", "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    where = f".forge/workflows/clarify.md:{len(text.splitlines())}"
    assert [f["where"] for f in payload["findings"]] == [where]
    assert payload["_next_action"] == "forge init --force"
    main(["init", "--force"])
    capsys.readouterr()
    assert main(["hints", "audit"]) == 0
    assert capsys.readouterr().out.rstrip().endswith("every enumerable hint command is "
                                                      "complete and parses")


def test_the_live_audit_covers_every_operation_on_every_surface_and_finds_nothing():
    from forge_runtime.operations import OPERATIONS
    from forge_runtime.surface_audit import MODES, audit_live

    live = audit_live()
    assert live.coverage == 1.0 and live.uncovered == []
    assert live.findings == []
    assert set(live.covered) == {operation.name for operation in OPERATIONS}
    assert all(modes == set(MODES) for modes in live.covered.values())


def test_an_operation_without_an_example_is_uncovered_and_fails_the_audit(
        project, capsys, monkeypatch):
    from forge_runtime import surface_audit

    examples = dict(surface_audit.EXAMPLES)
    del examples["dispatch"]
    monkeypatch.setattr(surface_audit, "EXAMPLES", examples)
    assert main(["hints", "audit", "--json"]) == 1
    payload = json.loads(capsys.readouterr().out)
    assert payload["live"]["uncovered"] == ["dispatch"]
    assert payload["live"]["coverage"] < 1
    assert payload["_hint"]["marker"] == "Fix"
