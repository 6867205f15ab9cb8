"""The goal's rules: what a person's `/goal` activates, what every turn charges, what must
hold before a goal may run, and the state file checked against the ledger."""
