"""Final gates: the checks a goal must pass, each receipt bound to the files it covers.

`.forge/gates.yaml` names each gate's command and the globs of its candidate boundary. A run
writes a receipt holding the boundary's content hash; a receipt is stale exactly when that
hash or the gate's definition changed, so after an edit only the affected gates re-run.

    config     .forge/gates.yaml: schema, line-precise errors, a cache of the validated form
    boundary   which files a gate covers, and their hash through a stat cache
    receipts   the receipt of a gate's last run, and its log
    runner     `forge gate run`: run, stream to a log, write receipts
    status     fresh / stale / failing / never run, and the one hint that follows
    evidence   a fresh passing receipt as evidence for an artifact
    goal       what a running goal's Stop hook and `forge goal` say about the gates
    recorded   the final gates a goal's `/goal` recorded in the ledger: what it is judged by
    confirm    forge runs the recorded gates itself: the run that verifies a goal
    confined   that run, by the goal's recorded posture, as confined as the agent's Bash
    seccomp    the filter that keeps a confined run off Unix sockets
    files      the small JSON files all of them keep under `.forge/local/gates/`
"""

import os

from forge_runtime.goal.store.layout import GATES_DIR
from forge_runtime.project import join

GATES_FILE = "gates.yaml"


def defined(project) -> bool:
    """True when the project has a gates file: one stat. Here rather than in `config`, so a
    goal's Stop and SessionEnd in a project without gates import nothing more of the package."""
    return os.path.lexists(join(project.forge_dir, GATES_FILE))


def in_play(project) -> bool:
    """Whether a goal's gates can matter here: a gates file, or gates records in the
    ledger (a final gate still counts when the file is deleted during its goal). Two stats."""
    return defined(project) or os.path.lexists(join(project.ledger_root, GATES_DIR))
