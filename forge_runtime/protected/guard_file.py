"""The project's `.forge/guard.yaml`: its schema, and the file read and checked.

The person's file adds roles and protected paths for the guard, sets a goal's ceilings,
its remote and its sandbox (`goal:`), and where its end is told (`notify:`). It sits
below the guard and the goal so that each reads its own section without reaching the
other. Example:

    roles:
      security-reviewer:
        tools: [Read, Grep, Glob]
        agents: [security-reviewer, acme:security-reviewer]
    protected:
      - secrets/
    goal:
      tranche: {tokens: 3000000, minutes: 240}

The file is validated with jsonschema, and a broken file is an error naming its line; the
guard then denies every guarded role (guard/decide.py). Validating costs yaml and
jsonschema imports (about 75 ms), too much for every tool call, so the validated form is
cached in forge's guard directory keyed by the file's sha256; a tool call then reads two
small files. The cache is checked against the same schema (by `conforms`, on the standard
library) before it is trusted, so a cache written by hand can say no more than a valid
rule file.
"""

import os

from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.protected import paths

INVALID = "FORGE_GUARD_RULES_INVALID"
FIX = "forge guard roles"
CACHE_NAME = "rules-cache.json"
ROLE_NAME = "^[a-z][a-z0-9-]{0,63}$"
_ROLE_NAME_START = frozenset("abcdefghijklmnopqrstuvwxyz")
_ROLE_NAME_CHARS = _ROLE_NAME_START | frozenset("0123456789-")
REMOTE_NAME = "^[A-Za-z0-9][A-Za-z0-9._/-]*$"
_REMOTE_START = frozenset("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789")
_REMOTE_CHARS = _REMOTE_START | frozenset("._/-")
SCHEMA = {
    "type": "object",
    "additionalProperties": False,
    "properties": {
        "roles": {
            "type": "object",
            "propertyNames": {"pattern": ROLE_NAME},
            "additionalProperties": {
                "type": "object",
                "additionalProperties": False,
                "required": ["tools"],
                "properties": {
                    "tools": {"type": "array", "items": {"type": "string", "minLength": 1}},
                    "agents": {"type": "array", "items": {"type": "string", "minLength": 1}},
                    "description": {"type": "string"},
                },
            },
        },
        "protected": {"type": "array", "items": {"type": "string", "minLength": 1}},
        "goal": {
            "type": "object",
            "additionalProperties": False,
            "properties": {
                "require_sandbox": {"type": "boolean"},
                # the git remote each goal's ledger is published on (goal/sync/remote.py)
                "remote": {"type": "string", "pattern": REMOTE_NAME},
                "tranche": {  # per-tranche ceilings beside the 20 turns (goal/rules/activation.py)
                    "type": "object",
                    "additionalProperties": False,
                    "properties": {"tokens": {"type": "integer", "minimum": 1},
                                   "minutes": {"type": "integer", "minimum": 1},
                                   # dollars, priced with genai-prices (goal/budget/pricing.py)
                                   "usd": {"type": "number", "exclusiveMinimum": 0,
                                           "maximum": 1000000}},
                },
                # shares of the plan's windows a goal may reach (goal/budget/plan.py), in percent
                "plan": {
                    "type": "object",
                    "additionalProperties": False,
                    "minProperties": 1,
                    "properties": {name: {"type": "number", "exclusiveMinimum": 0,
                                          "maximum": 100}
                                   for name in ("five_hour", "seven_day", "seven_day_spend")},
                },
                # what a goal does when the host stops for a usage limit (goal/events/after_end.py)
                "after_usage_limit": {"enum": ["stop", "continue"]},
            },
        },
        # how a goal's end reaches the person: notify/config.py checks the section, so a
        # broken one never turns the guard's rules into an error
        "notify": {"type": "object"},
    },
}


def goal_settings(project) -> dict:
    """The `goal:` section of a project's rule file (a Project or `roots.locate()`'s
    strings); raises ForgeError naming the line of a broken file."""
    document = read(paths.rule_file(project), paths.guard_dir(project))
    return dict((document or {}).get("goal") or {})


def read(rule_file: str, cache_dir: str) -> dict | None:
    """The rule file's validated document, None when there is none; raises ForgeError
    (exit 2) naming the line of a broken file."""
    from forge_runtime import safeio
    from forge_runtime.roots import root_of_forge_path

    try:  # a FIFO or a link there is refused, never waited on (safeio.py): the guard denies
        raw = safeio.read_bytes(rule_file, root_of_forge_path(rule_file))
    except FileNotFoundError:
        return None
    except OSError as exc:
        raise _invalid(rule_file, None, f"cannot be read ({exc.strerror})") from None
    from forge_runtime.digest import sha256_hex  # the built-in SHA-256: no `hashlib`

    digest = sha256_hex(raw)
    cached = _read_cache(cache_dir, digest)
    if cached is None:
        cached = validate(raw, rule_file)
        _write_cache(cache_dir, digest, cached)
    return cached


def validate(raw: bytes, rule_file: str) -> dict:
    """Parse and check the rule file; raise ForgeError naming the offending line."""
    from forge_runtime.yamlcheck import checked

    return checked(raw, SCHEMA, lambda line, problem: _invalid(rule_file, line, problem), {})


def _invalid(rule_file: str, line: int | None, problem: str) -> ForgeError:
    where = f"{rule_file}:{line}" if line else rule_file
    return ForgeError(f"guard rule file {where} {problem}", FIX, exit_code=EXIT_REFUSED,
                      code=INVALID, rationale=f"correct {where}, then run this to check it")



def _read_cache(cache_dir: str, digest: str) -> dict | None:
    from forge_runtime import fastjson, safeio

    try:
        cache = fastjson.loads(safeio.read_bytes(os.path.join(cache_dir, CACHE_NAME)))
    except (OSError, ValueError):
        return None
    if isinstance(cache, dict) and cache.get("sha256") == digest \
            and conforms(cache.get("rules"), SCHEMA):
        return cache["rules"]
    return None  # stale, or not what a valid rule file gives: validate the file again


def conforms(value, schema: dict) -> bool:
    """Does `value` satisfy `schema`? The keywords SCHEMA uses, without jsonschema's import
    (about 60 ms): type, enum, properties, additionalProperties, required, minProperties,
    propertyNames' pattern, items, minLength, pattern, minimum, exclusiveMinimum, maximum.
    A keyword it did not know would fail every cache of a file that uses it, and each
    guarded call would validate the file again (as `usd` and `plan` once did)."""
    if "enum" in schema and not any(value == choice and type(value) is type(choice)
                                    for choice in schema["enum"]):
        return False
    kind = schema.get("type")
    if kind == "object":
        if not isinstance(value, dict) or not all(key in value for key in
                                                  schema.get("required", ())) \
                or len(value) < schema.get("minProperties", 0):
            return False
        names = schema.get("propertyNames", {}).get("pattern")
        extra = schema.get("additionalProperties", True)
        for key, item in value.items():
            if not isinstance(key, str) or (names and not _matches(names, key)):
                return False
            inner = schema.get("properties", {}).get(key)
            if inner is None and extra is False:
                return False
            inner = inner if inner is not None else extra
            if isinstance(inner, dict) and not conforms(item, inner):
                return False
        return True
    if kind == "array":
        return isinstance(value, list) and all(conforms(item, schema.get("items", {}))
                                               for item in value)
    if kind == "string":
        return isinstance(value, str) and len(value) >= schema.get("minLength", 0) and \
            ("pattern" not in schema or _matches(schema["pattern"], value))
    if kind in ("integer", "number"):
        allowed = int if kind == "integer" else (int, float)
        return isinstance(value, allowed) and not isinstance(value, bool) and \
            value == value and _within(value, schema)  # NaN is no number of a file
    if kind == "boolean":
        return isinstance(value, bool)
    return kind is None


def _within(value: float, schema: dict) -> bool:
    """The numeric bounds SCHEMA uses."""
    return value >= schema.get("minimum", value) and value <= schema.get("maximum", value) \
        and ("exclusiveMinimum" not in schema or value > schema["exclusiveMinimum"])


def _matches(pattern: str, text: str) -> bool:
    """`re.search(pattern, text)`, but for the patterns SCHEMA names (ROLE_NAME,
    REMOTE_NAME) without importing `re` on every guarded call; like those regexes, a name
    may end in one newline (their `$` matches before it)."""
    name = text[:-1] if text.endswith("\n") else text
    if pattern == ROLE_NAME:
        return 1 <= len(name) <= 64 and name[0] in _ROLE_NAME_START and \
            all(char in _ROLE_NAME_CHARS for char in name[1:])
    if pattern == REMOTE_NAME:
        return len(name) >= 1 and name[0] in _REMOTE_START and \
            all(char in _REMOTE_CHARS for char in name[1:])
    import re

    return re.search(pattern, text) is not None


def _write_cache(cache_dir: str, digest: str, document: dict) -> None:
    """Best effort: a cache that cannot be written only costs the next call a validation."""
    from forge_runtime import fastjson, safeio
    from forge_runtime.roots import root_of_forge_path

    path = os.path.join(cache_dir, CACHE_NAME)
    try:  # noqa: SIM105 (`contextlib` is one more import on the guard's path)
        safeio.replace(path, fastjson.dumps({"sha256": digest, "rules": document}).encode(
            "utf-8"), root_of_forge_path(path), durable=False, create_dirs=True)
    except OSError:
        pass
