"""The `forge` command line: a thin surface that parses, calls core functions, renders."""
