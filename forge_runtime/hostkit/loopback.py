"""HTTP on loopback for the host kit's servers (the scripted model, the webhook receiver):
127.0.0.1 on a free port and, given a path, a Unix socket beside it, each served from a
daemon thread. A host session in its own network namespace reaches the Unix socket through
the namespace's relay (`Host(relays=...)`, netns.py) at the same 127.0.0.1 port.
"""

from __future__ import annotations

import socketserver
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path


class _UnixHTTPServer(socketserver.ThreadingMixIn, socketserver.UnixStreamServer):
    daemon_threads = True
    block_on_close = False

    def get_request(self):
        conn, _ = super().get_request()
        return conn, ("unix", 0)  # http.server expects a (host, port) client address


class _TCPServer(ThreadingHTTPServer):
    daemon_threads = True
    block_on_close = False


class LoopbackHTTP:
    """The servers of one handler class; `start` returns the TCP port."""

    def __init__(self, unix_path: Path | None, thread_name: str) -> None:
        self.unix_path = unix_path
        self.thread_name = thread_name
        self._servers: list[socketserver.BaseServer] = []

    def start(self, handler: type[BaseHTTPRequestHandler]) -> int:
        tcp = _TCPServer(("127.0.0.1", 0), handler)
        self._servers.append(tcp)
        if self.unix_path is not None:
            self._servers.append(_UnixHTTPServer(str(self.unix_path), handler))
        for server in self._servers:
            threading.Thread(target=server.serve_forever, kwargs={"poll_interval": 0.05},
                             name=self.thread_name, daemon=True).start()
        return tcp.server_address[1]

    def close(self) -> None:
        for server in self._servers:
            server.shutdown()
            server.server_close()
        if self.unix_path is not None:
            self.unix_path.unlink(missing_ok=True)
        self._servers.clear()
