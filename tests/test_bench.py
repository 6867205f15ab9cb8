"""The bench works end to end, and the parts its numbers rest on are sound.

No timing is asserted anywhere: CI machines are noisy, and timing targets live in the
bench's own report, not in tests.
"""

from __future__ import annotations

import io
import json
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from bench import imports, targets
from bench.__main__ import QUICK_LEAN, QUICK_LEFT_OUT
from bench.measure import Command, Spread, peak_kib, probe_peak, run_once
from bench.registry import all_scenarios
from bench.snapshot import Snapshot
from bench.suite import INVALID, MEASURED, NOT_AVAILABLE, Outcome, Settings, run_all
from bench.workspace import Workspace

ROOT = Path(__file__).resolve().parent.parent


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory) -> tuple[dict, str, str]:
    out = tmp_path_factory.mktemp("bench-out")
    done = subprocess.run([sys.executable, "-m", "bench", "--quick", "--out", str(out)],
                          cwd=ROOT, capture_output=True, text=True, timeout=480)
    assert done.returncode == 0, done.stderr[-2000:]
    return (json.loads((out / "results.json").read_text()), (out / "RESULTS.md").read_text(),
            done.stdout)


def _check_entry(entry: dict, runs: int) -> None:
    if entry["status"] == MEASURED:
        wall = entry["wall_ms"]
        assert 0 < wall["min"] <= wall["p10"] <= wall["median"] <= wall["p90"] <= wall["max"]
        assert wall["runs"] == runs
        assert entry["ratio_to_floor"] > 0
        assert entry["peak_mb"] > 0
    else:
        assert entry["status"] in (NOT_AVAILABLE, INVALID)
        assert entry["reason"], entry
        assert "wall_ms" not in entry


def test_quick_run_reports_every_scenario_with_numbers_or_a_plain_reason(quick_run):
    results, _, _ = quick_run
    main, lean = results["passes"]
    assert [s["key"] for s in main["scenarios"]] == [s.key for s in all_scenarios()]
    assert [s["key"] for s in lean["scenarios"]] == \
        [s.key for s in all_scenarios() if s.group == "floor" or s.key in QUICK_LEAN]
    for run in (main, lean):
        for entry in run["scenarios"]:
            _check_entry(entry, results["runs"])
        by_key = {s["key"]: s for s in run["scenarios"]}
        assert by_key["floor"]["status"] == by_key["floor-no-site"]["status"] == MEASURED
        assert by_key["floor"]["ratio_to_floor"] == 1.0
        assert run["floor_ms"] > 0 and run["site_ms"] is not None


def test_the_results_name_no_path_of_the_machine(quick_run, tmp_path):
    results, markdown, _ = quick_run
    text = json.dumps(results) + markdown
    for path in (str(ROOT), sys.prefix, str(Path.home()), tempfile.gettempdir() + "/"):
        assert path not in text


def test_quick_run_measures_the_hooks_that_exist_in_every_checkout(quick_run):
    results, _, _ = quick_run
    for run in results["passes"]:
        by_key = {s["key"]: s for s in run["scenarios"]}
        for key in ("pre-tool-use-unguarded", "user-prompt-ordinary", "stop-no-goal"):
            assert by_key[key]["status"] == MEASURED, by_key[key]
            assert by_key[key]["hook"] is True
            assert "imports" in by_key[key]


def test_quick_run_checks_every_target_and_prints_the_table(quick_run):
    results, markdown, stdout = quick_run
    subjects = " ".join(check["subject"] for check in results["passes"][0]["targets"])
    for key, _, _ in targets.FLOOR_LIMITS:
        title = next(s.title for s in all_scenarios() if s.key == key)
        assert title in subjects
    assert "2,000-turn ledger vs a 20-turn one" in subjects
    for check in results["passes"][0]["targets"]:
        assert check["met"] in (True, False, None)
    together = results["concurrency"]
    assert together["processes"] == 8
    if together["status"] == MEASURED:
        assert together["turns_per_second"] > 0
        assert (together["lost"], together["duplicated"], together["chain_verified"]) \
            == (0, 0, True)
    assert "| python3 -c pass |" in markdown
    assert "python3 -S -c pass" in stdout and "Targets (issues 6 and 14):" in stdout


def test_unavailable_features_are_named_not_measured(quick_run):
    results, markdown, _ = quick_run
    for entry in results["passes"][0]["scenarios"]:
        if entry["status"] == NOT_AVAILABLE:
            assert entry["reason"] in markdown
        if entry["key"] in QUICK_LEFT_OUT:
            assert entry["status"] == NOT_AVAILABLE
            assert entry["reason"].startswith("left out of the quick run: ")


# -- the parts the numbers rest on -------------------------------------------------------------

def test_spread_orders_its_figures():
    spread = Spread.of([5.0, 1.0, 3.0, 2.0, 4.0])
    assert (spread.low, spread.median, spread.high, spread.count) == (1.0, 3.0, 5.0, 5)
    assert spread.low <= spread.p10 <= spread.median <= spread.p90 <= spread.high
    assert Spread.of([7.0]).p90 == 7.0


def test_peak_probe_sees_the_process_itself_not_the_big_parent(tmp_path):
    """ru_maxrss would report this test process's 300 MB for a child; the probe must not."""
    ballast = bytearray(300 * 1024 * 1024)
    ballast[::4096] = b"\1" * len(ballast[::4096])
    space = Workspace.create(ROOT, sys.executable, tmp_path)
    small = peak_kib(space.floor("-S"))
    grows = space.floor("-S")
    grows = Command(grows.argv, grows.env, grows.cwd,
                    probe_argv=(*grows.probe_argv[:-1], "b = bytearray(80 * 2**20); b[::4096] = "
                                "b'1' * len(b[::4096])"))
    big = peak_kib(grows)
    assert small < 100 * 1024
    assert big - small > 70 * 1024
    del ballast


def test_peak_probe_keeps_the_exit_code_and_output(tmp_path):
    space = Workspace.create(ROOT, sys.executable, tmp_path)
    command = space.forge("--version")
    assert peak_kib(command) > 0
    run = run_once(command)
    assert run.exit_code == 0 and b"forge" in run.stdout


def test_peak_probe_reports_a_hook_that_ends_its_process_with_os_exit(tmp_path):
    """A hook ends with `os._exit` (no `finally` runs), and the launcher passes `-I -S`."""
    space = Workspace.create(ROOT, sys.executable, tmp_path)
    command = space.hook(space.event("PreToolUse", tool_name="Bash",
                                     tool_input={"command": "rm -rf .git/forge-goals"}))
    peak, run = probe_peak(command)
    assert peak > 0
    assert run.exit_code == 0, run.stderr
    assert b"Bash deletes the goal ledger" in run.stdout


def test_hook_commands_go_through_the_launcher_with_the_hosts_environment(tmp_path):
    space = Workspace.create(ROOT, sys.executable, tmp_path)
    command = space.hook(space.event("Stop", stop_hook_active=False))
    assert command.argv == (str(ROOT / "hooks" / "forge-hook"), "Stop")
    assert command.env["CLAUDE_PROJECT_DIR"] == str(space.root)
    assert command.env["CLAUDE_PLUGIN_ROOT"] == str(ROOT)
    assert command.env["FORGE_PYTHON"] == sys.executable
    assert command.cwd == space.root and (space.root / ".git").is_dir()
    assert json.loads(command.stdin)["hook_event_name"] == "Stop"


SAMPLE_IMPORTTIME = """\
import time: self [us] | cumulative | imported package
import time:       100 |        100 |     _json
import time:       200 |        300 |   json.decoder
import time:       300 |        600 | json
import time:        50 |         50 |       yaml.error
import time:       400 |        450 |     yaml
import time:        10 |        460 |   forge_runtime.goal.store.state_file
import time:        20 |        480 | forge_runtime.hooks.stop
import time:         5 |          5 | site
"""


def test_import_tree_follows_the_interpreters_indentation():
    tree = imports.parse(SAMPLE_IMPORTTIME)
    assert [node.name for node in tree] == ["json", "forge_runtime.hooks.stop", "site"]
    state = tree[1].children[0]
    assert state.name == "forge_runtime.goal.store.state_file"
    assert [child.name for child in state.children] == ["yaml"]
    assert [child.name for child in state.children[0].children] == ["yaml.error"]


def test_import_breakdown_blames_the_forge_module_that_imported():
    edges = imports.pulled_in(imports.parse(SAMPLE_IMPORTTIME), {"site"})
    assert edges == [(imports.BEFORE_FORGE, "json", 600),
                     ("forge_runtime.goal.store.state_file", "yaml", 450)]


def test_import_breakdown_names_lazy_imports_at_run_time():
    tree = imports.parse("import time:       100 |        100 | forge_runtime.hooks.stop\n"
                         "import time:       900 |        900 | jsonschema\n")
    assert imports.pulled_in(tree, set()) == [(imports.LAZY, "jsonschema", 900)]


def test_a_priced_goals_hook_importing_genai_prices_misses_its_target():
    """The priced hooks' import trees are searched for genai-prices' whole stack, nested or
    lazy; a hook whose profile holds any of it misses, one not profiled is unmeasured."""
    tree = imports.parse("import time:       100 |        100 | forge_runtime.hooks.stop\n"
                         "import time:       300 |        300 |     pydantic_core._core\n"
                         "import time:       900 |       1200 |   genai_prices\n"
                         "import time:       900 |        900 | httpx\n")
    assert imports.pricing_imports(tree) == ["genai_prices", "httpx", "pydantic_core._core"]
    assert imports.pricing_imports(imports.parse(SAMPLE_IMPORTTIME)) == []
    checks = targets.import_checks([], {"stop-charge-20": {"pricing_imports": []},
                                        "stop-charge-200": {"pricing_imports": ["httpx"]}})
    assert [check.met for check in checks] == [True, False, None, None]
    assert checks[1].measured == "httpx" and checks[2].measured == "not run"
    assert [key in check.subject for key, check in zip(targets.PRICED_HOOKS, checks,
                                                       strict=True)] == [True] * 4


def test_targets_report_margins_and_say_when_nothing_was_measured(tmp_path):
    settings = Settings(runs=2, warmup=0, memory_runs=1, python=sys.executable,
                        plugin_root=ROOT, fixtures=tmp_path)
    chosen = [s for s in all_scenarios() if s.key in ("floor", "stop-no-goal")]
    outcomes = run_all(chosen, settings, tmp_path, progress=io.StringIO())
    checks = {c.subject: c for c in targets.evaluate(outcomes)}
    no_goal = next(c for s, c in checks.items() if "Stop, session without a goal" in s
                   and "peak" not in s)
    assert no_goal.met in (True, False) and no_goal.measured.endswith("x")
    growth = checks["charging a 2,000-turn ledger vs a 20-turn one"]
    assert growth.met is None and growth.measured == "not run"
    assert all(isinstance(o, Outcome) for o in outcomes)


def _tree(root: Path) -> dict[str, bytes | None]:
    return {str(p.relative_to(root)): (p.read_bytes() if p.is_file() else None)
            for p in sorted(root.rglob("*"))}


def test_snapshot_puts_back_exactly_what_a_run_changed(tmp_path):
    ledger = tmp_path / "ledger"
    (ledger / "records").mkdir(parents=True)
    for seq in range(1, 4):
        (ledger / "records" / f"{seq:08d}.json").write_text(f'{{"seq": {seq}}}')
    (ledger / "head.json").write_text('{"seq": 3}')
    state = tmp_path / "state.md"
    state.write_text("turn_count: 3\n")
    before = _tree(tmp_path)
    snapshot = Snapshot([ledger, state], tmp_path.parent / f"{tmp_path.name}-store")

    (ledger / "records" / "00000004.json").write_text('{"seq": 4}')  # a new record
    replaced = ledger / "head.json.tmp"
    replaced.write_text('{"seq": 4}')
    replaced.replace(ledger / "head.json")  # an atomic rewrite, same size
    (ledger / "turns").mkdir()  # a new directory
    (ledger / "turns" / "abc").write_bytes(b"")
    (ledger / "records" / "00000001.json").unlink()  # a deletion
    with state.open("a") as handle:
        handle.write("more\n")  # an append
    snapshot.restore()
    assert _tree(tmp_path) == before

    state.unlink()
    snapshot.restore()
    assert _tree(tmp_path) == before


def test_the_session_mix_starts_the_hooks_the_hosts_matchers_start():
    """bench/mix.py counts the processes the host would start, from hooks.json itself: the
    guard for every call, reads included (a goal's budget holds for them too)."""
    from bench import mix

    registrations = json.loads((Path(__file__).resolve().parents[1] / "hooks" / "hooks.json")
                               .read_text())["hooks"]
    for tool, tool_input in (("Read", {"file_path": "src/a.py"}), ("Grep", {"pattern": "x"}),
                             ("Glob", {"pattern": "*.py"}), ("Bash", {"command": "ls"}),
                             ("mcp__files__write", {}), ("SomeToolAddedLater", {}),
                             ("Read", {"file_path": "/r/.git/forge-goals/gates/receipt.key"})):
        assert mix.started(registrations, tool, tool_input) == ["PreToolUse"], tool
    assert mix.started(registrations, "Agent", {}) == ["PreToolUse", "PostToolUse"]
    # the matcher rule itself: a name list, and a regular expression
    assert mix.started({"PreToolUse": [{"matcher": "Write|Edit", "hooks": [{}]}]},
                       "Read", {}) == []
    assert mix.started({"PreToolUse": [{"matcher": "^(?!Read$).*", "hooks": [{}]}]},
                       "Read", {}) == []
    assert sum(len(mix.started(registrations, tool, tool_input))
               for tool, tool_input in mix.MIX) == 103
    assert len(mix.MIX) == 100
