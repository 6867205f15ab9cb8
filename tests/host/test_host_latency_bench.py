"""`python -m bench --host` in its smallest form against the real Claude Code: one session
with forge and one with the bare-Python plugin, every event timed from the host's own log.
No timing is asserted: the numbers are the bench's business."""

from __future__ import annotations

import sys
from pathlib import Path

import pytest

from bench import host_latency, lean
from bench.suite import MEASURED

pytestmark = pytest.mark.host

ROOT = Path(__file__).resolve().parent.parent.parent


def test_host_mode_times_every_event_of_both_plugins_from_the_hosts_log(tmp_path, claude_bin):
    python = lean.create(tmp_path, sys.executable)
    result = host_latency.measure(python, ROOT, tmp_path / "host", sessions=1,
                                  claude_bin=claude_bin)

    assert result["status"] == MEASURED, result.get("reason")
    assert result["host_version"]
    rows = {row["hook"]: row for row in result["rows"]}
    for event, per_session in host_latency.EXPECTED.items():
        row = rows[event]
        assert row["forge_samples"] == row["bare_samples"] == per_session, row
        assert row["forge_median_ms"] > 0 and row["bare_median_ms"] > 0
        assert row["ratio"] > 0
    for tool in ("Read", "Bash", "Write", "Agent"):  # a read starts the guard too
        assert rows[f"PreToolUse:{tool}"]["forge_samples"] == 1
    priced = result["per_hundred"]  # the 100 calls of bench/mix.py at the host's medians
    assert (priced["calls"], priced["processes"]) == (100, 103)
    assert priced["forge_ms"] > 0 and priced["bare_ms"] > 0
    table = "\n".join(host_latency.table(result))
    for event in host_latency.EVENTS:
        assert f"| {event} | " in table
