"""Hook latency as the host itself measures it: real Claude Code sessions with forge, against
the same sessions with a plugin whose hooks are a bare Python start.

The bench's passes time each hook as a process the bench starts. This asks the host: it
runs real sessions of the Claude Code CLI (offline, against the host kit's scripted model),
each one prompt in which the model reads a file, runs a shell command, writes a file and
hands a task to a subagent, and reads every hook's duration from the host's own debug log
(bench/hostlog.py). The reference plugin has forge's hooks.json with each command replaced
by `<python> -I -c "<read stdin>"` in exec form, so events, matchers and timeouts are the
same and only what a hook does differs; both run under the same (lean) interpreter, and
sessions alternate, forge first in one round and the reference first in the next, so both
meet the same moments of the machine's load.

Plugin MCP servers are left out of both (`--strict-mcp-config`): forge's own MCP server
would start beside the SessionStart hook and slow it down, which is not the hook's cost.
SessionEnd is not in the table: the host logs no duration for it.
"""

from __future__ import annotations

import json
import statistics
from pathlib import Path

from bench.hostlog import HookRun, hook_runs
from bench.suite import INVALID, MEASURED, NOT_AVAILABLE

BARE_NAME = "bare-python"
BARE_CODE = "import sys; sys.stdin.buffer.read()"
FORGE_NAME = "forge"
# Hooks each session fires per event, with forge's matchers (PreToolUse: every tool, the Read
# too; PostToolUse: only Agent).
EXPECTED = {"SessionStart": 1, "UserPromptSubmit": 1, "PreToolUse": 4, "PostToolUse": 1,
            "Stop": 1}
EVENTS = tuple(EXPECTED)
SESSION_ARGS = ("--permission-mode", "acceptEdits", "--allowedTools", "Bash",
                "--strict-mcp-config")
SESSION_TIMEOUT = 120.0
PROMPT = "Look at notes.txt, check the shell, write out.txt and ask a helper."
# The model's turns, decided by what the conversation already holds (each tool call leaves
# its token in the conversation, and the subagent sees only its own prompt).
SCRIPT = {"name": "bench host latency: Read, Bash, Write, Agent, then finish", "rules": [
    {"name": "subagent answers", "when": {"last_user_text_contains": "subagent-token"},
     "reply": {"text": "Checked."}},
    {"name": "finish", "when": {"conversation_contains": "subagent-token"},
     "reply": {"text": "Done."}},
    {"name": "agent", "when": {"conversation_contains": "write-token"},
     "reply": {"tool_calls": [{"name": "Agent", "input": {
         "description": "check", "prompt": "subagent-token: say that all is well",
         "subagent_type": "general-purpose", "run_in_background": False}}]}},
    {"name": "write", "when": {"conversation_contains": "bash-token"},
     "reply": {"tool_calls": [{"name": "Write", "input": {
         "file_path": "{cwd}/out.txt", "content": "write-token\n"}}]}},
    {"name": "bash", "when": {"conversation_contains": "read-token"},
     "reply": {"tool_calls": [{"name": "Bash", "input": {
         "command": "echo bash-token", "description": "print a token"}}]}},
    {"name": "read", "reply": {"tool_calls": [{"name": "Read", "input": {
        "file_path": "{cwd}/notes.txt"}}]}},
]}
EXPECTED_RULES = ["read", "bash", "write", "agent", "subagent answers", "finish"]


def bare_plugin(dest: Path, python: str, forge_hooks: Path) -> Path:
    """The reference plugin at `dest`: forge's hooks.json with every command replaced by a
    bare start of `python` that reads its stdin and exits 0, in exec form."""
    from forge_runtime.hostkit.projects import write_plugin

    groups = json.loads(forge_hooks.read_text(encoding="utf-8"))["hooks"]
    bare = {event: [{**group, "hooks": [{**hook, "command": python,
                                         "args": ["-I", "-c", BARE_CODE]}
                                        for hook in group["hooks"]]}
                    for group in event_groups]
            for event, event_groups in groups.items()}
    return write_plugin(dest, BARE_NAME, bare)


def session_problem(session, runs: list[HookRun]) -> str | None:
    """What went wrong in one session, or None when it did exactly what the script says."""
    if session.timed_out or session.exit_code != 0:
        return f"the session ended with {session.exit_code} (timed out: {session.timed_out})"
    if session.terminal_reason != "completed":
        return f"the session ended as {session.terminal_reason!r}"
    rules = [request["rule"] for request in session.requests]
    if rules != EXPECTED_RULES:
        return f"the model's turns were {rules}, not {EXPECTED_RULES}"
    failed = [run for run in runs if run.status != 0]
    if failed:
        ended = "timed out" if failed[0].status is None else f"ended {failed[0].status}"
        return f"a {failed[0].name} hook {ended}"
    counts = {event: sum(run.event == event for run in runs) for event in EVENTS}
    if counts != EXPECTED:
        return f"the debug log timed {counts} hooks, not {EXPECTED}"
    return None


def _median(values: list[float]) -> float | None:
    return statistics.median(values) if values else None


def _row(hook: str, forge: list[int], bare: list[int]) -> dict:
    forge_ms, bare_ms = _median(forge), _median(bare)
    both = forge_ms is not None and bare_ms is not None
    return {"hook": hook, "forge_median_ms": forge_ms, "bare_median_ms": bare_ms,
            "ratio": round(forge_ms / bare_ms, 2) if both and bare_ms else None,
            "over_bare_ms": forge_ms - bare_ms if both else None,
            "forge_samples": len(forge), "bare_samples": len(bare)}


def summarise(forge: list[HookRun], bare: list[HookRun]) -> list[dict]:
    """One row per event; an event seen under several matcher queries (PreToolUse of each
    tool) also gets a row per query after it."""
    rows = []
    for event in EVENTS:
        rows.append(_row(event, [r.ms for r in forge if r.event == event],
                         [r.ms for r in bare if r.event == event]))
        queries = list(dict.fromkeys(r.query for r in forge + bare if r.event == event))
        if len(queries) > 1:
            rows += [_row(f"{event}:{query}",
                          [r.ms for r in forge if r.event == event and r.query == query],
                          [r.ms for r in bare if r.event == event and r.query == query])
                     for query in queries]
    return rows


class SessionFailed(Exception):
    """A session did not do what the script says: its numbers would mean nothing."""


def _session(host, name: str, project: Path) -> tuple[list[HookRun], float, str | None]:
    """One session of `host` in `project`: the hooks `name` ran, the wall ms, the version."""
    (project / "notes.txt").write_text("read-token\n", encoding="utf-8")
    session = host.run(PROMPT, cwd=project, args=SESSION_ARGS)
    found = [run for run in hook_runs(session.debug_log) if run.plugin == name]
    problem = session_problem(session, found)
    if problem:
        raise SessionFailed(f"a session with {name}: {problem}")
    return found, session.duration_s * 1000, session.init.get("claude_code_version")


def _host(base: Path, name: str, plugins: dict[str, Path], python: str, claude_bin: Path):
    """A pretend machine loading only plugin `name`, its hooks under `python`."""
    from forge_runtime.hostkit.runner import Host
    from forge_runtime.hostkit.script import Script

    return Host(base / f"host-{name}", Script(SCRIPT), plugin_dirs=[plugins[name]],
                env={"FORGE_PYTHON": python}, timeout=SESSION_TIMEOUT, claude_bin=claude_bin)


def measure(python: str, plugin_root: Path, base: Path, sessions: int, warmup: int = 0,
            claude_bin: Path | None = None) -> dict:
    """`sessions` measured sessions with each plugin (after `warmup` unmeasured ones), the
    hooks under `python`; a dict for the report."""
    from forge_runtime.claude_binary import ClaudeNotFound, find_claude
    from forge_runtime.hostkit.projects import init_git_project

    try:
        claude_bin = claude_bin or find_claude()
    except ClaudeNotFound as exc:
        return {"status": NOT_AVAILABLE, "reason": f"no Claude Code binary: {exc}"}
    base.mkdir(parents=True, exist_ok=True)
    plugins = {FORGE_NAME: plugin_root,
               BARE_NAME: bare_plugin(base / "bare-plugin", python,
                                      plugin_root / "hooks" / "hooks.json")}
    runs = {name: [] for name in plugins}
    walls = {name: [] for name in plugins}
    version = None
    with _host(base, FORGE_NAME, plugins, python, claude_bin) as forge_host, \
            _host(base, BARE_NAME, plugins, python, claude_bin) as bare_host:
        hosts = {FORGE_NAME: forge_host, BARE_NAME: bare_host}
        for number in range(warmup + sessions):
            order = list(plugins) if number % 2 == 0 else list(reversed(plugins))
            for name in order:
                project = init_git_project(base / f"project-{name}-{number}")
                try:
                    found, wall, version = _session(hosts[name], name, project)
                except SessionFailed as exc:
                    return {"status": INVALID, "reason": str(exc)}
                if number >= warmup:
                    runs[name] += found
                    walls[name].append(wall)
        isolation = forge_host.isolation
    return {"status": MEASURED, "sessions": sessions, "warmup": warmup,
            "host_version": version, "isolation": isolation,
            "session_wall_ms": {name: round(statistics.median(w), 1)
                                for name, w in walls.items()},
            "rows": (rows := summarise(runs[FORGE_NAME], runs[BARE_NAME])),
            "per_hundred": per_hundred(rows, plugin_root)}


def per_hundred(rows: list[dict], plugin_root: Path) -> dict:
    """bench/mix.py's 100 tool calls priced at the host's own medians: the hooks the host
    starts for each call (hooks.json's matchers), each at what the host measured for that
    event and tool (the event's median where its session had no such tool, e.g. Edit)."""
    from bench import mix

    registrations = json.loads((plugin_root / "hooks" / "hooks.json").read_text())["hooks"]
    by_hook = {row["hook"]: row for row in rows}

    def priced(registered: dict, column: str) -> tuple[int, float]:
        processes, total = 0, 0.0
        for tool, tool_input in mix.MIX:
            for event in mix.started(registered, tool, tool_input):
                row = by_hook.get(f"{event}:{tool}") or by_hook[event]
                processes, total = processes + 1, total + (row[column] or 0)
        return processes, round(total, 1)

    processes, forge_ms = priced(registrations, "forge_median_ms")
    return {"calls": len(mix.MIX), "processes": processes, "forge_ms": forge_ms,
            "bare_ms": priced(registrations, "bare_median_ms")[1]}


# -- the report's table -----------------------------------------------------------------------

HEADER = ("Hook", "forge median ms", "bare median ms", "x bare", "+ms", "samples")


def _ms(value: float | None) -> str:
    return "-" if value is None else f"{value:.1f}"


def cells(result: dict) -> list[tuple[str, ...]]:
    """The table's rows as text cells (under HEADER)."""
    out = []
    for row in result.get("rows", []):
        ratio = "-" if row["ratio"] is None else f"{row['ratio']:.2f}"
        over = "-" if row["over_bare_ms"] is None else f"{row['over_bare_ms']:+.1f}"
        out.append((row["hook"], _ms(row["forge_median_ms"]), _ms(row["bare_median_ms"]),
                    ratio, over, f"{row['forge_samples']} / {row['bare_samples']}"))
    return out


def line(result: dict) -> str:
    """One sentence for the report: what was run, or why nothing was."""
    if result.get("status") != MEASURED:
        return f"Host-measured latency: {result.get('status')}: {result.get('reason')}"
    walls = result["session_wall_ms"]
    info = result.get("interpreter")
    under = f", hooks under {info['implementation']} {info['python']}" if info else ""
    return (f"Host-measured latency: {result['sessions']} Claude Code "
            f"{result['host_version']} sessions with forge and as many with a bare-Python "
            f"hook plugin (after {result['warmup']} warm-up each{under}), hook durations "
            "from the "
            f"host's debug log (whole ms, spawn to exit; SessionEnd is not timed there); a "
            f"session took {walls[FORGE_NAME]:.0f} ms with forge and "
            f"{walls[BARE_NAME]:.0f} ms with the bare plugin (medians)"
            + _per_hundred_text(result.get("per_hundred")))


def _per_hundred_text(priced: dict | None) -> str:
    if not priced:
        return ""
    return (f"; a session's {priced['calls']} tool calls of bench/mix.py at these medians: "
            f"{priced['processes']} hook processes, {priced['forge_ms']:.0f} ms with forge, "
            f"{priced['bare_ms']:.0f} ms with the bare plugin")


def table(result: dict) -> list[str]:
    """The rows as Markdown (none when nothing was measured)."""
    if not result.get("rows"):
        return []
    out = ["| " + " | ".join(HEADER) + " |", "|---|" + "---:|" * (len(HEADER) - 1)]
    out += ["| " + " | ".join(row) + " |" for row in cells(result)]
    return out
