"""What an artifact is: its kinds, statuses, link relations and the record read from a file."""

from __future__ import annotations

import os
import re
from dataclasses import dataclass, field
from pathlib import Path

KINDS = ("prd", "rfc", "adr", "problem", "evidence", "note")
# Kinds whose activation must be earned by evidence (R_eff > 0), not only by validation.
EARNED_KINDS = ("prd", "rfc", "adr")

DRAFT, ACTIVE, STALE = "draft", "active", "stale"
SUPERSEDED, DEPRECATED = "superseded", "deprecated"
STATUSES = (DRAFT, ACTIVE, STALE, SUPERSEDED, DEPRECATED)
TERMINAL = (SUPERSEDED, DEPRECATED)

RELATIONS = ("informs", "based_on", "supersedes", "refines", "depends_on")

VERDICTS = ("supports", "weakens", "refutes")
CONGRUENCE = ("CL0", "CL1", "CL2", "CL3")
EVIDENCE_TYPES = ("test", "benchmark", "measurement", "audit", "review", "observation")

ID_PATTERN = re.compile(r"^([A-Z]+)-(\d{3,})$")
ID_IN_FILE_NAME = re.compile(r"^([A-Z]+-\d{3,})")
ID_IN_TEXT = re.compile(r"\b(?:PRD|RFC|ADR|PROBLEM|EVIDENCE|NOTE)-\d{3,}\b")

# Front matter keys in the order forge writes them; anything else a person adds is kept.
FIELD_ORDER = ("id", "kind", "title", "status", "created", "updated", "valid_until",
               "affected_files", "links", "verdict", "congruence", "type", "forced",
               "history")


def prefix_of(kind: str) -> str:
    """`prd` -> `PRD`: the ID prefix of a kind."""
    return kind.upper()


def kind_of_id(artifact_id: str) -> str | None:
    """The kind an ID names (`PRD-001` -> `prd`), or None when it is not a forge ID."""
    match = ID_PATTERN.match(artifact_id)
    if not match or match.group(1).lower() not in KINDS:
        return None
    return match.group(1).lower()


@dataclass
class Artifact:
    """One artifact file as read: its front matter, its body, and why it could not be read.

    `status` is the status forge recorded (the last entry of `history`, draft before any);
    `written_status` is what the file's `status:` line says. They differ only when someone
    edited the line by hand, which `validate` reports and no transition trusts.
    """

    where: str | Path
    meta: dict = field(default_factory=dict)
    body: str | None = None
    unreadable: str | None = None

    @property
    def path(self) -> Path:
        """The file, as a Path made on first use (a listing of thousands never needs one)."""
        if not isinstance(self.where, Path):
            self.where = Path(self.where)
        return self.where

    @property
    def file_name(self) -> str:
        return os.path.basename(self.where)

    @property
    def id(self) -> str:
        value = self.meta.get("id")
        if isinstance(value, str):
            return value
        match = ID_IN_FILE_NAME.match(self.file_name)
        return match.group(1) if match else self.file_name.removesuffix(".md")

    @property
    def kind(self) -> str:
        value = self.meta.get("kind")
        return value if isinstance(value, str) else (kind_of_id(self.id) or "")

    @property
    def title(self) -> str:
        value = self.meta.get("title")
        return value if isinstance(value, str) else ""

    @property
    def history(self) -> list[dict]:
        value = self.meta.get("history")
        return [entry for entry in value if isinstance(entry, dict)] if isinstance(
            value, list) else []

    @property
    def status(self) -> str:
        history = self.history
        return str(history[-1].get("to")) if history else DRAFT

    @property
    def written_status(self) -> object:
        return self.meta.get("status")

    @property
    def links(self) -> list[dict]:
        value = self.meta.get("links")
        return [link for link in value if isinstance(link, dict)] if isinstance(
            value, list) else []

    @property
    def affected_files(self) -> list[str]:
        value = self.meta.get("affected_files")
        return [str(item) for item in value] if isinstance(value, list) else []

    @property
    def valid_until(self) -> str | None:
        value = self.meta.get("valid_until")
        return str(value) if value not in (None, "") else None


class Graph(dict):
    """ID -> artifact, with the reverse links worked out once, on first use: every read of
    one artifact's evidence would otherwise scan the whole graph (quadratic over a list)."""

    _incoming: dict[str, list[Artifact]] | None = None

    def incoming(self) -> dict[str, list[Artifact]]:
        """Target ID -> the artifacts that link to it, in ID order."""
        if self._incoming is None:
            found: dict[str, list[Artifact]] = {}
            for artifact in self.values():
                for target in dict.fromkeys(str(link.get("target")) for link in artifact.links):
                    found.setdefault(target, []).append(artifact)
            self._incoming = found
        return self._incoming
