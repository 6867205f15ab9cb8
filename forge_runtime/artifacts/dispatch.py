"""`forge dispatch --agents N`: split the ready work so parallel agents never touch one file.

Candidates are drafts of a work kind (prd, rfc, adr, problem) nobody holds a live claim
on, in ID order. Each goes:
- to the serial queue when a `depends_on` target is not active yet (it is blocked), or when
  it names no affected files (an overlap cannot be ruled out);
- to the one agent whose assigned files it overlaps (that agent does both, in turn);
- to the serial queue when it overlaps the files of two or more agents;
- otherwise to the least loaded agent.
So no two agents ever hold artifacts whose files overlap: the check is across agents, and
within one agent overlapping work is simply done in order.
"""

from __future__ import annotations

import fnmatch

from forge_runtime.artifacts import links
from forge_runtime.artifacts.model import ACTIVE, DRAFT, Artifact

MAX_AGENTS = 64
# Kinds that are work to do; evidence and notes are records, never dispatched.
WORK_KINDS = ("prd", "rfc", "adr", "problem")


def _norm(path: str) -> str:
    path = path.strip().replace("\\", "/")
    while path.startswith("./"):
        path = path[2:]
    return path.rstrip("/")


def overlaps(left: str, right: str) -> bool:
    """Two affected paths touch: equal, one a directory holding the other, or a glob match."""
    a, b = _norm(left), _norm(right)
    if a == b or a.startswith(b + "/") or b.startswith(a + "/"):
        return True
    return any(ch in pattern for pattern in (a, b) for ch in "*?[") and (
        fnmatch.fnmatch(a, b) or fnmatch.fnmatch(b, a))


def agent_names(count: int) -> list[str]:
    return [f"worker-{number}" for number in range(1, count + 1)]


def plan(drafts: list[Artifact], graph: dict[str, Artifact], status_of, held: dict[str, dict],
         count: int) -> dict:
    """The dispatch plan: per agent its artifacts and files, the serial queue, the skipped."""
    agents = {name: {"agent": name, "artifacts": [], "files": []} for name in agent_names(count)}
    serial: list[dict] = []
    skipped: list[dict] = []
    for artifact in drafts:
        if status_of(artifact) != DRAFT:
            continue
        holder = held.get(artifact.id)
        if holder:
            skipped.append({"id": artifact.id, "reason": f"held by {holder['agent']} until "
                                                         f"{holder['until']}"})
            continue
        waiting = [target for target in links.targets(artifact, "depends_on")
                   if target not in graph or status_of(graph[target]) != ACTIVE]
        if waiting:
            serial.append({"id": artifact.id, "reason": "blocked: waits for " + ", ".join(
                f"{target} ({status_of(graph[target]) if target in graph else 'missing'})"
                for target in waiting)})
            continue
        files = artifact.affected_files
        if not files:
            serial.append({"id": artifact.id, "reason": "names no affected_files, so an "
                                                        "overlap cannot be ruled out"})
            continue
        touching = [name for name, work in agents.items()
                    if any(overlaps(mine, theirs) for mine in files for theirs in work["files"])]
        if len(touching) > 1:
            serial.append({"id": artifact.id, "reason": "its files overlap work given to "
                                                        + " and ".join(touching)})
            continue
        if touching:
            chosen, reason = touching[0], (f"shares files with {touching[0]}'s earlier work, "
                                           "so the same agent does both in turn")
        else:
            chosen = min(agents, key=lambda name: (len(agents[name]["artifacts"]),
                                                   agent_names(count).index(name)))
            reason = "no file overlaps another agent's work"
        agents[chosen]["artifacts"].append({"id": artifact.id, "reason": reason})
        agents[chosen]["files"].extend(file for file in files
                                       if file not in agents[chosen]["files"])
    return {"agents": list(agents.values()), "serial": serial, "skipped": skipped}
