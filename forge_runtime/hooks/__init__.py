"""Hook entry points: one module per host event, each exposing `handle(event) -> dict | None`.

Run as `python -m forge_runtime.hooks <EventName>` (the plugin launcher does this). Hooks run
on every tool call and every turn, so modules here import lazily and do no work for
sessions without a forge goal.
"""
