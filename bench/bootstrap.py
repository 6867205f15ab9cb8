"""`python -m bench --only bootstrap`: how long the first session after install waits for forge-env.

Each row builds the hooks' environment from nothing (a fresh data directory: virtual
environment, install, stamp, symlink swap: `Bootstrap.build`) with one installer, from an
index on loopback that serves the real wheels of pyyaml, filelock, jsonschema and their
dependencies, repacked from this interpreter's own installation (no network). A cold cache is
a new, empty one; a warm cache is the one the previous run filled, as on a machine that has
installed these packages before. "offline" builds with the index gone, from uv's cache.
"""

from __future__ import annotations

import os
import statistics
import sys
import tempfile
import time
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path

from bench import local_index
from forge_runtime import bootstrap, installers
from forge_runtime.hostkit.wheels import repack_installed


def find_uv() -> Path | None:
    """A uv on PATH (checked as the hook checks it), else the one the dev extra installs."""
    found = installers.find_uv(os.environ.get("PATH", ""), [Path.cwd()])
    if found:
        return found
    try:
        from uv import find_uv_bin
    except ImportError:
        return None
    return Path(find_uv_bin())


def rows(uv: Path | None) -> list[tuple[str, str, list[installers.Installer], bool]]:
    """(title, cache, installer chain, index up) for each way of building."""
    ensurepip = [installers.Installer("pip", ("{python}", "-I", "-m", "pip", "install",
                                              "--disable-pip-version-check", "--quiet"),
                                      with_pip=True)]
    outer = installers.plan(path="", untrusted=[])
    table = [("venv with pip, its pip installs (before)", "cold", ensurepip, True),
             ("venv without pip, outer pip --python", "cold", outer, True),
             ("venv without pip, outer pip --python", "warm", outer, True)]
    if not outer[-1].with_pip and uv is not None:
        with_uv = installers.plan(path=str(uv.parent), untrusted=[])
        table += [("uv pip install --compile-bytecode", "cold", with_uv, True),
                  ("uv pip install --compile-bytecode", "warm", with_uv, True),
                  ("uv, index gone: --offline from its cache", "warm", with_uv, False)]
    return table


@contextmanager
def installer_env(url: str, pip_cache: Path, uv_cache: Path) -> Iterator[None]:
    """Only the loopback index, no configuration file, the given caches."""
    saved = dict(os.environ)
    for key in [key for key in os.environ if key.startswith(("PIP_", "UV_"))]:
        del os.environ[key]
    os.environ.update(PIP_CONFIG_FILE=os.devnull, PIP_INDEX_URL=url, PIP_RETRIES="0",
                      PIP_CACHE_DIR=str(pip_cache), UV_NO_CONFIG="1", UV_INDEX_URL=url,
                      UV_CACHE_DIR=str(uv_cache))
    try:
        yield
    finally:
        os.environ.clear()
        os.environ.update(saved)


def build_seconds(chain: Sequence[installers.Installer], url: str, caches: Path,
                  data: Path) -> float:
    """Build forge-env in the new directory `data`, installing from `url` with `caches`."""
    data.mkdir(parents=True)
    with installer_env(url, caches / "pip", caches / "uv"):
        started = time.perf_counter()
        bootstrap.Bootstrap(data, chain=chain).build()
        return time.perf_counter() - started


def measure(base: Path, runs: int) -> list[tuple[str, str, float, float]]:
    """(title, cache, median seconds, slowest) per row."""
    wheels = base / "wheels"
    repack_installed([req.split(">")[0] for req in bootstrap.HOOK_REQUIREMENTS],
                                 wheels)
    results = []
    for number, (title, cache, chain, index_up) in enumerate(rows(find_uv())):
        times = measure_row(base / f"row-{number}", wheels, chain, cache == "warm", index_up,
                            runs)
        results.append((title, cache, statistics.median(times), max(times)))
    return results


def measure_row(base: Path, wheels: Path, chain: Sequence[installers.Installer], warm: bool,
                index_up: bool, runs: int) -> list[float]:
    shared = base / "caches"

    def one(run: int, url: str) -> float:
        caches = shared if warm else shared / str(run)  # cold: a new cache each run
        return build_seconds(chain, url, caches, base / f"data-{run}")

    with local_index.serve(wheels) as url:
        if warm:                     # filled once, as an earlier install would have
            build_seconds(chain, url, shared, base / "fill")
        if index_up:
            return [one(run, url) for run in range(runs)]
    return [one(run, url) for run in range(runs)]     # the index is gone now


def main(runs: int) -> int:
    with tempfile.TemporaryDirectory(prefix="forge-bench-bootstrap-") as scratch:
        results = measure(Path(scratch), runs)
    print(f"forge-env bootstrap, {runs} run(s) per row, index on loopback "
          f"(real wheels), {sys.version.split()[0]}")
    width = max(len(title) for title, *_ in results)
    print(f"{'installer'.ljust(width)}  cache  median s  max s")
    for title, cache, median, slowest in results:
        print(f"{title.ljust(width)}  {cache:<5}  {median:8.2f}  {slowest:5.2f}")
    return 0
