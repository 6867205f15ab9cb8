"""A package index on loopback, so that installers can be measured and tested without a network.

`serve(wheels)` publishes a directory of wheels as a PEP 503 simple index over HTTP on
127.0.0.1, which pip and uv both read like any index (caching, resolving, downloading).
`repack_installed(names, dest)` makes the real wheels of installed distributions and their
dependencies, from what the interpreter already has on disk, so that a bench build installs
the same bytes a person's first session downloads.
"""

from __future__ import annotations

import base64
import hashlib
import html
import re
import threading
import zipfile
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from functools import partial
from http.server import SimpleHTTPRequestHandler, ThreadingHTTPServer
from importlib import metadata
from pathlib import Path


def normalized(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


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


def repack_installed(names: Sequence[str], dest: Path) -> list[Path]:
    """Wheels of the installed distributions `names` and everything they require (markers
    that do not apply here are skipped by leaving the requirement out when not installed)."""
    dest.mkdir(parents=True, exist_ok=True)
    seen: set[str] = set()
    pending = [normalized(name) for name in names]
    made = []
    while pending:
        name = pending.pop()
        if name in seen:
            continue
        seen.add(name)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue  # an extra or a marker-only requirement this interpreter does not have
        made.append(_repack(dist, dest))
        for requirement in dist.requires or ():
            if "extra ==" in requirement:
                continue
            pending.append(normalized(re.split(r"[\s;<>=!~\[(]", requirement, maxsplit=1)[0]))
    return made


def _repack(dist: metadata.Distribution, dest: Path) -> Path:
    name, version = dist.metadata["Name"], dist.version
    info = next(f for f in dist.files if f.parts[0].endswith(".dist-info")).parts[0]
    wheel_text = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel_text.splitlines()
            if line.startswith("Tag:")] or ["py3-none-any"]
    python, abi, platform = (".".join(sorted({tag.split("-")[i] for tag in tags}))
                             for i in range(3))
    wheel = dest / f"{normalized(name).replace('-', '_')}-{version}-{python}-{abi}-{platform}.whl"
    records = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in dist.files:
            path = Path(dist.locate_file(file))
            if (file.parts[0] == info and file.name in {"RECORD", "INSTALLER", "REQUESTED",
                                                        "direct_url.json"}) \
                    or "__pycache__" in file.parts or ".." in file.parts or not path.is_file():
                continue
            data = path.read_bytes()
            archive.writestr(str(file), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            records.append(f"{file},sha256={digest.decode()},{len(data)}")
        records.append(f"{info}/RECORD,,")
        archive.writestr(f"{info}/RECORD", "\n".join(records) + "\n")
    return wheel
