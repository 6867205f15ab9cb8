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

import hashlib
import json
import re
from dataclasses import dataclass
from pathlib import Path

from forge_runtime.errors import EXIT_REFUSED, ForgeError
from forge_runtime.goal.records import replace_atomically

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

# The goal fields the state mirrors from the ledger.
MIRRORED = ("nonce", "objective", "objective_hash", "activation_id", "activation_count",
            "turn_count", "turn_ceiling", "status")

_TASK = re.compile(r"^\s*[-*] \[( |x|X)\] (.*\S)\s*$")


def invalid(path: Path, why: str) -> ForgeError:
    return ForgeError(f"{path} {why}", "forge goal sync", exit_code=EXIT_REFUSED,
                      code=STATE_INVALID)


@dataclass
class StateFile:
    """A parsed state.md: the goal mapping (or None), and the body text after the fence."""

    goal: dict | None
    body: str

    @property
    def tasks(self) -> list[tuple[bool, str]]:
        """The checklist as (done, text) pairs, in order."""
        found = []
        for line in self.body.splitlines():
            match = _TASK.match(line)
            if match:
                found.append((match.group(1) != " ", match.group(2)))
        return found

    @property
    def next_step(self) -> str | None:
        return next((text for done, text in self.tasks if not done), None)

    def progress(self) -> str:
        """A digest of the checklist and next step: unchanged digest, unchanged progress."""
        text = json.dumps([self.tasks, self.next_step], ensure_ascii=False)
        return hashlib.sha256(text.encode("utf-8")).hexdigest()[:16]


def _split(path: Path, text: str) -> tuple[list[str], str]:
    lines = text.split("\n")
    if not lines or lines[0].strip() != FENCE:
        raise invalid(path, "does not start with a `---` front matter fence")
    for index in range(1, len(lines)):
        if lines[index].strip() == FENCE:
            return lines[1:index], "\n".join(lines[index + 1:])
    raise invalid(path, "has no closing `---` after its front matter")


def _parse_front(path: Path, front: list[str]) -> dict:
    meaningful = [line for line in front if line.strip() and not line.lstrip().startswith("#")]
    prefix = f"{GOAL_KEY}: "
    if len(meaningful) == 1 and meaningful[0].startswith(prefix):
        try:
            return {GOAL_KEY: json.loads(meaningful[0][len(prefix):])}
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


def read(path: Path) -> StateFile:
    """Parse state.md; ForgeError (FORGE_GOAL_STATE_INVALID) when it is not forge's format."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:  # keep the body's bytes
            text = handle.read()
    except FileNotFoundError:
        raise invalid(path, "is missing") from None
    except (OSError, UnicodeDecodeError) as exc:
        raise invalid(path, f"cannot be read ({exc.__class__.__name__})") from None
    front, body = _split(path, text)
    data = _parse_front(path, front)
    goal = data.get(GOAL_KEY)
    if goal is not None and not isinstance(goal, dict):
        raise invalid(path, "has a `goal` that is neither null nor a mapping")
    return StateFile(goal, body)


def validate(path: Path, state: StateFile) -> None:
    """Check the front matter against SCHEMA (CLI and activation; hooks compare to the ledger)."""
    import jsonschema

    try:
        jsonschema.validate({GOAL_KEY: state.goal}, SCHEMA)
    except jsonschema.ValidationError as exc:
        where = "/".join(str(part) for part in exc.absolute_path) or "front matter"
        raise invalid(path, f"front matter is not valid at {where}: {exc.message}") from None


def render(goal: dict | None, body: str) -> str:
    line = json.dumps(goal, ensure_ascii=False, sort_keys=False)
    return f"{FENCE}\n{GOAL_KEY}: {line}\n{FENCE}\n{body}"


def mirror(goal: dict) -> dict:
    """The ledger goal's fields that state.md carries."""
    return {key: goal[key] for key in MIRRORED}


def write_goal(path: Path, goal: dict | None) -> None:
    """Set the front matter's goal fields, keeping the agent's body exactly as it is."""
    if path.exists():
        body = read(path).body
    else:  # activation in a project `forge init` has not set up: start from the template
        from forge_runtime.resources import STATE_TEMPLATE

        body = _split(path, STATE_TEMPLATE.read_text(encoding="utf-8"))[1]
    path.parent.mkdir(parents=True, exist_ok=True)
    text = render(mirror(goal) if goal else None, body)
    replace_atomically(path, text.encode("utf-8"))
