"""The OpenAI Responses API, as Codex CLI speaks it, mapped onto the host kit's scripts.

Codex POSTs `/v1/responses` with `"stream": true`: `instructions` (the system prompt),
`tools`, and `input`, a list of items (`message` with `input_text`/`output_text` parts,
`function_call` / `function_call_output`, `custom_tool_call` / `custom_tool_call_output`,
`reasoning`). The answer it accepts is an SSE stream of `response.created`, one
`response.output_item.added` / `.done` pair per item, and `response.completed`.

So one script format serves both hosts: `as_messages` turns a Responses body into the
Messages-API shape `script.Request` reads (a tool output becomes a `tool_result` block), and
`sse_body` turns a reply into Codex's items. A script's tool call names the tool the way
forge's rules do: `{name: Bash, input: {command: ...}}` becomes Codex's `exec_command`
function call, `{name: apply_patch, input: {patch: ...}}` its `apply_patch` custom tool
call, anything else a function call of that name with the input as its arguments.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator

PATH = "/v1/responses"
_ROLES = {"developer": "system", "system": "system", "user": "user", "assistant": "assistant"}


def _text_parts(content: object) -> list[dict]:
    if isinstance(content, str):
        return [{"type": "text", "text": content}]
    parts = content if isinstance(content, list) else []
    return [{"type": "text", "text": part.get("text", "")} for part in parts
            if isinstance(part, dict) and isinstance(part.get("text"), str)]


def _tool_input(item: dict) -> dict:
    if item.get("type") == "custom_tool_call":
        return {"patch": item.get("input", "")}
    try:
        arguments = json.loads(item.get("arguments") or "{}")
    except ValueError:
        return {"arguments": item.get("arguments")}
    if item.get("name") == "exec_command" and isinstance(arguments, dict):
        return {"command": arguments.get("cmd"), **arguments}
    return arguments if isinstance(arguments, dict) else {"arguments": arguments}


def _output_text(output: object) -> str:
    if isinstance(output, str):
        return output
    if isinstance(output, dict):
        return _output_text(output.get("content", ""))
    if isinstance(output, list):
        return "\n".join(part.get("text", "") for part in output if isinstance(part, dict))
    return ""


def as_messages(body: dict) -> dict:
    """A Responses request body in the Messages shape the script rules read."""
    messages: list[dict] = []

    def add(role: str, block: dict) -> None:
        """Text parts of one role run together; a tool call or its output stands alone."""
        last = messages[-1] if messages else None
        if last and last["role"] == role and role != "system" and block["type"] == "text" \
                and last["content"][-1]["type"] == "text":
            last["content"].append(block)
        else:
            messages.append({"role": role, "content": [block]})

    for item in body.get("input") or []:
        if not isinstance(item, dict):
            continue
        kind = item.get("type", "message")
        if kind == "message":
            for part in _text_parts(item.get("content")):
                add(_ROLES.get(item.get("role"), "user"), part)
        elif kind in ("function_call", "custom_tool_call"):
            add("assistant", {"type": "tool_use", "id": item.get("call_id"),
                              "name": item.get("name"), "input": _tool_input(item)})
        elif kind in ("function_call_output", "custom_tool_call_output") and item.get("call_id"):
            # (an output with no call is context the host adds, e.g. the goal's objective)
            text = _output_text(item.get("output"))
            add("user", {"type": "tool_result", "tool_use_id": item.get("call_id"),
                         "content": text, "is_error": _looks_failed(text)})
    tools = [{"name": tool.get("name") or tool.get("type")} for tool in body.get("tools") or []
             if isinstance(tool, dict)]
    return {"system": body.get("instructions") or "", "messages": messages, "tools": tools,
            "model": body.get("model")}


_FAILED = re.compile(r"exited with code [1-9]|blocked by|denied|rejected|verification failed",
                     re.I)


def _looks_failed(text: str) -> bool:
    """Codex reports a refused or failed call in the output text, not in a flag, so a
    script's `last_tool_result_is_error` reads it from the text."""
    return _FAILED.search(text) is not None


def _items(reply: dict, ids: Iterator[str]) -> list[dict]:
    items: list[dict] = []
    if reply.get("text"):
        items.append({"type": "message", "role": "assistant", "id": f"msg_{next(ids)}",
                      "status": "completed",
                      "content": [{"type": "output_text", "text": reply["text"],
                                   "annotations": []}]})
    for call in reply.get("tool_calls", []):
        call_id = call.get("id") or f"call_{next(ids)}"
        name, arguments = call["name"], dict(call.get("input", {}))
        if name == "apply_patch":
            items.append({"type": "custom_tool_call", "id": f"ctc_{next(ids)}",
                          "status": "completed", "call_id": call_id, "name": "apply_patch",
                          "input": arguments.get("patch", "")})
            continue
        if name == "Bash":
            name = "exec_command"
            arguments = {"cmd": arguments.pop("command", ""), **arguments}
        items.append({"type": "function_call", "id": f"fc_{next(ids)}", "status": "completed",
                      "call_id": call_id, "name": name, "arguments": json.dumps(arguments)})
    return items


def response_usage(spent: dict) -> dict:
    """The Responses API's usage for a reply's `usage` (the Messages API's field names, as
    scripts write them): OpenAI's `input_tokens` include the cached ones, reported again
    as `input_tokens_details.cached_tokens`; by default 100 in, 20 out."""
    cached = spent.get("cache_read_input_tokens", 0)
    fresh = spent.get("input_tokens", 0 if spent else 100) + \
        spent.get("cache_creation_input_tokens", 0)
    output = spent.get("output_tokens", 0 if spent else 20)
    return {"input_tokens": fresh + cached, "input_tokens_details": {"cached_tokens": cached},
            "output_tokens": output, "output_tokens_details": {"reasoning_tokens": 0},
            "total_tokens": fresh + cached + output}


def sse_body(reply: dict, response_id: str, model: str, ids: Iterator[str]) -> bytes:
    """The reply as the SSE stream of one streamed response."""
    items = _items(reply, ids)
    response = {"id": response_id, "object": "response", "model": model, "status": "completed",
                "output": items}
    usage = response_usage(reply.get("usage") or {})
    events = [("response.created", {"type": "response.created",
                                    "response": {**response, "status": "in_progress",
                                                 "output": []}})]
    for index, item in enumerate(items):
        events.append(("response.output_item.added", {"type": "response.output_item.added",
                                                      "output_index": index, "item": item}))
        events.append(("response.output_item.done", {"type": "response.output_item.done",
                                                     "output_index": index, "item": item}))
    events.append(("response.completed", {"type": "response.completed",
                                          "response": {**response, "usage": usage}}))
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n"
                   for name, data in events).encode()
