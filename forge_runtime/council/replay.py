"""A council held by Claude Code's subagents, recorded by `forge council --record FILE`.

In Claude Code the council skill convenes `forge:advisor-*` and `forge:council-chair` as
plugin subagents (the guard holds each to its read-only role), then hands forge what they
said, as JSON:

    {"opinions": {"simplicity": "...", "scale": "...", ...},   # one per perspective
     "reviews":  {"simplicity": "...", ...},                   # each advisor's review
     "verdict":  "Verdict: ...\\nReasons: ...\\nMinority report: ..."}

Their turns ran inside the main session's, which its Stop hook charges, so nothing more is
charged; the host reports no per-subagent tokens here, so none are recorded.
"""

from __future__ import annotations

import json

from forge_runtime.council import advisors, sdk
from forge_runtime.errors import EXIT_USAGE, ForgeError


def replaying(path: str):
    """An `ask` that answers each member, in the council's order, from the file."""
    try:
        with open(path, encoding="utf-8") as handle:
            said = json.load(handle)
    except (OSError, ValueError) as exc:
        raise ForgeError(f"council record {path} cannot be read as JSON ({exc})",
                         "forge council --help", exit_code=EXIT_USAGE) from None
    perspectives = [member.perspective for member in advisors.ADVISORS]
    try:
        answers = [*(str(said["opinions"][p]) for p in perspectives),
                   *(str(said["reviews"][p]) for p in perspectives), str(said["verdict"])]
    except (KeyError, TypeError) as exc:
        raise ForgeError(f"council record {path} lacks {exc}: it needs opinions and reviews "
                         f"for {', '.join(perspectives)} and a verdict",
                         "forge council --help", exit_code=EXIT_USAGE) from None
    queue = iter(answers)

    def ask(member, prompt: str, cwd: str) -> sdk.Answer:
        return sdk.Answer(member.role, next(queue).strip(), 0, None, None, None, [])

    return ask
