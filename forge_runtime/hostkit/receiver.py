"""A webhook receiver on loopback, for the tests and the demo of forge's notifications.

    with Receiver() as receiver:                      # answers 200 to every POST
        ... url = receiver.url ...
    receiver.posts                                    # [{"path", "headers", "body"}, ...]

`mode` says how it answers: "ok" (200), "error" (500), or "hang" (reads the request, then
never answers until it is closed). It listens on 127.0.0.1 and, given `unix_path`, on a
Unix socket too (loopback.py).
"""

from __future__ import annotations

import threading
from http.server import BaseHTTPRequestHandler
from pathlib import Path

from forge_runtime.hostkit.loopback import LoopbackHTTP

MODES = ("ok", "error", "hang")


class _Handler(BaseHTTPRequestHandler):
    receiver: Receiver

    def log_message(self, format, *args):  # noqa: A002 - the base class's name
        pass

    def do_POST(self):  # noqa: N802 - http.server's naming
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        self.receiver.took(self.path, dict(self.headers), body)
        if self.receiver.mode == "hang":
            self.receiver.closing.wait()
            return
        status = 200 if self.receiver.mode == "ok" else 500
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok" if status == 200 else b"no")


class Receiver:
    """Records every POST it is sent; see the module docstring."""

    def __init__(self, mode: str = "ok", unix_path: str | Path | None = None) -> None:
        if mode not in MODES:
            raise ValueError(f"mode is one of {MODES}, not {mode!r}")
        self.mode = mode
        self.unix_path = Path(unix_path) if unix_path else None
        self.posts: list[dict] = []
        self.closing = threading.Event()
        self._lock = threading.Lock()
        self._http = LoopbackHTTP(self.unix_path, "hostkit-receiver")
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def took(self, path: str, headers: dict, body: bytes) -> None:
        with self._lock:
            self.posts.append({"path": path, "headers": headers,
                               "body": body.decode("utf-8", "replace")})

    def start(self) -> Receiver:
        self.port = self._http.start(type("Handler", (_Handler,), {"receiver": self}))
        return self

    def close(self) -> None:
        self.closing.set()
        self._http.close()

    def __enter__(self) -> Receiver:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
