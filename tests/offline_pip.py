"""Helpers that keep pip offline in tests: a clean pip environment, a dead loopback index,
and a wheelhouse of tiny stand-in wheels named like forge's hook dependencies."""

from __future__ import annotations

import os
import socket
import zipfile
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

STAND_INS = [("pyyaml", "6.0.2", "yaml"), ("filelock", "3.12.4", "filelock"),
             ("jsonschema", "4.20.0", "jsonschema"), ("genai-prices", "0.2.3", "genai_prices")]


def clean_env(**extra: str) -> dict[str, str]:
    """This process's environment minus every pip, uv, forge, host and Python path setting,
    with pip's and uv's configuration files switched off and no `uv` on PATH (so pip
    installs unless a test puts one there), plus `extra`."""
    env = {key: value for key, value in os.environ.items()
           if not key.startswith(("PIP_", "UV_", "FORGE_", "CLAUDE_", "PYTHON"))}
    env["PATH"] = os.pathsep.join(entry for entry in env.get("PATH", "").split(os.pathsep)
                                  if entry and not os.path.exists(os.path.join(entry, "uv")))
    return {**env, "PIP_CONFIG_FILE": os.devnull, "PIP_DISABLE_PIP_VERSION_CHECK": "1",
            "UV_NO_CONFIG": "1", **extra}


@contextmanager
def refusing_index() -> Iterator[str]:
    """An index URL on a loopback port that refuses connections (bound, never listening)."""
    sock = socket.socket()
    sock.bind(("127.0.0.1", 0))
    try:
        yield f"http://127.0.0.1:{sock.getsockname()[1]}/simple"
    finally:
        sock.close()


def make_wheelhouse(root: Path, extra_files: dict[str, str] | None = None,
                    stand_ins=STAND_INS) -> Path:
    """Stand-in wheels (by default for the hooks' requirements), each module recording
    its distribution name in `STAND_IN`; `extra_files` go into the first wheel (e.g. a .pth)."""
    root.mkdir(parents=True)
    for index, (dist, version, module) in enumerate(stand_ins):
        info = f"{dist.replace('-', '_')}-{version}.dist-info"
        wheel_name = f"{dist.replace('-', '_')}-{version}-py3-none-any.whl"
        with zipfile.ZipFile(root / wheel_name, "w") as wheel:
            wheel.writestr(f"{module}/__init__.py", f"STAND_IN = {dist!r}\n")
            for name, text in (extra_files or {}).items() if index == 0 else ():
                wheel.writestr(name, text)
            wheel.writestr(f"{info}/METADATA",
                           f"Metadata-Version: 2.1\nName: {dist}\nVersion: {version}\n")
            wheel.writestr(f"{info}/WHEEL", "Wheel-Version: 1.0\nGenerator: forge-tests\n"
                                            "Root-Is-Purelib: true\nTag: py3-none-any\n")
            wheel.writestr(f"{info}/RECORD", "")
    return root

