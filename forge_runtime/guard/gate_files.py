"""forge's gate files in the guard: the gates file while a goal is in progress, and the
receipt key in every tool.

- `.forge/gates.yaml` is a protected path only while the project's ledger holds a goal in
  progress (active: not exhausted, complete or cancelled). Its entry (kind WHILE_GOAL) joins
  the protected paths of every writing call, and only a call that would write it pays for
  asking the ledger (`in_progress`); with no goal in progress the call is decided again
  without the entry (so is one refused for merely naming it, in a command forge cannot
  read). A goal is judged by the gates its `/goal` recorded (gates/recorded.py)
  whatever the file says, so this refusal is the first layer, not the only one: a person
  changes the gates between goals, or edits the file and types the same `/goal` again,
  which records the new definitions for the goal.
- The receipt key (`<ledger root>/gates/receipt.key`) is refused to every reading tool
  (Read, NotebookRead, Grep, Glob, LS), to a Bash command or an opaque tool that names it or
  the ledger's gates directory, in every posture and role. Depth only: the agent's own
  `forge gate run` reads that key to seal its receipts, so any program the agent runs can;
  receipts therefore never verify a goal (gates/confirm.py does).

Standard library and `paths` only: the key check runs on the allow path of every Read.
"""

import os

from forge_runtime.goal.store.layout import GATES_DIR, RECEIPT_KEY, receipt_key
from forge_runtime.protected.paths import Finding, Protected, expand, holds, inside
from forge_runtime.roots import FORGE_DIR, LEDGER_DIR_NAME

WHILE_GOAL = "while a goal is in progress"
GATES_FILE = "gates.yaml"
# The input fields through which each reading tool names what it reads.
READ_FIELDS = {"Read": ("file_path",), "NotebookRead": ("notebook_path",),
               "Grep": ("path", "glob"), "Glob": ("path", "pattern"), "LS": ("path",)}
KEY_WORDS = (RECEIPT_KEY, LEDGER_DIR_NAME + "/" + GATES_DIR)


def gates_entry(project) -> Protected:
    """The gates file as a protected entry that applies while a goal is in progress
    (`project`: `roots.locate()`'s strings or a Project)."""
    path = os.path.realpath(os.path.join(project[0], FORGE_DIR, GATES_FILE))
    return Protected(path, "the final gates file .forge/gates.yaml", WHILE_GOAL,
                     "forge goal status")


def may_be_the_gates_file(finding: Finding | None, tool_input: dict) -> bool:
    """Whether `finding` may be owed to the gates file's entry alone: it names that entry,
    or names none (a command forge cannot prove read-only that mentions a protected path)
    in an input that names the gates file. Only then is the call decided again without it."""
    if finding is None:
        return False
    if finding.entry is not None:
        return finding.entry.kind == WHILE_GOAL
    return GATES_FILE in repr(tool_input)


def in_progress(ledger_root: str) -> str | None:
    """The nonce of a goal in progress in this ledger, or the store's AWAITING_FIRST_STOP, or
    None: the goal store answers (goal/store/in_progress.py), imported only by a call that
    would write the gates file."""
    from forge_runtime.goal.store.in_progress import goal_in_progress

    return goal_in_progress(ledger_root)


def refusal(tool: str, finding: Finding, nonce: str):
    """The deny for a call that would change the gates file during goal `nonce`."""
    from forge_runtime import hints
    from forge_runtime.goal.store.in_progress import AWAITING_FIRST_STOP

    return hints.error(
        f"forge guard: {tool} {finding.message} while goal {nonce} is in progress (its final "
        "gates were recorded at its /goal, and it is judged by those)",
        "forge goal status" if nonce == AWAITING_FIRST_STOP else
        f"forge goal status --nonce {nonce}",
        "shows the goal and its gates; a person changes .forge/gates.yaml between goals, or "
        "edits it and types the same /goal again to record the new gates")


def key_finding(tool: str, tool_input: dict, cwd: str, env: dict[str, str],
                ledger_root: str) -> Finding | None:
    """Why this call would read the receipt key, or None."""
    if tool == "Bash":
        return _named(tool_input.get("command"))
    fields = READ_FIELDS.get(tool)
    if fields is None:
        if tool.startswith("mcp__") or tool == "PowerShell":
            return _named(repr(tool_input))
        return None
    key = os.path.realpath(receipt_key(ledger_root))
    gates_dir, ledger_parent = os.path.dirname(key), os.path.dirname(ledger_root)
    for field in fields:
        value = tool_input.get(field)
        if not isinstance(value, str):
            continue
        named = _named(value)
        if named is not None:
            return named
        path = expand(value, cwd, env)
        # a search over a directory that holds the key, inside the ledger's own parent
        # (`.git`), reads it; one over the whole project is left to the host's own rules
        if path is not None and (inside(path, gates_dir) or (
                holds(path, key) and inside(path, os.path.realpath(ledger_parent)))):
            return Finding(f"would read the gate receipts' key ({value})")
    return None


def _named(text) -> Finding | None:
    if isinstance(text, str):
        for word in KEY_WORDS:
            if word in text:
                return Finding(f"names the gate receipts' key or its directory ({word})")
    return None
