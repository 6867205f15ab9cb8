"""A package index on loopback, so that installers can be measured and tested without a network.

`serve(wheels)` publishes a directory of wheels as a PEP 503 simple index over HTTP on
127.0.0.1, which pip and uv both read like any index (caching, resolving, downloading).
`repack_installed(names, dest)` (forge_runtime/hostkit/wheels.py) makes the wheels it serves
from what the interpreter already has on disk, so that a bench build installs the same bytes a
person's first session downloads.
"""

from __future__ import annotations

import hashlib
import html
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

from forge_runtime.hostkit.wheels import normalized


@contextmanager
def serve(wheels: Path) -> Iterator[str]:
    """The URL of a simple index of the wheels in `wheels`, served while the block runs;
    afterwards the port refuses connections, like an index that went away. Nothing it
    serves may be reused without asking it again."""
    root = wheels.parent / f"{wheels.name}-index"
    _write_index(wheels, root)
    handler = partial(_QuietHandler, directory=str(root))
    server = _QuietServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}/simple/"
    finally:
        server.shutdown()
        server.server_close()
        thread.join()


class _QuietServer(ThreadingHTTPServer):
    daemon_threads = True

    def handle_error(self, request, client_address):
        pass  # an installer that hangs up early (it had what it needed) is no error here


class _QuietHandler(SimpleHTTPRequestHandler):
    def end_headers(self):
        # Stale at once, as PyPI's pages are ten minutes after they were fetched: a client
        # must ask again, so "the index went away" really means no index.
        self.send_header("Cache-Control", "max-age=0, must-revalidate")
        super().end_headers()

    def log_message(self, format, *args):  # noqa: A002 - the base class's signature
        pass


def _write_index(wheels: Path, root: Path) -> None:
    files = root / "files"
    files.mkdir(parents=True, exist_ok=True)
    projects: dict[str, list[str]] = {}
    for wheel in sorted(wheels.glob("*.whl")):
        target = files / wheel.name
        if not target.exists():
            target.symlink_to(wheel.resolve())
        projects.setdefault(normalized(wheel.name.split("-")[0]), []).append(wheel.name)
    for project, names in projects.items():
        page = root / "simple" / project
        page.mkdir(parents=True, exist_ok=True)
        links = "".join(
            f'<a href="../../files/{html.escape(name)}#sha256={_sha256(wheels / name)}">'
            f"{html.escape(name)}</a>\n" for name in names)
        (page / "index.html").write_text(f"<!DOCTYPE html><html><body>\n{links}</body></html>\n",
                                         encoding="utf-8")


def _sha256(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()
