"""`python -m forge_runtime` is the `forge` CLI."""

from forge_runtime.cli.main import main

raise SystemExit(main())
