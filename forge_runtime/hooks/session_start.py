"""SessionStart: make sure the hooks of this session will have their Python dependencies.

When the interpreter running hooks lacks them, the first session after install builds
`${CLAUDE_PLUGIN_DATA}/forge-env` (see forge_runtime.bootstrap); every later hook of the
session then runs there. If that cannot be done, the person sees one message with its Fix,
and the session goes on: hooks that must fail closed still do so on their own.
"""

from __future__ import annotations

import os

REQUIRED: dict[str, type] = {}


def handle(event: dict) -> dict | None:
    from forge_runtime import bootstrap
    from forge_runtime.errors import ForgeError

    try:
        bootstrap.ensure(os.environ.get("CLAUDE_PLUGIN_DATA"),
                         os.environ.get("CLAUDE_PLUGIN_ROOT"))
    except ForgeError as exc:
        return {"systemMessage": exc.hint().render()}
    return None
