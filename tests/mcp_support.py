"""A real MCP client session with `forge mcp` over stdio, for tests (the SDK's own client)."""

from __future__ import annotations

import os
import sys
from contextlib import asynccontextmanager
from pathlib import Path


@asynccontextmanager
async def forge_mcp(cwd: Path):
    """An initialised ClientSession with `python -m forge_runtime mcp` started in `cwd`."""
    from mcp.client.session import ClientSession
    from mcp.client.stdio import StdioServerParameters, stdio_client

    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[1])}
    params = StdioServerParameters(command=sys.executable, args=["-m", "forge_runtime", "mcp"],
                                   cwd=str(cwd), env=env)
    async with stdio_client(params) as streams, ClientSession(streams[0], streams[1]) as session:
        await session.initialize()
        yield session
