"""`.forge/local/state.md`: the agent's working copy of its goal, and its checklist.

    ---
    goal: {"nonce": "...", "objective": "...", "turn_count": 3, ...}
    ---
    # Goal
    ## Checklist
    - [x] a done step
    - [ ] the next step

The front matter holds the hook-owned goal fields under one key, `goal` (null when there is
no goal). forge writes it as one line of JSON, which is also valid YAML: hooks read that
form with the json module alone (no yaml import on the hot path) and fall back to YAML only
when a person reformatted it. The body belongs to the agent: the first `- [ ]` line is "the
next step". The agent may edit the body; the goal fields are checked against the ledger on
every turn, so editing them grants nothing and fails closed (consistency.py).
"""

from __future__ import annotations

import os

from forge_runtime import fastjson, safeio
from forge_runtime.digest import sha256_hex
from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.records import record
from forge_runtime.roots import root_of_forge_path

FENCE = "---"
GOAL_KEY = "goal"
STATE_INVALID = "FORGE_GOAL_STATE_INVALID"


SCHEMA = {
    "$schema": "https://json-schema.org/draft/2020-12/schema",
    "title": "forge state.md front matter",
    "type": "object",
    "required": [GOAL_KEY],
    "properties": {
        GOAL_KEY: {
            "oneOf": [
                {"type": "null"},
                {
                    "type": "object",
                    "required": ["nonce", "objective", "objective_hash", "activation_id",
                                 "activation_count", "turn_count", "turn_ceiling", "status"],
                    "properties": {
                        "nonce": {"type": "string", "pattern": "^[0-9a-f]{32}$"},
                        "objective": {"type": "string", "minLength": 1},
                        "objective_hash": {"type": "string", "pattern": "^[0-9a-f]{64}$"},
                        "activation_id": {"type": "string", "minLength": 1},
                        "activation_count": {"type": "integer", "minimum": 1},
                        "turn_count": {"type": "integer", "minimum": 0},
                        "turn_ceiling": {"type": "integer", "minimum": 20},
                        "status": {"enum": ["active", "exhausted", "complete", "cancelled"]},
                        "repository": {"type": "string"},
                    },
                },
            ]
        }
    },
}

# forge's state.md template (`resources.STATE_TEMPLATE`), found without importing
# `resources`, whose pathlib a first `/goal`'s confirming Stop would pay.
TEMPLATE = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.realpath(__file__)))), "templates", "state.md")

# The goal fields the state mirrors from the ledger.
MIRRORED = ("nonce", "objective", "objective_hash", "activation_id", "activation_count",
            "turn_count", "turn_ceiling", "status")

def task(line: str) -> tuple[bool, str] | None:
    """A checklist line `- [ ] text` / `* [x] text` (any leading and trailing whitespace) as
    (done, text), else None. By hand rather than a regular expression: `re` costs every
    charging Stop more than the rest of its parsing."""
    item = line.lstrip()
    if item[:1] not in ("-", "*") or item[1:3] != " [" or item[3:4] not in (" ", "x", "X") \
            or item[4:6] != "] ":
        return None
    text = item[6:].rstrip()
    return (item[3] != " ", text) if text else None


def invalid(path: str | os.PathLike, why: str) -> ForgeError:
    return ForgeError(f"{path} {why}", "forge goal sync", exit_code=EXIT_REFUSED,
                      code=STATE_INVALID)


class StateFile(record("StateFile", "goal body")):
    """A parsed state.md: the goal mapping (or None), and the body text after the fence.
    A record, not a dataclass: `dataclasses` imports `inspect`, a lean interpreter's bare
    start over again, and every charging Stop reads state.md."""

    __slots__ = ()

    @property
    def tasks(self) -> list[tuple[bool, str]]:
        """The checklist as (done, text) pairs, in order."""
        return [found for line in self.body.splitlines() if (found := task(line))]

    @property
    def next_step(self) -> str | None:
        return next((text for done, text in self.tasks if not done), None)

    def progress(self) -> str:
        """A digest of the checklist and next step: unchanged digest, unchanged progress."""
        text = fastjson.dumps([self.tasks, self.next_step], ensure_ascii=False)
        return sha256_hex(text.encode("utf-8"))[:16]


def _split(path: str | os.PathLike, text: str) -> tuple[list[str], str]:
    lines = text.split("\n")
    if not lines or lines[0].strip() != FENCE:
        raise invalid(path, "does not start with a `---` front matter fence")
    for index in range(1, len(lines)):
        if lines[index].strip() == FENCE:
            return lines[1:index], "\n".join(lines[index + 1:])
    raise invalid(path, "has no closing `---` after its front matter")


def _parse_front(path: str | os.PathLike, front: list[str]) -> dict:
    meaningful = [line for line in front if line.strip() and not line.lstrip().startswith("#")]
    prefix = f"{GOAL_KEY}: "
    if len(meaningful) == 1 and meaningful[0].startswith(prefix):
        try:
            return {GOAL_KEY: fastjson.loads(meaningful[0][len(prefix):])}
        except ValueError:
            pass
    import yaml

    try:
        data = yaml.safe_load("\n".join(front))
    except yaml.YAMLError as exc:
        raise invalid(path, f"has front matter that is not YAML ({exc.__class__.__name__})") \
            from None
    if not isinstance(data, dict):
        raise invalid(path, "has front matter that is not a mapping with a `goal` key")
    return data


def read(path: str | os.PathLike) -> StateFile:
    """Parse state.md; ForgeError (FORGE_GOAL_STATE_INVALID) when it is not forge's format,
    or not a regular file reached without a link (a FIFO would block the hook: safeio.py)."""
    try:
        text = safeio.read_text(path, root_of_forge_path(path))  # keeps the body's bytes
    except FileNotFoundError:
        raise invalid(path, "is missing") from None
    except safeio.UnsafePath as exc:
        raise invalid(path, f"cannot be read: {exc.strerror}") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise invalid(path, f"cannot be read ({exc.__class__.__name__})") from None
    front, body = _split(path, text)
    data = _parse_front(path, front)
    goal = data.get(GOAL_KEY)
    if goal is not None and not isinstance(goal, dict):
        raise invalid(path, "has a `goal` that is neither null nor a mapping")
    return StateFile(goal, body)


def validate(path: str | os.PathLike, state: StateFile) -> None:
    """Check the front matter against SCHEMA (CLI and activation; hooks compare to the ledger)."""
    import jsonschema

    try:
        jsonschema.validate({GOAL_KEY: state.goal}, SCHEMA)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(part) for part in exc.absolute_path) or "front matter"
        raise invalid(path, f"front matter is not valid at {where}: {exc.message}") from None


def render(goal: dict | None, body: str) -> str:
    line = fastjson.dumps(goal, ensure_ascii=False)
    return f"{FENCE}\n{GOAL_KEY}: {line}\n{FENCE}\n{body}"


def mirror(goal: dict) -> dict:
    """The ledger goal's fields that state.md carries."""
    return {key: goal[key] for key in MIRRORED}


def write_goal(path: str | os.PathLike, goal: dict | None) -> None:
    """Set the front matter's goal fields, keeping the agent's body exactly as it is."""
    text = render(mirror(goal) if goal else None, _body_to_keep(path))
    # never through a link below the project root: a `.forge/local` swapped for a link out
    # of the sandbox is refused, not written through as the person
    safeio.replace(path, text.encode("utf-8"), root_of_forge_path(path), create_dirs=True)


def _body_to_keep(path: str | os.PathLike) -> str:
    """The agent's body of the state file at `path`; the template's when there is none (a
    project `forge init` has not set up) or what is there is no regular file (a FIFO, a
    link: `write_goal` replaces it whole, which is how `forge goal sync` repairs it)."""
    try:
        return read(path).body
    except ForgeError:
        if not _no_file_at(path):
            raise
    with open(TEMPLATE, encoding="utf-8") as handle:  # forge's own file, not the tree's
        return _split(path, handle.read())[1]


def _no_file_at(path: str | os.PathLike) -> bool:
    """Nothing at `path`, or something forge does not read as a file (safeio.py)."""
    try:
        os.close(safeio.open_regular(path, root_of_forge_path(path)))
    except (FileNotFoundError, safeio.UnsafePath):
        return True
    except OSError:
        return False
    return False
