"""`forge mcp`: a stdio MCP server with one tool per artifact operation.

Tools are generated from `forge_runtime.operations.OPERATIONS` (name, description, input
schema) and run through `operations.invoke` for the MCP surface, so a tool takes exactly
the CLI command's inputs and returns exactly its `--json` output: the text content is that
JSON, `_next_action` included, with hints naming MCP tools. A refusal is a tool error
(`isError`) whose structured content carries the error, its code and the `_next_action`
that fixes it. A list result (list, tree) is a bare JSON array, as on the CLI, and its hint
follows as a second text block, where the CLI prints it on stderr.

The project is the work tree holding the server's working directory, which the host sets
to the session's: a session in a worktree writes to that worktree.
"""

from __future__ import annotations

from pathlib import Path

from forge_runtime import __version__, hints
from forge_runtime.artifacts import store
from forge_runtime.cli.render import hint_text, json_text
from forge_runtime.errors import EXIT_USAGE
from forge_runtime.operations import BY_NAME, MCP, OPERATIONS, invoke, mcp_call
from forge_runtime.result import Result
from forge_runtime.steps import call

SERVER_NAME = "forge"


def _unknown_tool(name: str) -> Result:
    names = ", ".join(operation.name for operation in OPERATIONS)
    return Result(hints.error(f"no tool named {name!r} (tools: {names})",
                              mcp_call(call("list"))),
                  data={"error": f"no tool named {name!r}", "code": "FORGE_UNKNOWN_TOOL"},
                  exit_code=EXIT_USAGE)


def answer(name: str, arguments: dict | None, cwd: str | Path | None = None) -> dict:
    """One tool call as the MCP result's parts: `texts`, `structured` and `is_error`.

    In-process and synchronous, so the hint audit and tests reach the exact answer the
    stdio server sends.
    """
    if name in BY_NAME:
        result = invoke(name, dict(arguments or {}), MCP, cwd=cwd)
    else:
        result = _unknown_tool(name)
    payload = result.json_payload()
    texts = [json_text(payload)]
    if isinstance(payload, list):
        texts.append(hint_text(result.hint))
        structured = None
    else:
        structured = payload
    return {"texts": texts, "structured": structured, "is_error": result.exit_code != 0}


def build_server():
    import mcp_types as types
    from mcp.server.lowlevel import Server


    tools = [types.Tool(name=operation.name, description=operation.help,
                        input_schema=operation.input_schema()) for operation in OPERATIONS]

    async def list_tools(ctx, params) -> types.ListToolsResult:
        return types.ListToolsResult(tools=tools)

    async def call_tool(ctx, params) -> types.CallToolResult:
        parts = answer(params.name, params.arguments)
        return types.CallToolResult(
            content=[types.TextContent(type="text", text=text) for text in parts["texts"]],
            structured_content=parts["structured"], is_error=parts["is_error"])

    return Server(SERVER_NAME, version=__version__,
                  instructions="forge's artifacts: requirement documents, decisions and "
                               "evidence with a lifecycle, scores and claims. Every result "
                               "ends with _next_action: the tool call to make next.",
                  on_list_tools=list_tools, on_call_tool=call_tool)


def serve() -> None:
    """Serve on stdin/stdout until the client closes the connection."""
    import anyio
    from mcp.server.stdio import stdio_server


    store.watch_folders()  # a long-lived server: the kernel says what changed
    server = build_server()

    async def main() -> None:
        async with stdio_server() as (read_stream, write_stream):
            await server.run(read_stream, write_stream, server.create_initialization_options())

    anyio.run(main)
