"""The durable goal ledger: a person's `/goal` activates, every Stop charges one turn.

Modules, each with one job:
    objective      normalise and hash an objective; read a `/goal` prompt
    records        one write-once, hash-chained record on disk
    lock           the per-goal file lock that serialises writers
    ledger         a goal's chain: append, the O(1) head check, full verification
    state          `.forge/local/state.md`: the agent's working copy of the goal
    transcript     what the host's transcript says (a person's `/goal`, verdicts, turns)
    codex_transcript  the same reader for Codex CLI's rollout files
    sessions       which session is bound to which goal, and pending activations
    host           what the core asks of the host that sent an event (its adapter)
    qualification  what must hold before a goal may run at all
    activation     rules 1-3: activate, bind, add a tranche, reopen
    charging       rules 4-5 and 8: charge a turn, exhaust, warn when stuck
    consistency    rule 7: the state file checked against the ledger
    status         read-only views for `forge goal ...`
    checkpoint     where the work stands (checklist progress, next step) for stop messages
    gauge          the budget at a glance, for the status line and `forge goal status`
"""
