"""`python -m forge_runtime.hooks <EventName>`: read one event on stdin, answer on stdout.

The pip install's wiring (and Codex's); it runs and ends its process as the plugin's
launcher does (forge_runtime/launch.py), without the plugin's module cache.
"""

import sys

from forge_runtime import launch

raise SystemExit(launch.end_process(launch.run_hook(sys.argv[1:])))
