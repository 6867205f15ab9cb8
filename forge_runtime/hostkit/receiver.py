"""A webhook receiver on loopback, for the tests and the demo of forge's notifications.

    with Receiver() as receiver:                      # answers 200 to every POST
        ... url = receiver.url ...
    receiver.posts                                    # [{"path", "headers", "body"}, ...]

`mode` says how it answers: "ok" (200), "error" (500), or "hang" (reads the request, then
never answers until it is closed). It listens on 127.0.0.1 and, given `unix_path`, on a
Unix socket too: a host session in its own network namespace reaches it there through the
namespace's relay (`Host(relays=...)`, netns.py), at the same 127.0.0.1 port.
"""

from __future__ import annotations

import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

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


class _Unix(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    block_on_close = False

    def get_request(self):
        conn, _ = super().get_request()
        return conn, ("unix", 0)  # http.server expects a (host, port) client address


class _TCP(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False


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
        self._servers: list[socketserver.BaseServer] = []
        self.port = 0

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def took(self, path: str, headers: dict, body: bytes) -> None:
        with self._lock:
            self.posts.append({"path": path, "headers": headers,
                               "body": body.decode("utf-8", "replace")})

    def start(self) -> Receiver:
        handler = type("Handler", (_Handler,), {"receiver": self})
        tcp = _TCP(("127.0.0.1", 0), handler)
        self.port = tcp.server_address[1]
        self._servers.append(tcp)
        if self.unix_path is not None:
            self._servers.append(_Unix(str(self.unix_path), handler))
        for server in self._servers:
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                             name="hostkit-receiver", daemon=True).start()
        return self

    def close(self) -> None:
        self.closing.set()
        for server in self._servers:
            server.shutdown()
            server.server_close()
        if self.unix_path is not None:
            self.unix_path.unlink(missing_ok=True)
        self._servers.clear()

    def __enter__(self) -> Receiver:
        return self.start()

    def __exit__(self, *exc) -> None:
        self.close()
