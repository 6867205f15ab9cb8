"""Host adapters: one forge core, a thin module per host that runs it.

    claude.py   Claude Code: its events are forge's own shape; nothing to map
    codex.py    OpenAI Codex CLI: activation from its rollout file, apply_patch, stopping
                its native goal loop, its sandbox's posture

A hook command names its host (`python -m forge_runtime.hooks --host codex Stop`; no
`--host` means Claude Code, the plugin's launcher); the dispatcher checks the input's shape
against that host and lets its adapter run the event module. The goal ledger, the guard and
the hints are the same code for every host. Nothing here is imported on a hook's hot path
beyond this file and the adapter of the host that called.
"""

import sys

NAMES = ("claude", "codex")
DEFAULT = "claude"
HOST_KEY = "forge_host"  # set on the event by an adapter that is not Claude Code's


def adapter(name: str):
    """The adapter module of host `name` (one of NAMES)."""
    if name not in NAMES:
        raise ValueError(f"unknown host {name!r} (known: {', '.join(NAMES)})")
    qualified = f"forge_runtime.hosts.{name}"
    __import__(qualified)  # not importlib.import_module: `importlib` is an import of its own
    return sys.modules[qualified]


def transcript_reader(event: dict):
    """The module that reads the transcript of the host that sent `event`; both offer
    read_since, follow and running_goal and return chunks with the same interface."""
    if event.get(HOST_KEY) == "codex":
        from forge_runtime.goal import codex_transcript

        return codex_transcript
    from forge_runtime.goal import transcript

    return transcript
