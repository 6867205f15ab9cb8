"""`python -m forge_runtime.hooks <EventName>`: read one event on stdin, answer on stdout."""

import sys

from forge_runtime.hooks.dispatch import run

raise SystemExit(run(sys.argv[1:], sys.stdin.buffer, sys.stdout, sys.stderr))
