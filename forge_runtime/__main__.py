"""`python -m forge_runtime` is the `forge` CLI."""

from forge_runtime.cli.main import main
from forge_runtime.launch import end_process

raise SystemExit(end_process(main()))
