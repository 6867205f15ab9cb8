"""Artifacts at scale: a project with N artifacts, an MCP round trip, concurrent `forge new`.

`build(root, count)` writes `count` artifacts straight to `.forge/artifacts/` (what `forge
new` would write, without paying a process per file): PRDs in chains of ten, each linking
to the one before, and one evidence per ten. `measure` times what is not one CLI process:
a `get` + `new` round trip over a live `forge mcp` stdio session at 2,000 artifacts, and
eight `forge new` processes started at once (every one must succeed, no ID twice).
"""

from __future__ import annotations

import statistics
import subprocess
import sys
import time
from pathlib import Path

from bench.suite import INVALID, MEASURED, Settings
from bench.workspace import Workspace

MCP_COUNT = 2000
NEW_PROCESSES = 8


def build(root: Path, count: int) -> None:
    """Write `count` artifacts as `forge new` would lay them out. The front matter is
    written from a template (PyYAML's pure-Python emitter would cost seconds here); the
    files read back through forge's own parser like any other."""
    from forge_runtime.artifacts import templates

    folder = root / ".forge" / "artifacts"
    folder.mkdir(parents=True, exist_ok=True)
    bodies = {kind: templates.body(kind, "Artifact") for kind in ("prd", "evidence")}
    for number in range(1, count + 1):
        kind = "evidence" if number % 10 == 0 else "prd"
        artifact_id = f"{kind.upper()}-{number:04d}"
        links = "[]"
        if kind == "evidence":
            links = f"\n- relation: informs\n  target: PRD-{number - 1:04d}"
        elif number % 10 != 1:
            links = f"\n- relation: depends_on\n  target: PRD-{number - 1:04d}"
        evidence = ("verdict: supports\ncongruence: CL2\ntype: test\n"
                    if kind == "evidence" else "")
        valid = "'2099-01-01'" if kind == "evidence" else "null"
        (folder / f"{artifact_id}-artifact-{number}.md").write_text(
            f"---\nid: {artifact_id}\nkind: {kind}\ntitle: Artifact {number}\nstatus: draft\n"
            f"created: '2026-01-01T00:00:00Z'\nupdated: '2026-01-01T00:00:00Z'\n"
            f"valid_until: {valid}\naffected_files:\n- src/module_{number % 50}.py\n"
            f"links: {links}\n{evidence}history: []\n---\n{bodies[kind]}", encoding="utf-8")


def _mcp_round_trips(space: Workspace, rounds: int) -> tuple[list[float], list[float]]:
    import anyio
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    params = StdioServerParameters(command=space.python, args=["-m", "forge_runtime", "mcp"],
                                   cwd=str(space.root), env=space.cli_env())
    times: list[float] = []
    gets: list[float] = []

    async def session() -> None:
        async with stdio_client(params) as streams, \
                ClientSession(streams[0], streams[1]) as client:
            await client.initialize()
            await client.call_tool("get", {"id": "PRD-0001"})       # warm: imports, index
            for number in range(rounds):
                start = time.perf_counter()
                got = await client.call_tool("get", {"id": "PRD-0002"})
                gets.append(time.perf_counter() - start)
                made = await client.call_tool("new", {"kind": "note",
                                                       "title": f"Round {number}"})
                times.append(time.perf_counter() - start)
                if got.is_error or made.is_error:
                    raise RuntimeError(f"a call failed: {got.content} {made.content}")

    anyio.run(session)
    return times, gets


def _new_at_once(space: Workspace) -> tuple[float, list[int], list[str]]:
    command = [space.python, "-m", "forge_runtime", "new", "note", "Concurrent", "--json"]
    start = time.perf_counter()
    procs = [subprocess.Popen(command, cwd=space.root, env=space.cli_env(),
                              stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
             for _ in range(NEW_PROCESSES)]
    outputs = [proc.communicate(timeout=120) for proc in procs]
    wall = time.perf_counter() - start
    import json

    ids = [json.loads(out)["id"] for (out, _), proc in zip(outputs, procs, strict=True)
           if proc.returncode == 0]
    return wall, [proc.returncode for proc in procs], ids


def measure(settings: Settings, base: Path, rounds: int) -> dict:
    space = Workspace.create(settings.plugin_root, settings.python, base, "artifacts",
                             settings.fixtures)
    try:
        build(space.root, MCP_COUNT)
        trips, gets = _mcp_round_trips(space, max(rounds * 5, 10))
        walls, failed, duplicated = [], 0, 0
        for _ in range(max(rounds, 2)):
            wall, codes, ids = _new_at_once(space)
            walls.append(wall)
            failed += sum(1 for code in codes if code)
            duplicated += len(ids) - len(set(ids))
    except Exception as exc:  # forge changed under the bench: say so, keep the rest
        return {"status": INVALID, "reason": f"{exc.__class__.__name__}: {exc}"}
    return {"status": MEASURED, "artifacts": MCP_COUNT,
            "mcp_round_trip_ms": round(statistics.median(trips) * 1000, 2),
            "mcp_round_trips": len(trips),
            "mcp_get_ms": round(statistics.median(gets) * 1000, 2),
            "new_processes": NEW_PROCESSES,
            "new_round_wall_ms": round(statistics.median(walls) * 1000, 1),
            "new_rounds": len(walls), "new_failed": failed, "new_duplicated": duplicated}


def line(result: dict) -> str:
    if result.get("status") != MEASURED:
        return f"Artifacts: {result.get('status')}: {result.get('reason')}"
    return (f"Artifacts: MCP get + new round trip over stdio at {result['artifacts']:,} "
            f"artifacts {result['mcp_round_trip_ms']:.1f} ms (median of "
            f"{result['mcp_round_trips']}; target < 20 ms), a get alone "
            f"{result['mcp_get_ms']:.1f} ms (target < 5 ms); {result['new_processes']} "
            f"`forge new` at once: {result['new_round_wall_ms']:.0f} ms per round, "
            f"{result['new_failed']} failed, {result['new_duplicated']} duplicate IDs over "
            f"{result['new_rounds']} rounds")


if __name__ == "__main__":
    sys.exit("run `python -m bench --only artifacts` instead")
