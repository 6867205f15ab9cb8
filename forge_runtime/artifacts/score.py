"""R_eff: how well an artifact is supported, as its weakest link.

    value(e) = verdict(e) * congruence(e) * type(e) * freshness(e)      for each evidence e
    R_eff(a) = min(value(e) for e in evidence(a)  +  R_eff(d) for d in active depends_on(a))

- No evidence: R_eff = 0. Evidence is what `links.evidence_of` finds; superseded and
  deprecated evidence does not count.
- An undeclared or unknown field takes its weakest value, never its strongest: no verdict
  counts as `refutes`, no congruence as `CL0`, no type as `observation`, no valid_until as
  expired.
- A `depends_on` cycle reachable from the artifact (whatever the members' status) is
  reported with its members and gives R_eff = 0.
docs/artifacts.md states these constants; tests/test_docs.py holds the page to the tables.
"""

from __future__ import annotations

import datetime as dt
from dataclasses import dataclass, field

from forge_runtime.artifacts import links
from forge_runtime.artifacts.lifecycle import effective_status, expired
from forge_runtime.artifacts.model import ACTIVE, Artifact

VERDICT = {"supports": 1.0, "weakens": 0.5, "refutes": 0.0}
CONGRUENCE = {"CL3": 1.0, "CL2": 0.8, "CL1": 0.5, "CL0": 0.2}
EVIDENCE_TYPE = {"test": 1.0, "benchmark": 0.9, "measurement": 0.9, "audit": 0.8,
                 "review": 0.7, "observation": 0.5}
EXPIRED_FACTOR = 0.5


def _factor(table: dict[str, float], value: object) -> float:
    """The table's value, or its weakest when the field is missing or unknown."""
    return table.get(value, min(table.values())) if isinstance(value, str) else min(
        table.values())


@dataclass
class Score:
    id: str
    r_eff: float
    evidence: list[dict] = field(default_factory=list)
    dependencies: list[dict] = field(default_factory=list)
    cycle: list[str] = field(default_factory=list)
    weakest: str | None = None

    def as_dict(self) -> dict:
        return {"id": self.id, "r_eff": round(self.r_eff, 4), "weakest": self.weakest,
                "evidence": self.evidence, "dependencies": self.dependencies,
                "cycle": self.cycle}


def evidence_value(evidence: Artifact, today: dt.date) -> dict:
    meta = evidence.meta
    fresh = evidence.valid_until is not None and not expired(evidence.valid_until, today)
    factors = {"verdict": _factor(VERDICT, meta.get("verdict")),
               "congruence": _factor(CONGRUENCE, meta.get("congruence")),
               "type": _factor(EVIDENCE_TYPE, meta.get("type")),
               "freshness": 1.0 if fresh else EXPIRED_FACTOR}
    value = 1.0
    for factor in factors.values():
        value *= factor
    return {"id": evidence.id, "value": round(value, 4), "factors": factors,
            "declared": {name: meta.get(name) for name in ("verdict", "congruence", "type",
                                                             "valid_until")}}


def find_cycle(start: str, graph: dict[str, Artifact]) -> list[str]:
    """The members of a depends_on cycle reachable from `start`, or [] (depth-first)."""
    path: list[str] = []
    on_path: set[str] = set()
    done: set[str] = set()

    def visit(node: str) -> list[str]:
        if node in on_path:
            return path[path.index(node):]
        if node in done or node not in graph:
            return []
        path.append(node)
        on_path.add(node)
        for target in links.targets(graph[node], "depends_on"):
            found = visit(target)
            if found:
                return found
        path.pop()
        on_path.discard(node)
        done.add(node)
        return []

    return visit(start)


def score(artifact: Artifact, graph: dict[str, Artifact], today: dt.date,
          _memo: dict[str, Score] | None = None) -> Score:
    memo = {} if _memo is None else _memo
    if artifact.id in memo:
        return memo[artifact.id]
    cycle = find_cycle(artifact.id, graph)
    if cycle:
        result = Score(artifact.id, 0.0, cycle=cycle,
                       weakest=f"depends_on cycle {' -> '.join([*cycle, cycle[0]])}")
        memo[artifact.id] = result
        return result
    values = [evidence_value(evidence, today) for evidence in links.evidence_of(artifact, graph)]
    dependencies = []
    for target in links.targets(artifact, "depends_on"):
        other = graph.get(target)
        if other is not None and effective_status(other, graph, today) == ACTIVE:
            dependencies.append(score(other, graph, today, memo).as_dict())
    candidates = [(value["value"], value["id"]) for value in values]
    candidates += [(dep["r_eff"], dep["id"]) for dep in dependencies]
    if not values:
        result = Score(artifact.id, 0.0, values, dependencies, weakest="no evidence")
    else:
        lowest, weakest = min(candidates)
        result = Score(artifact.id, lowest, values, dependencies, weakest=weakest)
    memo[artifact.id] = result
    return result
