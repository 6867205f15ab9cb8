"""forge's benchmark: what forge costs on every tool call and every turn, and how that grows.

`python -m bench` runs every scenario as whole processes started the way the host starts
them (the plugin's launcher, stdin JSON in, stdout out), prints a table of medians and
spreads with each figure as a multiple of the interpreter floor measured in the same run,
checks the targets of issues 6 and 14, and writes `results.json` plus `RESULTS.md`.

Modules, each with one job:
    measure      time one process; find its peak memory (peak_probe.py runs inside it)
    workspace    a throwaway git project and the host-shaped commands that run forge in it
    scenarios    what is measured, and what a valid run of each looks like
    goal         scenarios that need the goal ledger: activation, charging, verification
    concurrency  many processes charging one goal at once: throughput, nothing lost
    suite        run the scenarios
    targets      the targets of issues 6 and 14, checked
    imports      where a hook's time goes (-X importtime)
    report       terminal table, JSON, Markdown
"""
