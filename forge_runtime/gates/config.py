"""`.forge/gates.yaml`: the final gates of a project.

    gates:
      unit-tests:
        command: pytest -q
        boundary: ["src/**", "tests/**", pyproject.toml]
        timeout: 600          # seconds, optional
      lint:
        command: ruff check .
        boundary: ["**/*.py", pyproject.toml]

Globs are relative to the project root with `/` as separator: `*` and `?` stay inside one
path segment, `**` spans any number of them, and a pattern naming a directory covers
everything under it.

Validating costs the yaml and jsonschema imports (tens of milliseconds), which a goal's Stop
hook should not pay on every turn, so the validated form is cached in `.forge/local/gates/`
keyed by the file's sha256: reading it back costs one small JSON file.
"""

from __future__ import annotations

import os

from forge_runtime import fastjson
from forge_runtime.digest import sha256_hex
from forge_runtime.errors import EXIT_USAGE, ForgeError
from forge_runtime.gates import GATES_FILE
from forge_runtime.project import join
from forge_runtime.records import record

INVALID = "FORGE_GATES_INVALID"
MISSING = "FORGE_GATES_MISSING"
CACHE_NAME = "config-cache.json"
NAME_PATTERN = "^[a-z0-9][a-z0-9._-]{0,63}$"
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "required": ["gates"],
    "properties": {
        "gates": {
            "type": "object",
            "minProperties": 1,
            "propertyNames": {"pattern": NAME_PATTERN},
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "required": ["command", "boundary"],
                "properties": {
                    "command": {"type": "string", "minLength": 1},
                    "boundary": {"type": "array", "minItems": 1,
                                 "items": {"type": "string", "minLength": 1,
                                           "not": {"pattern": r"(^|/)\.\.(/|$)"}}},
                    "timeout": {"type": "number", "exclusiveMinimum": 0},
                    "description": {"type": "string"},
                },
            },
        },
    },
}


class Gate(record("Gate", "name command boundary timeout")):
    """One final gate as the project defines it (a record, records.py: a goal's Stop
    imports this module, and `collections` costs it a few milliseconds)."""

    __slots__ = ()

    def spec(self) -> dict:
        """Everything that defines the gate's verdict, as a gates file spells it."""
        return {"command": self.command, "boundary": list(self.boundary),
                "timeout": self.timeout}

    @property
    def definition_digest(self) -> str:
        """What a receipt must have been made under: a changed command, boundary or timeout
        makes every older receipt of this gate stale."""
        return sha256_hex(fastjson.dumps(self.spec(), sort_keys=True).encode("utf-8"))


def gates_path(project):
    """The gates file, a path of the project's kind (project.join)."""
    return join(project.forge_dir, GATES_FILE)


def cache_dir(project):
    return join(project.local_dir, "gates")


def load(project, cached: bool = True) -> list[Gate]:
    """The project's gates, in file order; ForgeError naming the line of a broken file.

    The cache lives in the agent-writable local area: what a goal records as its final
    gates (recorded.py) is read with `cached=False`, from the file itself."""
    path = gates_path(project)
    shown = f"{os.path.basename(project.forge_dir)}/{GATES_FILE}"
    from forge_runtime import safeio

    try:  # the agent may have swapped it for a FIFO or a link (safeio.py)
        raw = safeio.read_bytes(path, project.root)
    except FileNotFoundError:
        raise ForgeError(f"{MISSING}: this project has no {shown}",
                         "forge gate init", exit_code=EXIT_USAGE,
                         rationale="writes an example gates file to edit") from None
    except OSError as exc:
        raise _invalid(shown, None, f"cannot be read ({exc.strerror})") from None
    digest = sha256_hex(raw)
    document = _read_cache(cache_dir(project), digest) if cached else None
    if document is None:
        document = validate(raw, shown)
        _write_cache(cache_dir(project), digest, document)
    return gates_of(document["gates"])


def gates_of(specs: dict) -> list[Gate]:
    """Gates from their specs by name (a gates file's `gates:`, or a goal's record)."""
    return [Gate(name, spec["command"], tuple(spec["boundary"]), spec.get("timeout"))
            for name, spec in specs.items()]


def validate(raw: bytes, shown: str) -> dict:
    """Parse and check a gates file; raise ForgeError naming the offending line."""
    from forge_runtime.yamlcheck import checked

    return checked(raw, SCHEMA, lambda line, problem: _invalid(shown, line, problem))


def _invalid(shown: str, line: int | None, problem: str) -> ForgeError:
    where = f"{shown}:{line}" if line else shown
    return ForgeError(f"{INVALID}: gates file {where} {problem}", "forge gate status",
                      exit_code=EXIT_USAGE, rationale=f"correct {where}, then run this to check it")


def _read_cache(directory, digest: str) -> dict | None:
    from forge_runtime import safeio

    try:
        cache = fastjson.loads(safeio.read_bytes(os.path.join(directory, CACHE_NAME)))
    except (OSError, ValueError):
        return None
    if isinstance(cache, dict) and cache.get("sha256") == digest \
            and isinstance(cache.get("document"), dict):
        return cache["document"]
    return None


def _write_cache(directory, digest: str, document: dict) -> None:
    """Best effort: a cache that cannot be written only costs the next call a validation."""
    from forge_runtime.gates.files import write_json

    try:  # noqa: SIM105 (no `contextlib`: a goal's Stop imports this module)
        write_json(os.path.join(directory, CACHE_NAME),
                   {"sha256": digest, "document": document})
    except OSError:
        pass
