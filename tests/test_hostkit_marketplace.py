"""The host kit's marketplace install packs the hook dependencies from this interpreter's own
installed copies, so a fresh home bootstraps forge-env offline (the install itself runs in
tests/host/test_offswitch_host.py against the real host)."""

from __future__ import annotations

import zipfile
from importlib import metadata

from forge_runtime.hostkit.marketplace import wheelhouse


def test_the_wheelhouse_holds_each_dependency_and_what_it_needs(tmp_path):
    wheels = {path.name.split("-")[0]: path for path in wheelhouse(tmp_path).glob("*.whl")}
    assert {"pyyaml", "filelock", "jsonschema", "attrs", "referencing", "rpds_py"} <= set(wheels)
    for name, path in wheels.items():
        with zipfile.ZipFile(path) as wheel:
            infos = {entry.split("/")[0] for entry in wheel.namelist()
                     if entry.split("/")[0].endswith(".dist-info")}
            assert len(infos) == 1, (name, infos)
            (info,) = infos
            assert {f"{info}/METADATA", f"{info}/WHEEL", f"{info}/RECORD"} <= set(
                wheel.namelist())
            assert not any("__pycache__" in entry for entry in wheel.namelist())
    yaml = metadata.distribution("pyyaml")
    tags = [line.split(":", 1)[1].strip() for line in yaml.read_text("WHEEL").splitlines()
            if line.startswith("Tag:")]
    python, abi, platform = wheels["pyyaml"].name.removesuffix(".whl").split("-")[-3:]
    named = {(p, a, f) for p in python.split(".") for a in abi.split(".")
             for f in platform.split(".")}
    assert {tuple(tag.split("-")) for tag in tags} == named  # a compiled wheel keeps its tags
