"""Wheels made from what this interpreter has installed, for installs that have no network.

The host kit's marketplace install (forge-env's bootstrap under pip `--no-index`) and the
bench's loopback package index both need the real bytes a person's first session would
download; the installed copies are those bytes. `repack_installed(names, dest)` packs each
named distribution and everything it requires (requirements of other platforms or Pythons,
and extras, are skipped: they are not installed here) as a wheel with a true RECORD.
"""

from __future__ import annotations

import base64
import hashlib
import re
import zipfile
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path

# What an installer writes into a dist-info itself: not part of the wheel it installed.
_INSTALLER_FILES = {"RECORD", "INSTALLER", "REQUESTED", "direct_url.json"}


def normalized(name: str) -> str:
    """A project name as PEP 503 compares them."""
    return re.sub(r"[-_.]+", "-", name).lower()


def repack_installed(names: Sequence[str], dest: Path) -> list[Path]:
    """The wheels of the installed distributions `names` and of all they require."""
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
        pending += [normalized(re.split(r"[\s;<>=!~\[(]", requirement, maxsplit=1)[0])
                    for requirement in dist.requires or () if "extra ==" not in requirement]
    return made


def _repack(dist: metadata.Distribution, dest: Path) -> Path:
    """One distribution as a wheel, tagged as its installed WHEEL file says (a compiled
    extension keeps its platform tag); made once per `dest`."""
    info = next(f for f in dist.files if f.parts[0].endswith(".dist-info")).parts[0]
    wheel_text = dist.read_text("WHEEL") or ""
    tags = [line.split(":", 1)[1].strip() for line in wheel_text.splitlines()
            if line.startswith("Tag:")] or ["py3-none-any"]
    python, abi, platform = (".".join(sorted({tag.split("-")[i] for tag in tags}))
                             for i in range(3))
    name = normalized(dist.metadata["Name"]).replace("-", "_")
    wheel = dest / f"{name}-{dist.version}-{python}-{abi}-{platform}.whl"
    if wheel.exists():
        return wheel
    records = []
    with zipfile.ZipFile(wheel, "w", zipfile.ZIP_DEFLATED) as archive:
        for file in dist.files:
            path = Path(dist.locate_file(file))
            if (file.parts[0] == info and file.name in _INSTALLER_FILES) \
                    or "__pycache__" in file.parts or ".." in file.parts or not path.is_file():
                continue
            data = path.read_bytes()
            archive.writestr(str(file), data)
            digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b"=")
            records.append(f"{file},sha256={digest.decode()},{len(data)}")
        records.append(f"{info}/RECORD,,")
        archive.writestr(f"{info}/RECORD", "\n".join(records) + "\n")
    return wheel
