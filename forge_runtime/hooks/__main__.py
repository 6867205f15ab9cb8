"""`python -m forge_runtime.hooks <EventName>`: read one event on stdin, answer on stdout.

The pip install's wiring (and Codex's); it ends its process as the plugin's launcher does
(forge_runtime/launch.py).
"""

import gc
import sys

from forge_runtime import launch
from forge_runtime.hooks.dispatch import run

if launch.ENDS_PROCESS:
    gc.disable()
raise SystemExit(launch.end_process(run(sys.argv[1:], sys.stdin.buffer, sys.stdout, sys.stderr)))
