"""A tiny stdio MCP server with one write-capable tool, for guard host tests.

Run by the host from `--mcp-config`; `write_file` really writes, so a test can tell a tool
the guard denied (file absent) from one that ran.
"""

from pathlib import Path

from mcp.server.mcpserver import MCPServer

server = MCPServer("files")


@server.tool()
def write_file(path: str, content: str) -> str:
    """Write `content` to the file at `path`."""
    Path(path).write_text(content, encoding="utf-8")
    return f"wrote {len(content)} characters to {path}"


if __name__ == "__main__":
    server.run("stdio")
