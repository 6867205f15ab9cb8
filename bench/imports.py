"""Where a hook's time goes: the imports it pays for beyond the bare interpreter.

Runs a command with PYTHONPROFILEIMPORTTIME=1 (the same as `python -X importtime`) and,
since the plugin's launchers run Python isolated (`-I` ignores every PYTHON* variable),
with FORGE_PYTHON pointing at a wrapper that adds `-X importtime`; parses the import tree
the interpreter prints on stderr, drops what `python3 -c pass` imports anyway, and names
each module that forge's code pulls in, with the forge module that imported it and its
cumulative time. Import profiling itself slows imports down, so read these as shares, not
as exact costs; each figure is the smallest seen over a few runs.
"""

from __future__ import annotations

import atexit
import functools
import os
import re
import shlex
import shutil
import statistics
import tempfile
from dataclasses import dataclass, field, replace

from bench.measure import Command, run_once

_LINE = re.compile(r"^import time:\s+(\d+) \|\s+(\d+) \| ( *)(\S+)\s*$")
# what pricing may use only when forge-env is built (goal/budget/price_table.py compiles the table
# from it): a hook that imports any of them pays far more than its whole budget
PRICING_ONLY = ("genai_prices", "pydantic", "pydantic_core", "httpx")
BEFORE_FORGE = "(before forge: the interpreter, or -m)"
LAZY = "(a lazy import inside a forge function)"
FORGE = "forge_runtime"


@dataclass
class Node:
    name: str
    self_us: int
    cumulative_us: int
    level: int
    children: list[Node] = field(default_factory=list)


def parse(stderr: str) -> list[Node]:
    """The import tree: top-level imports, each with the imports it caused.

    The interpreter prints a module when its import finishes, children first and one
    indentation step deeper than their parent.
    """
    pending: list[Node] = []
    for line in stderr.splitlines():
        match = _LINE.match(line)
        if not match:
            continue
        self_us, cumulative_us, indent, name = match.groups()
        node = Node(name, int(self_us), int(cumulative_us), len(indent) // 2)
        while pending and pending[-1].level > node.level:
            node.children.insert(0, pending.pop())
        pending.append(node)
    return pending


def _names(nodes: list[Node]) -> set[str]:
    found = set()
    for node in nodes:
        found.add(node.name)
        found |= _names(node.children)
    return found


def _is_forge(node: Node) -> bool:
    return node.name.split(".")[0] == FORGE


def pulled_in(nodes: list[Node], baseline: set[str], importer: str | None = None
              ) -> list[tuple[str, str, int]]:
    """(importer, module, cumulative µs) for each non-forge module forge code imported.

    A top-level import (no importer) that finishes before forge's first module is the
    interpreter's own or `-m`'s; one after it comes from a function of forge importing
    lazily, at run time.
    """
    edges = []
    forge_seen = False
    for node in nodes:
        if node.name in baseline:
            continue
        if _is_forge(node):
            forge_seen = True
            edges.extend(pulled_in(node.children, baseline, node.name))
        else:
            who = importer or (LAZY if forge_seen else BEFORE_FORGE)
            edges.append((who, node.name, node.cumulative_us))
    return edges


def pricing_imports(nodes: list[Node]) -> list[str]:
    """The modules of PRICING_ONLY's packages that an import tree holds."""
    return sorted(name for name in _names(nodes) if name.split(".")[0] in PRICING_ONLY)


def _forge_self_us(nodes: list[Node]) -> int:
    total = 0
    for node in nodes:
        if _is_forge(node):
            total += node.self_us
        total += _forge_self_us(node.children)
    return total


@functools.cache
def _importtime_python(python: str) -> str:
    """An executable that runs `python -X importtime` with its arguments (removed at exit)."""
    where = tempfile.mkdtemp(prefix="forge-bench-importtime-")
    atexit.register(shutil.rmtree, where, True)
    wrapper = os.path.join(where, "python")
    with open(wrapper, "w", encoding="utf-8") as stream:
        stream.write(f'#!/bin/sh\nexec {shlex.quote(python)} -X importtime "$@"\n')
    os.chmod(wrapper, 0o755)
    return wrapper


def _profile(command: Command) -> list[Node]:
    env = {**command.env, "PYTHONPROFILEIMPORTTIME": "1"}
    if "FORGE_PYTHON" in env:  # the launcher runs it with -I, which ignores the variable
        env["FORGE_PYTHON"] = _importtime_python(env["FORGE_PYTHON"])
    run = run_once(replace(command, env=env))
    return parse(run.stderr.decode(errors="replace"))


def baseline(floor: Command) -> set[str]:
    """Modules the bare interpreter imports (site, encodings, ...): not forge's cost."""
    return _names(_profile(floor))


def imports_alone(hook: Command, tree: list[Node], startup: set[str]) -> Command:
    """A process that imports what the hook imported, in the same order, and does nothing
    else: the hook's time minus this one's is the rest (the launcher's shell, the hook's
    own work and I/O, tearing the interpreter down)."""
    roots = [node.name for node in tree if node.name not in startup]
    env = {**hook.env, "PYTHONPATH": hook.env["CLAUDE_PLUGIN_ROOT"]}
    return Command((hook.env["FORGE_PYTHON"], "-c", "\n".join(f"import {r}" for r in roots)),
                   env, hook.cwd)


def split(hook: Command, alone: Command, floor: Command, *, before_each=None,
          runs: int = 10) -> dict:
    """Medians of the hook, its imports alone and the floor, measured interleaved."""
    times: dict[str, list[float]] = {"hook": [], "alone": [], "floor": []}
    for _ in range(runs):
        if before_each:
            before_each()
        for name, command in (("hook", hook), ("alone", alone), ("floor", floor)):
            run = run_once(command)
            if run.exit_code:
                raise RuntimeError(f"{name} exited {run.exit_code}: {run.stderr[-300:]!r}")
            times[name].append(run.wall_ms)
    hook_ms, alone_ms, floor_ms = (statistics.median(times[k]) for k in ("hook", "alone",
                                                                            "floor"))
    return {"hook_over_floor_ms": round(hook_ms - floor_ms, 2),
            "imports_alone_over_floor_ms": round(alone_ms - floor_ms, 2),
            "rest_ms": round(hook_ms - alone_ms, 2)}


def alone_costs(modules: list[str], floor: Command, *, runs: int = 10) -> dict[str, float]:
    """Each module imported alone in a fresh process: median ms over the floor.

    Modules share dependencies (json and dataclasses both need re), so these do not add
    up; each says what dropping that one import from a hot path could save at most.
    """
    commands = {module: replace(floor, argv=(floor.argv[0], "-c", f"import {module}"))
                for module in modules}
    times: dict[str, list[float]] = {name: [] for name in [*commands, ""]}
    for _ in range(runs):
        times[""].append(run_once(floor).wall_ms)
        for module, command in commands.items():
            run = run_once(command)
            if run.exit_code == 0:
                times[module].append(run.wall_ms)
    base = statistics.median(times[""])
    return {module: round(statistics.median(values) - base, 2)
            for module, values in times.items() if module and values}


def breakdown(command: Command, startup: set[str], floor: Command, *, before_each=None,
              runs: int = 3, split_runs: int = 10, top: int = 8) -> dict:
    """What `command` imports beyond `startup` (smallest figures over `runs` profiled runs),
    and how its time over the floor splits between importing and its own work."""
    totals, forge_self, edges, priced = [], [], {}, set()
    tree: list[Node] = []
    for _ in range(runs):
        if before_each:
            before_each()
        tree = _profile(command)
        priced.update(pricing_imports(tree))
        totals.append(sum(node.cumulative_us for node in tree if node.name not in startup))
        forge_self.append(_forge_self_us(tree))
        for importer, module, cost in pulled_in(tree, startup):
            key = (importer, module)
            edges[key] = min(cost, edges.get(key, cost))
    heaviest = sorted(edges.items(), key=lambda item: -item[1])[:top]
    alone = imports_alone(command, tree, startup)
    return {
        **split(command, alone, floor, before_each=before_each, runs=split_runs),
        "imports_ms": round(min(totals) / 1000, 2),
        "forge_code_ms": round(min(forge_self) / 1000, 2),
        "heaviest": [{"module": module, "imported_by": importer, "ms": round(cost / 1000, 2)}
                     for (importer, module), cost in heaviest],
        "pricing_imports": sorted(priced),
    }
