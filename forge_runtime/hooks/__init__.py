"""Hook entry points: one module per host event, each exposing `handle(event) -> dict | None`.

Run as `python -I -m forge_runtime.hooks <EventName>` (a pip install's wiring), or through the
plugin's launcher, which runs `forge_runtime/entry.py` as a file (see there). Hooks run
on every tool call and every turn, so modules here import lazily and do no work for
sessions without a forge goal. What a module offers the dispatcher beyond `handle` is
declared in contract.py, which no hook imports.
"""
