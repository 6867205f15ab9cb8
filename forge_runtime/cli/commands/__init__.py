"""One module per `forge` command; each exposes `register(subparsers, common)`.

A command's handler takes the parsed arguments and returns a `Result`; it never prints.
"""
