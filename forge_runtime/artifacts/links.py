"""Links between artifacts: adding, removing, and the graph questions the rest asks.

A link lives in its source's front matter as `{relation, target}`. Evidence attaches to an
artifact through `informs` (evidence -> artifact) or `based_on` (artifact -> evidence);
`depends_on` makes one artifact's score and readiness wait for another's.
"""

from __future__ import annotations

from forge_runtime.artifacts.model import TERMINAL, Artifact, Graph

EVIDENCE_RELATIONS = ("informs", "based_on")


def targets(artifact: Artifact, relation: str | None = None) -> list[str]:
    return [str(link.get("target")) for link in artifact.links
            if relation is None or link.get("relation") == relation]


def evidence_of(artifact: Artifact, graph: dict[str, Artifact]) -> list[Artifact]:
    """The evidence attached to `artifact`, in ID order, superseded and deprecated left out."""
    found: dict[str, Artifact] = {}
    for relation in EVIDENCE_RELATIONS:
        for target in targets(artifact, relation):
            other = graph.get(target)
            if other is not None and other.kind == "evidence":
                found[other.id] = other
    sources = (graph.incoming().get(artifact.id, []) if isinstance(graph, Graph)
               else graph.values())
    for other in sources:
        if other.kind == "evidence" and other.id != artifact.id and any(
                link.get("target") == artifact.id and link.get("relation") in EVIDENCE_RELATIONS
                for link in other.links):
            found[other.id] = other
    return [found[key] for key in sorted(found) if found[key].status not in TERMINAL]


def add(artifact: Artifact, target: str, relation: str) -> bool:
    """Add a link; False when it was already there (linking twice changes nothing)."""
    wanted = {"relation": relation, "target": target}
    links = artifact.links
    if wanted in links:
        return False
    artifact.meta["links"] = [*links, wanted]
    return True


def remove(artifact: Artifact, target: str, relation: str | None) -> int:
    """Remove links to `target` (of one relation, or all); how many went."""
    links = artifact.links
    kept = [link for link in links if not (link.get("target") == target and (
        relation is None or link.get("relation") == relation))]
    artifact.meta["links"] = kept
    return len(links) - len(kept)
