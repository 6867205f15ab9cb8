"""A scripted Messages API server on loopback, speaking the API the way Claude Code uses it.

The host sends `POST /v1/messages?beta=true` with `"stream": true`; the answer is the SSE
sequence the host accepts (message_start, per block content_block_start / deltas /
content_block_stop, message_delta with the stop reason, message_stop), sent as one complete
body with Content-Length. A request with `"stream": false` gets the plain JSON message.

Every request is kept in `requests` and appended to a JSON-lines log with the API key
redacted. The server also listens on a Unix socket when asked, so a session inside a
loopback-only network namespace can reach it through a relay (see `netns`).
"""

from __future__ import annotations

import contextlib
import itertools
import json
import socket
import threading
import time
from http.server import BaseHTTPRequestHandler
from pathlib import Path
from urllib.parse import urlsplit

from forge_runtime.hostkit import responses
from forge_runtime.hostkit.loopback import LoopbackHTTP
from forge_runtime.hostkit.script import Request, Script, expand, reply_kind

SECRET_HEADERS = {"x-api-key", "authorization", "proxy-authorization"}

_ERROR_TYPES = {
    400: "invalid_request_error", 401: "authentication_error", 403: "permission_error",
    404: "not_found_error", 413: "request_too_large", 429: "rate_limit_error",
    500: "api_error", 503: "api_error", 529: "overloaded_error",
}

DEFAULT_USAGE = {"input_tokens": 100, "output_tokens": 20,
                 "cache_creation_input_tokens": 0, "cache_read_input_tokens": 0}


def build_message(reply: dict, *, model: str, message_id: str, tool_ids) -> dict:
    """The complete assistant message a text/tool_calls/verdict reply stands for."""
    content: list[dict] = []
    if "verdict" in reply:
        content.append({"type": "text", "text": json.dumps(reply["verdict"])})
    if reply.get("text"):
        content.append({"type": "text", "text": reply["text"]})
    for call in reply.get("tool_calls", []):
        content.append({"type": "tool_use", "id": call.get("id") or next(tool_ids),
                        "name": call["name"], "input": call.get("input", {})})
    has_tools = any(block["type"] == "tool_use" for block in content)
    stop_reason = reply.get("stop_reason") or ("tool_use" if has_tools else "end_turn")
    return {"id": message_id, "type": "message", "role": "assistant", "model": model,
            "content": content, "stop_reason": stop_reason, "stop_sequence": None,
            "usage": {**DEFAULT_USAGE, **reply.get("usage", {})}}


def sse_events(message: dict) -> list[tuple[str, dict]]:
    """The message as the (event, data) sequence of a streamed response."""
    usage = message["usage"]
    start = {**message, "content": [], "stop_reason": None,
             "usage": {**usage, "output_tokens": 1}}
    events: list[tuple[str, dict]] = [("message_start", {"type": "message_start",
                                                         "message": start})]
    for index, block in enumerate(message["content"]):
        if block["type"] == "text":
            opening = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block["text"]}
        else:
            opening = {**block, "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block["input"])}
        events += [
            ("content_block_start", {"type": "content_block_start", "index": index,
                                     "content_block": opening}),
            ("content_block_delta", {"type": "content_block_delta", "index": index,
                                     "delta": delta}),
            ("content_block_stop", {"type": "content_block_stop", "index": index}),
        ]
    events += [
        ("message_delta", {"type": "message_delta",
                           "delta": {"stop_reason": message["stop_reason"],
                                     "stop_sequence": None},
                           "usage": {"output_tokens": usage["output_tokens"]}}),
        ("message_stop", {"type": "message_stop"}),
    ]
    return events


def encode_sse(events: list[tuple[str, dict]]) -> bytes:
    return "".join(f"event: {name}\ndata: {json.dumps(data)}\n\n"
                   for name, data in events).encode()


def redact(headers) -> dict[str, str]:
    return {k.lower(): ("[redacted]" if k.lower() in SECRET_HEADERS else v)
            for k, v in headers.items()}


class _Handler(BaseHTTPRequestHandler):
    server_version = "forge-hostkit"
    protocol_version = "HTTP/1.1"
    kit: ModelServer  # set on the per-server subclass

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        """Silence the default stderr access log; `ModelServer.requests` is the log."""

    def do_GET(self):  # noqa: N802 - http.server's naming
        self._send_json(404, _error_body(404, f"no GET endpoint {self.path}"))

    def do_POST(self):  # noqa: N802
        path = urlsplit(self.path).path
        raw = self.rfile.read(int(self.headers.get("Content-Length") or 0))
        try:
            body = json.loads(raw or b"{}")
            if not isinstance(body, dict):
                raise ValueError("the body is not a JSON object")
        except ValueError as exc:
            self.kit.record(self, {"unparsed": raw.decode("utf-8", "replace")}, None, "bad_json")
            self._send_json(400, _error_body(400, f"request body is not JSON: {exc}"))
            return
        if path == "/v1/messages/count_tokens":
            self.kit.record(self, body, None, "count_tokens")
            self._send_json(200, {"input_tokens": len(raw) // 4})
            return
        if path not in ("/v1/messages", responses.PATH):
            self.kit.record(self, body, None, "not_found")
            self._send_json(404, _error_body(404, f"no endpoint {path}"))
            return
        self.kit.answer(self, body, codex=path == responses.PATH)

    def _send_json(self, status: int, payload: dict, extra_headers=()) -> None:
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.send_header("request-id", f"req_hostkit_{time.monotonic_ns()}")
        for name, value in extra_headers:
            self.send_header(name, value)
        self.end_headers()
        self.wfile.write(data)

    def send_sse(self, data: bytes, extra_headers=(), stall: tuple[int, float] | None = None
                 ) -> None:
        """Send a streamed body; `stall` (byte offset, seconds): send the bytes before the
        offset, then wait that long before the rest, as a stream the network cuts in two."""
        self.send_response(200)
        self.send_header("Content-Type", "text/event-stream")
        self.send_header("Cache-Control", "no-cache")
        self.send_header("Content-Length", str(len(data)))
        for name, value in extra_headers:
            self.send_header(name, value)
        self.end_headers()
        if stall is None:
            self.wfile.write(data)
            return
        self.wfile.write(data[:stall[0]])
        self.wfile.flush()
        self.kit.pause(stall[1])
        self.wfile.write(data[stall[0]:])

    def drop(self) -> None:
        """Close the connection without a byte of response, as a crashed upstream would."""
        self.close_connection = True
        with contextlib.suppress(OSError):
            self.connection.shutdown(socket.SHUT_RDWR)


PLAN_WINDOWS = (("five_hour", "5h", "primary", 300), ("seven_day", "7d", "secondary", 10080))


def plan_headers(usage: dict | None, codex: bool, resets: dict | None = None
                 ) -> list[tuple[str, str]]:
    """The rate-limit headers a host reads its subscription's windows from, for a reply's
    `plan_usage` (percent used of each window, or `{used, resets_in}`): Claude Code's
    unified ones (a fraction) and Codex's primary/secondary ones (a percentage, the
    window's length, its reset).

    A window resets at one time until that time passes, as a provider's does: `resets`
    (the server's, per window) keeps it from reply to reply; `resets_in` (seconds) starts
    a window that resets then."""
    if not usage:
        return []
    now = int(time.time())
    resets = {} if resets is None else resets
    headers: list[tuple[str, str]] = []
    for field, claude_name, codex_name, minutes in PLAN_WINDOWS:
        if field not in usage:
            continue
        used = usage[field]
        if isinstance(used, dict):
            used, resets_in = used["used"], used.get("resets_in")
            if resets_in is not None:
                resets[field] = now + int(resets_in)
        if resets.get(field, 0) <= now:
            resets[field] = now + minutes * 60
        reset = str(resets[field])
        if codex:
            headers += [(f"x-codex-{codex_name}-used-percent", str(used)),
                        (f"x-codex-{codex_name}-window-minutes", str(minutes)),
                        (f"x-codex-{codex_name}-reset-at", str(reset))]
        else:
            headers += [(f"anthropic-ratelimit-unified-{claude_name}-utilization",
                         str(used / 100)),
                        (f"anthropic-ratelimit-unified-{claude_name}-reset", reset)]
    if not codex:
        headers.append(("anthropic-ratelimit-unified-status", "allowed"))
    return headers


def usage_limit_reply(limit: dict, message: str, codex: bool) -> tuple[list, dict]:
    """The headers and body of a 429 that says a subscription's usage limit is reached,
    for an error reply's `usage_limit: {window, resets_in}` (seconds until the window
    resets), each in the host's own shape: Claude Code reads the unified limiter's
    headers (status `rejected`, the reset, the window that refused: its
    `representative-claim`); Codex reads the body's `usage_limit_reached` error with its
    `resets_at`."""
    window = limit.get("window", "five_hour")
    resets_at = int(time.time()) + int(limit.get("resets_in", 60))
    claude_name = {field: claude for field, claude, _, _ in PLAN_WINDOWS}[window]
    if codex:  # the body alone (measured: the headers at 100% add a model-switch dialog)
        return [], {"error": {"type": "usage_limit_reached", "message": message,
                              "plan_type": "plus", "resets_at": resets_at,
                              "resets_in_seconds": resets_at - int(time.time())}}
    return [("anthropic-ratelimit-unified-status", "rejected"),
            ("anthropic-ratelimit-unified-reset", str(resets_at)),
            ("anthropic-ratelimit-unified-representative-claim", window),
            (f"anthropic-ratelimit-unified-{claude_name}-status", "rejected"),
            (f"anthropic-ratelimit-unified-{claude_name}-utilization", "1.0"),
            (f"anthropic-ratelimit-unified-{claude_name}-reset", str(resets_at)),
            ("anthropic-ratelimit-unified-overage-status", "rejected"),
            ("anthropic-ratelimit-unified-overage-disabled-reason", "org_level_disabled")], \
        _error_body(429, message)


def _error_body(status: int, message: str) -> dict:
    return {"type": "error", "error": {"type": _ERROR_TYPES.get(status, "api_error"),
                                       "message": message}}


class ModelServer:
    """Answers the host's model requests from a `Script`; use as a context manager.

    `variables` fills reply placeholders such as `{cwd}`; the runner sets `cwd` per session.
    """

    def __init__(self, script: Script, *, log_path: str | Path | None = None,
                 unix_path: str | Path | None = None) -> None:
        self.script = script
        self.log_path = Path(log_path) if log_path else None
        self.unix_path = Path(unix_path) if unix_path else None
        self.variables: dict[str, str] = {}
        self.plan_resets: dict[str, int] = {}  # when each plan window resets (plan_headers)
        self.requests: list[dict] = []
        self._lock = threading.Lock()
        self._stopping = threading.Event()
        self._http = LoopbackHTTP(self.unix_path, "hostkit-model-server")
        self._ids = itertools.count(1)
        self.port = 0
        # the plan's windows as the last `plan_usage` set them: every later Messages API
        # answer carries them too (an account's use does not vanish between answers;
        # measured, Claude Code 2.1.332 shows no windows after an answer without the
        # headers, a /goal verdict's too); Codex's answers send only their own
        self.plan_usage: dict[str, float] = {}

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> ModelServer:
        self.port = self._http.start(type("Handler", (_Handler,), {"kit": self}))
        return self

    def stop(self) -> None:
        self._stopping.set()
        self._http.close()

    def __enter__(self) -> ModelServer:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()

    def record(self, handler: _Handler, body: dict, rule_name: str | None, outcome: str) -> dict:
        """Keep one request (key redacted) in memory and in the JSON-lines log."""
        entry = {"n": 0, "time": time.time(), "method": handler.command, "path": handler.path,
                 "headers": redact(handler.headers), "body": body, "rule": rule_name,
                 "outcome": outcome}
        with self._lock:
            entry["n"] = len(self.requests) + 1
            self.requests.append(entry)
            if self.log_path is not None:
                with self.log_path.open("a", encoding="utf-8") as log:
                    log.write(json.dumps(entry, ensure_ascii=False) + "\n")
        return entry

    def pause(self, seconds: float) -> None:
        """Wait `seconds`, or less when the server stops."""
        self._stopping.wait(seconds)

    def answer(self, handler: _Handler, body: dict, codex: bool = False) -> None:
        """Answer one model request; `codex`: a Responses API request (responses.py)."""
        rule, reply = self.script.answer(Request(responses.as_messages(body) if codex else body))
        reply = expand(reply, dict(self.variables))
        with self._lock:
            if reply.get("plan_usage"):
                self.plan_usage = {name: window["used"] if isinstance(window, dict) else window
                                   for name, window in reply["plan_usage"].items()}
            elif self.plan_usage and not codex:
                reply = {**reply, "plan_usage": self.plan_usage}
        kind = reply_kind(reply)
        rule_name = (rule.name or f"rules[{self.script.rules.index(rule)}]") if rule else None
        self.record(handler, body, rule_name, kind if rule else "no_rule_matched")
        if reply.get("delay_s"):
            self._stopping.wait(float(reply["delay_s"]))
        if kind == "drop_connection":
            handler.drop()
        elif kind == "hang":
            self._stopping.wait()
            handler.drop()
        elif kind == "error":
            error = reply["error"]
            status = error["status"]
            headers = ([("retry-after", str(error["retry_after"]))]
                       if "retry_after" in error else [])
            message = error.get("message", f"scripted {status} from the forge host kit")
            body = _error_body(status, message)
            if "usage_limit" in error:
                limit_headers, body = usage_limit_reply(error["usage_limit"], message, codex)
                headers += limit_headers
            handler._send_json(status, body, headers)
        elif codex:
            n = next(self._ids)
            handler.send_sse(responses.sse_body(
                reply, f"resp_hostkit_{n:06d}", str(body.get("model", "codex-hostkit")),
                (f"hostkit_{n:06d}_{i}" for i in itertools.count())),
                plan_headers(reply.get("plan_usage"), codex=True, resets=self.plan_resets))
        else:
            n = next(self._ids)
            message = build_message(reply, model=str(body.get("model", "claude-hostkit")),
                                    message_id=f"msg_hostkit_{n:06d}",
                                    tool_ids=(f"toolu_hostkit_{n:06d}_{i}" for i in
                                              itertools.count()))
            headers = plan_headers(reply.get("plan_usage"), codex=False,
                                   resets=self.plan_resets)
            if body.get("stream"):
                events = sse_events(message)
                stall = None
                if reply.get("stall_before_end_s"):  # before message_delta, the last two
                    stall = (len(encode_sse(events[:-2])), float(reply["stall_before_end_s"]))
                handler.send_sse(encode_sse(events), headers, stall)
            else:
                handler._send_json(200, message, headers)
