"""A goal across clones and places: the ledger published on the repository's remote, the
witness outside the work tree, and where a work tree's ledger is."""
