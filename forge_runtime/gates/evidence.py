"""A fresh, passing gate receipt as evidence for an artifact (`forge gate evidence`).

The artifact engine is not part of forge yet, so `record` writes the evidence as a receipt
file under `.forge/evidence/<ID>/`; it is the one place to switch to the engine's own
evidence creation once that exists.
"""

from __future__ import annotations

import re
from pathlib import Path

from forge_runtime.errors import EXIT_REFUSED, EXIT_USAGE, ForgeError
from forge_runtime.gates import status as gate_status
from forge_runtime.gates.files import write_json

ARTIFACT_ID = re.compile(r"^[A-Z]{2,16}-[0-9]{3,6}$")


def record(project, name: str, artifact_id: str) -> Path:
    """Write the evidence that gate `name` passes on the tree as it is, for `artifact_id`."""
    if not ARTIFACT_ID.match(artifact_id):
        raise ForgeError(f"{artifact_id!r} is not an artifact id such as PRD-001",
                         f"forge gate evidence {name} --for PRD-001", exit_code=EXIT_USAGE)
    from forge_runtime.gates import config, runner

    gate = runner.select(config.load(project), [name])
    state = gate_status.assess(project, gate)[0]
    if state.state != gate_status.FRESH:
        raise ForgeError(f"gate {name} is {state.state} ({state.why}): only a fresh, passing "
                         "receipt is evidence", gate_status.run_command([name]),
                         exit_code=EXIT_REFUSED, code="FORGE_GATE_NOT_FRESH")
    receipt = state.receipt
    path = project.forge_dir / "evidence" / artifact_id / f"{name}.json"
    write_json(path, {"kind": "evidence", "type": "test", "verdict": "supports",
                      "for": artifact_id, "gate": name, "command": receipt["command"],
                      "exit_code": receipt["exit_code"], "ran_at": receipt["finished_at"],
                      "duration_s": receipt["duration_s"], "files": receipt["files"],
                      "boundary_hash": receipt["boundary_hash"],
                      "output_sha256": receipt["output_sha256"]})
    return path
