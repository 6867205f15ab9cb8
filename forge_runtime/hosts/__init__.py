"""Host adapters: one forge core, a thin module per host that runs it.

    claude.py   Claude Code: its events are forge's own shape; nothing to map
    codex.py    OpenAI Codex CLI: activation from its rollout file, apply_patch, stopping
                its native goal loop, its sandbox's posture
    contract.py what the dispatcher and the core ask of an adapter, as Protocols

A hook command names its host (`python -m forge_runtime.hooks --host codex Stop`; no
`--host` means Claude Code, the plugin's launcher); the dispatcher checks the input's shape
against that host and lets its adapter run the event module. The goal ledger, the guard and
the hints are the same code for every host: they never import an adapter. An adapter other
than Claude Code's hands itself to the core on the event (goal/hosts/host_adapter.py).
Nothing here is imported on a hook's hot path beyond this file and the adapter of the host
that called; contract.py is for the tests and type checkers.
"""

import sys

NAMES = ("claude", "codex")
DEFAULT = "claude"


def adapter(name: str):
    """The adapter module of host `name` (one of NAMES)."""
    if name not in NAMES:
        raise ValueError(f"unknown host {name!r} (known: {', '.join(NAMES)})")
    qualified = f"forge_runtime.hosts.{name}"
    __import__(qualified)  # not importlib.import_module: `importlib` is an import of its own
    return sys.modules[qualified]
