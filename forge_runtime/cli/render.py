"""Print a `Result` as text or JSON, with the hint where the contract puts it."""

from __future__ import annotations

import json
import os
import sys
from typing import TextIO

from forge_runtime.hints import Hint
from forge_runtime.result import Result

_COLOURS = {"Next": "32", "Or": "36", "Wait": "33", "Done.": "32", "Error": "31", "Fix": "33"}


def use_colour(stream: TextIO) -> bool:
    """Colour only on a terminal, and never when NO_COLOR is set (no-color.org)."""
    return "NO_COLOR" not in os.environ and hasattr(stream, "isatty") and stream.isatty()


def _paint(line: str, colour: bool) -> str:
    if not colour:
        return line
    for marker, code in _COLOURS.items():
        if line.startswith(marker):
            head = marker if marker.endswith(".") else marker + ":"
            return f"\033[{code}m{head}\033[0m{line[len(head):]}"
    return line


def hint_text(hint: Hint, colour: bool = False) -> str:
    return "\n".join(_paint(line, colour) for line in hint.lines())


def json_text(payload: dict | list) -> str:
    """A JSON payload as forge prints it: an object indented; a bare array one item per
    line (long listings stay fast to print and to read with `jq` or line tools)."""
    if isinstance(payload, list):
        if not payload:
            return "[]"
        return "[\n" + ",\n".join(json.dumps(item, ensure_ascii=False) for item in payload) + "\n]"
    return json.dumps(payload, indent=2, ensure_ascii=False)


def emit(result: Result, as_json: bool, out: TextIO | None = None,
         err: TextIO | None = None) -> int:
    """Write the result and return its exit code.

    JSON arrays stay bare on stdout (so `jq` works on them) and their hint goes to stderr.
    """
    out = out or sys.stdout
    err = err or sys.stderr
    if as_json:
        out.write(json_text(result.json_payload()) + "\n")
        if isinstance(result.data, list):
            err.write(hint_text(result.hint) + "\n")
        return result.exit_code
    stream = err if result.exit_code and not result.lines else out
    body = "\n".join(result.lines)
    if body:
        out.write(body + "\n")
    stream.write(hint_text(result.hint, use_colour(stream)) + "\n")
    return result.exit_code
