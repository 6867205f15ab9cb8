"""A fresh, passing gate receipt as evidence for an artifact (`forge gate evidence`).

The evidence is an artifact of the artifact engine (`record_evidence`): type test, verdict
supports, congruence CL3 (the gate judged exactly the files it covers), linked to the ID.
"""

from __future__ import annotations

import re

from forge_runtime.artifacts.authoring import record_evidence
from forge_runtime.errors import EXIT_REFUSED, EXIT_USAGE, ForgeError
from forge_runtime.gates import config, runner
from forge_runtime.gates import status as gate_status
from forge_runtime.steps import OpError

ARTIFACT_ID = re.compile(r"^[A-Z]{2,16}-[0-9]{3,6}$")


def record(project, name: str, artifact_id: str) -> str:
    """Write the evidence that gate `name` passes on the tree as it is, for `artifact_id`."""
    if not ARTIFACT_ID.match(artifact_id):
        raise ForgeError(f"{artifact_id!r} is not an artifact id such as PRD-001",
                         f"forge gate evidence {name} --for PRD-001", exit_code=EXIT_USAGE)
    gate = runner.select(config.load(project), [name])
    state = gate_status.assess(project, gate)[0]
    if state.state != gate_status.FRESH:
        raise ForgeError(f"gate {name} is {state.state} ({state.why}): only a fresh, passing "
                         "receipt is evidence", gate_status.run_command([name]),
                         exit_code=EXIT_REFUSED, code="FORGE_GATE_NOT_FRESH")
    receipt = state.receipt
    return _record(project, artifact_id, name, receipt)


def _record(project, artifact_id: str, name: str, receipt: dict) -> str:
    """The artifact engine's evidence, linked to `artifact_id`; returns the evidence id."""
    body = (f"Gate `{name}` ran `{receipt['command']}` and passed (exit 0) in "
            f"{receipt['duration_s']:.1f} s at {receipt['finished_at']}, over "
            f"{receipt['files']} file(s) of its boundary, content hash "
            f"{receipt['boundary_hash']}; output sha256 {receipt['output_sha256']}.\n")
    try:
        created = record_evidence(project, artifact_id, f"gate {name} passes", body=body,
                                  verdict="supports", congruence="CL3", type="test")
    except OpError as exc:
        raise ForgeError(exc.message, "forge list", exit_code=exc.exit_code or EXIT_USAGE,
                         code=exc.code) from None
    return created["id"]
