"""`python -m bench --only bootstrap` rests on a loopback index of the real wheels: those
wheels must install with uv and with pip and import as the originals do (no timing here)."""

from __future__ import annotations

import subprocess
import sys
from importlib import metadata
from pathlib import Path

import pytest
from offline_pip import clean_env
from uv import find_uv_bin

from bench import bootstrap as bench_bootstrap
from bench import local_index
from forge_runtime.hostkit.wheels import normalized, repack_installed


@pytest.fixture(scope="module")
def served(tmp_path_factory):
    wheels = tmp_path_factory.mktemp("repacked") / "wheels"
    made = repack_installed(["jsonschema"], wheels)
    with local_index.serve(wheels) as url:
        yield url, made


def fresh_python(root: Path) -> Path:
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(root)], check=True)
    return root / "bin" / "python"


def test_repacking_follows_the_dependencies_and_keeps_compiled_extensions(served):
    _, made = served
    names = {normalized(wheel.name.split("-")[0]) for wheel in made}
    assert {"jsonschema", "referencing", "rpds-py", "attrs"} <= names
    rpds = next(wheel for wheel in made if wheel.name.startswith("rpds_py-"))
    assert "-cp3" in rpds.name and "-none-any" not in rpds.name      # the platform's build


@pytest.mark.parametrize("installer", ["uv", "pip"])
def test_the_repacked_wheels_install_from_the_index_and_import(served, tmp_path, installer):
    url, _ = served
    python = fresh_python(tmp_path / "env")
    if installer == "uv":
        command = [find_uv_bin(), "pip", "install", "--python", str(python), "jsonschema"]
    else:
        command = [sys.executable, "-m", "pip", "--python", str(python), "install", "-q",
                   "jsonschema"]
    env = clean_env(PIP_INDEX_URL=url, UV_INDEX_URL=url, UV_CACHE_DIR=str(tmp_path / "uv"),
                    PIP_NO_CACHE_DIR="1")
    subprocess.run(command, env=env, check=True, capture_output=True, timeout=120)
    shown = subprocess.run([str(python), "-c", "import jsonschema, rpds; "
                            "from importlib.metadata import version; print(version('jsonschema'))"],
                           capture_output=True, text=True, check=True)
    assert shown.stdout.strip() == metadata.version("jsonschema")


def test_the_bench_times_pip_before_and_after_and_uv_when_there_is_one():
    with_uv = [(title, cache) for title, cache, _, _ in bench_bootstrap.rows(Path(find_uv_bin()))]
    without = [(title, cache) for title, cache, _, _ in bench_bootstrap.rows(None)]
    assert without == with_uv[:3]
    assert [title.split()[0] for title, _ in with_uv[3:]] == ["uv", "uv", "uv,"]
    assert {cache for _, cache in with_uv} == {"cold", "warm"}
