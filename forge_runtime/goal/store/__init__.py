"""Everything forge keeps on disk for goals: the ledger's records and head, the lock, the
objective index, session bindings, the state file, notes beside the ledger. `layout` alone
names the paths under the ledger root; every other module, in goal/ and outside it, asks it."""
