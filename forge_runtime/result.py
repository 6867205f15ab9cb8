"""What a forge command returns to whichever surface called it.

Commands compute a `Result`; the CLI, the MCP server and hooks only render it. That keeps
text and JSON carrying the same content and the hint in one place.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from forge_runtime.errors import EXIT_OK
from forge_runtime.hints import Hint


@dataclass
class Result:
    """A command's outcome: human lines, a JSON payload, the hint, and the exit code.

    `data` is a dict (the hint is merged into it as `_next_action`/`_hint`) or a list
    (rendered as a bare JSON array, the hint going to stderr).
    """

    hint: Hint
    lines: list[str] = field(default_factory=list)
    data: dict | list | None = None
    exit_code: int = EXIT_OK

    def json_payload(self) -> dict | list:
        if isinstance(self.data, list):
            return self.data
        return {**(self.data or {}), **self.hint.as_json()}
