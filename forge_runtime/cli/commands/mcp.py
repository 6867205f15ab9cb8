"""`forge mcp [--check]`: serve forge's artifact operations over MCP on stdio.

The plugin registers this server (`.mcp.json`), started through `hooks/forge-mcp` with
whatever `python3` the host finds; the host passes it CLAUDE_PLUGIN_ROOT and
CLAUDE_PLUGIN_DATA. When that interpreter lacks the MCP SDK, the server builds
`${CLAUDE_PLUGIN_DATA}/forge-mcp-env` once (see forge_runtime.bootstrap) and re-executes
itself there, so the hooks' own environment never carries the SDK.
"""

# lazy: every `forge <command>` start imports this module to register its parser; each
# subcommand imports what it runs.
from __future__ import annotations

import importlib.util
import os
import sys
from pathlib import Path

import forge_runtime
from forge_runtime import hints
from forge_runtime.cli.render import emit
from forge_runtime.errors import EXIT_OK, ForgeError
from forge_runtime.result import Result


def register(subparsers, common) -> None:
    parser = subparsers.add_parser(
        "mcp", parents=[common], help="serve the artifact operations as MCP tools on stdio",
        description="Serve forge's artifact operations (new, get, list, ... dispatch) as MCP "
                    "tools over stdio, for the host that started this process.")
    parser.add_argument("--check", action="store_true",
                        help="check that the server can start and list its tools, then exit")
    parser.set_defaults(handler=run)


def _reexec_with_sdk() -> None:
    """Run this command again in forge-mcp-env, built on first use; ForgeError if no way."""
    from forge_runtime import bootstrap, hook_python

    data = os.environ.get("CLAUDE_PLUGIN_DATA")
    if data and ("${" in data or not os.path.isabs(data)):
        data = None  # a host that did not expand .mcp.json's placeholder: nowhere to build
    pip = " ".join([sys.executable, "-m", "pip", "install", *bootstrap.MCP_REQUIREMENTS])
    if not data:
        raise ForgeError("forge mcp needs the MCP SDK (mcp), which this Python lacks", pip)
    boot = bootstrap.Bootstrap(Path(data), name=bootstrap.MCP_ENV_NAME,
                               requirements=(*bootstrap.HOOK_REQUIREMENTS,
                                             *bootstrap.MCP_REQUIREMENTS),
                               modules=(*bootstrap.HOOK_MODULES, "mcp"))
    if hook_python.running_inside(boot.env):
        raise ForgeError(f"{boot.env} was built but still lacks the MCP SDK", pip)
    try:
        boot.build()
    except (bootstrap.BuildFailed, OSError) as exc:
        raise ForgeError(f"forge could not install the MCP SDK into {boot.env}: {exc}",
                         pip) from None
    python = str(bootstrap.env_python(boot.env))
    # the plugin's own entry script, run as cli/forge runs it (a path: the CLI is below it)
    entry = os.path.join(os.path.dirname(forge_runtime.__file__), "entry.py")
    rest = sys.argv[sys.argv.index("mcp") + 1:] if "mcp" in sys.argv else []
    os.execv(python, [python, "-I", entry, "cli", "mcp", *rest])


def run(args) -> Result:
    if importlib.util.find_spec("mcp") is None:
        _reexec_with_sdk()
    from forge_runtime import mcp_server
    from forge_runtime.operations import OPERATIONS

    if args.check:
        mcp_server.build_server()
        names = [operation.name for operation in OPERATIONS]
        return Result(hints.done(f"forge mcp serves {len(names)} tools"),
                      [f"forge mcp: {len(names)} tools: {', '.join(names)}"],
                      {"tools": names}, EXIT_OK)
    mcp_server.serve()
    # stdout carried the protocol; the closing hint goes to stderr.
    emit(Result(hints.done("the MCP client closed the connection")), False, out=sys.stderr)
    raise SystemExit(EXIT_OK)
