"""A goal's budget as arithmetic: which ceilings a tranche reached, the plan's windows, tokens
and their price. Nothing here knows where the ledger lives; the prices table is found through
the store's layout."""
