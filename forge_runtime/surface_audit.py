"""The live half of `forge hints audit`: run every operation on both surfaces and check
each answer against the hint contract.

A seeded workspace (a git repository with a bare remote, a frozen brief and artifacts in
every state) is copied three times; every example call of every operation runs in order
in each copy: once as a CLI command in text, once with `--json`, once as an MCP tool. An
answer passes when it ends with exactly one hint, its commands or tool calls are complete
and accepted by that surface (a CLI command parses with forge's parser; an MCP call names
a tool the server lists, with arguments its schema accepts) and every artifact ID it
names exists. Coverage is the share of operations whose examples ran on all three; an
operation added without an example here is uncovered, and CI fails below 100%.
"""

from __future__ import annotations

import contextlib
import io
import json
import os
import shlex
import shutil
import subprocess
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

from forge_runtime import hints
from forge_runtime.artifacts import frontmatter
from forge_runtime.artifacts.model import ID_IN_TEXT
from forge_runtime.artifacts.store import Store
from forge_runtime.cli.main import main
from forge_runtime.hint_audit import json_problems, output_problems
from forge_runtime.mcp_server import answer
from forge_runtime.operations import (
    BY_NAME,
    OPERATIONS,
    check_arguments,
    cli_command,
    parse_mcp_call,
    run,
)
from forge_runtime.project import find_project
from forge_runtime.steps import OpError, call

MODES = ("cli text", "cli json", "mcp")

PRD_BODY = """
## Goal
{goal}

## Acceptance criteria
- the flag is documented and tested

## Boundaries
- no other flag changes

## Unknowns and assumptions
- none known
"""
EVIDENCE_BODY = "\n## Method\nRan the test suite.\n\n## Result\nAll tests passed.\n"
BRIEF = ("## Goal\nA --trace flag shows every step.\n\n## Acceptance criteria\n- forge --trace "
         "prints each step\n\n## Boundaries\n- output without the flag is unchanged\n\n"
         "## Unknowns and assumptions\n- none\n")

# operation -> the calls to make, in order, in the seeded workspace (see `seed`).
EXAMPLES: dict[str, list[dict]] = {
    "route": [{"task": "add a --verbose flag"}, {"task": "the login page crashes"}],
    "new": [{"kind": "prd", "from_brief": True}, {"kind": "note", "title": "Audit note"},
            {"kind": "evidence", "title": "Evidence for PRD-002", "verdict": "supports",
             "congruence": "CL2", "type": "test"}, {"kind": "prd"}],
    "get": [{"id": "PRD-001"}, {"id": "RFC-001"}, {"id": "PRD-999"}],
    "list": [{}, {"kind": "prd", "status": "draft"}],
    "tree": [{}],
    "link": [{"source": "EVIDENCE-001", "target": "PRD-001"},
             {"source": "PRD-002", "target": "PRD-001", "relation": "depends_on"}],
    "unlink": [{"source": "PRD-002", "target": "PRD-001"},
               {"source": "PRD-002", "target": "PRD-001"}],
    "validate": [{"id": "ADR-001"}, {"all": True}, {"all": True, "ci": True}, {}],
    "score": [{"id": "PRD-001"}, {"id": "ADR-001"}],
    "activate": [{"id": "ADR-001"}, {"id": "PRD-001"}, {"id": "PRD-001"}],
    "supersede": [{"id": "PRD-003", "by": "PRD-004"}, {"id": "PRD-003", "by": "PRD-004"}],
    "deprecate": [{"id": "NOTE-001"}, {"id": "PRD-001", "reason": "replaced"}],
    "renew": [{"id": "RFC-001"}, {"id": "EVIDENCE-003"}, {"id": "PRD-002"}],
    "claim": [{"id": "PRD-002", "agent": "worker-1"}, {"id": "PRD-002", "agent": "worker-2"},
              {"id": "PRD-002", "agent": "bad name"},
              {"id": "PRD-002", "agent": "worker-1", "remote": "origin"}],
    "release": [{"id": "PRD-002", "agent": "worker-1"},
                {"id": "PRD-002", "force": True, "remote": "origin"}],
    "claims": [{}, {"remote": "origin"}],
    "dispatch": [{"agents": 2}],
}


@dataclass
class LiveAudit:
    runs: int = 0
    covered: dict[str, set[str]] = field(default_factory=dict)
    findings: list[tuple[str, str]] = field(default_factory=list)   # (where, problem)
    uncovered: list[str] = field(default_factory=list)

    @property
    def coverage(self) -> float:
        full = [op.name for op in OPERATIONS if self.covered.get(op.name) == set(MODES)]
        return len(full) / len(OPERATIONS)


def _git(*args: str, cwd: Path) -> None:
    subprocess.run(["git", *args], cwd=cwd, check=True, capture_output=True)


def seed(root: Path) -> Path:
    """The seeded workspace under `root`: returns the project directory.

        PRD-001 draft, filled, EVIDENCE-001 (supports) informs it    -> ready to activate
        PRD-002 draft, filled, same file as PRD-001                  -> overlaps PRD-001
        PRD-003 active with EVIDENCE-002                             -> can be superseded
        ADR-001 draft from the template                              -> fails validation
        RFC-001 active, its EVIDENCE-003 expired                     -> stale
    """
    project = root / "project"
    project.mkdir(parents=True)
    _git("init", "-q", "--bare", str(root / "remote.git"), cwd=root)
    _git("init", "-q", cwd=project)
    _git("remote", "add", "origin", str(root / "remote.git"), cwd=project)
    (project / ".forge" / "notes").mkdir(parents=True)
    (project / ".forge" / "notes" / "brief.md").write_text(BRIEF, encoding="utf-8")

    def op(name: str, **args):
        reply = run(name, args, cwd=project)
        if reply.exit_code:
            raise RuntimeError(f"seeding {name} {args} failed: {reply.data}")
        return reply.data

    for goal in ("A --verbose flag prints each step.", "A --quiet flag prints nothing.",
                 "A --color flag colours the output."):
        op("new", kind="prd", title=goal.split(" flag")[0][2:] + " flag",
           body=PRD_BODY.format(goal=goal), affected_files=["src/cli.py"])
    for target in ("PRD-001", "PRD-003"):
        op("new", kind="evidence", title=f"Evidence for {target}", verdict="supports",
           congruence="CL3", type="test", body=EVIDENCE_BODY)
    op("link", source="EVIDENCE-001", target="PRD-001")
    op("link", source="EVIDENCE-002", target="PRD-003")
    op("activate", id="PRD-003")
    op("new", kind="adr", title="Pick a flag parser")
    op("new", kind="rfc", title="Output levels", affected_files=["src/output.py"],
       body="\n## Context\nOutput is all or nothing.\n\n## Proposal\nLevels.\n\n"
            "## Alternatives\nNone.\n")
    op("new", kind="evidence", title="Evidence for RFC-001", verdict="supports",
       congruence="CL2", type="review", body=EVIDENCE_BODY)
    op("link", source="EVIDENCE-003", target="RFC-001")
    op("activate", id="RFC-001")
    evidence = next((project / ".forge" / "artifacts").glob("EVIDENCE-003-*.md"))
    meta, body = frontmatter.split(evidence.read_text(encoding="utf-8"))
    meta["valid_until"] = "2020-01-01"
    evidence.write_text(frontmatter.join(meta, body), encoding="utf-8")
    return project


def _cli(project: Path, words: list[str]) -> tuple[int, str, str]:
    out, err = io.StringIO(), io.StringIO()
    here = os.getcwd()
    os.chdir(project)
    try:
        with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
            code = main(words)
    finally:
        os.chdir(here)
    return code, out.getvalue(), err.getvalue()


def hinted(stdout: str, stderr: str) -> list[str]:
    """The commands (or tool calls) an answer's hint names: its next action and fallbacks,
    from a JSON object, or from the rendered hint of text or a bare JSON array."""
    try:
        payload = json.loads(stdout)
    except ValueError:
        payload = None
    if isinstance(payload, dict):
        hint = payload.get("_hint") or {}
        return [step for step in [payload.get("_next_action"), *hint.get("or", [])] if step]
    text = stderr if isinstance(payload, list) else stdout + stderr
    try:
        return hints.commands_of(hints.split_rendered(text.rstrip("\n"))[1])
    except ValueError:
        return []


def ids_missing(steps: list[str], project: Path) -> list[str]:
    known = Store(find_project(project)).by_id()
    return sorted({found for step in steps for found in ID_IN_TEXT.findall(step)
                   if found not in known})


def mcp_problems(payload: dict, hint_text: str | None) -> list[str]:
    """Why an MCP answer's hint breaks the contract: each tool call it names must be a
    listed tool whose arguments the schema accepts."""
    if hint_text is not None:
        problems = output_problems(hint_text)
        steps = hints.commands_of(hints.split_rendered(hint_text)[1]) if not problems else []
    else:
        hint = payload.get("_hint") if isinstance(payload, dict) else None
        if not isinstance(hint, dict) or "_next_action" not in payload:
            return ["MCP answer lacks _next_action or _hint"]
        problems = []
        steps = [step for step in [payload["_next_action"], *hint.get("or", [])] if step]
    for step in steps:
        if step.startswith("/"):
            continue
        try:
            parsed = parse_mcp_call(step)
        except ValueError:
            problems.append(f"`{step}` is not a tool call")
            continue
        if parsed.op not in BY_NAME:
            problems.append(f"`{step}` names no tool the server lists")
            continue
        try:
            check_arguments(BY_NAME[parsed.op], parsed.args)
        except OpError as exc:
            problems.append(f"`{step}`: {exc.message}")
    return problems


def audit_live() -> LiveAudit:
    """Run every example on every surface in a fresh seeded workspace; see the module doc."""
    result = LiveAudit()
    with tempfile.TemporaryDirectory(prefix="forge-audit-") as scratch:
        base = Path(scratch)
        seeded = seed(base / "seed")
        copies = {}
        for mode in MODES:
            shutil.copytree(base / "seed", base / mode.replace(" ", "-"), symlinks=True)
            copies[mode] = base / mode.replace(" ", "-") / "project"
            _git("remote", "set-url", "origin", str(base / mode.replace(" ", "-") / "remote.git"),
                 cwd=copies[mode])
        del seeded
        for operation in OPERATIONS:
            examples = EXAMPLES.get(operation.name, [])
            if not examples:
                result.uncovered.append(operation.name)
                continue
            for arguments in examples:
                words = shlex.split(cli_command(call(operation.name, **arguments)))[1:]
                shown = "forge " + " ".join(words)
                for mode in MODES:
                    project = copies[mode]
                    result.runs += 1
                    if mode == "mcp":
                        parts = answer(operation.name, arguments, cwd=project)
                        payload = json.loads(parts["texts"][0])
                        hint = parts["texts"][1] if len(parts["texts"]) > 1 else None
                        problems = mcp_problems(payload, hint)
                        steps = hinted(parts["texts"][0], hint or "")
                        where = f"mcp {operation.name} {json.dumps(arguments)}"
                    else:
                        as_json = mode == "cli json"
                        code, out, err = _cli(project, [*words, "--json"] if as_json else words)
                        problems = (json_problems(out, err) if as_json
                                    else output_problems(out + err))
                        if "Traceback" in err:
                            problems.append("crashed")
                        steps = hinted(out, err)
                        where = f"{shown}{' --json' if as_json else ''}"
                    missing = ids_missing(steps, project)
                    if missing:
                        problems.append(f"names artifacts that do not exist: {missing}")
                    result.findings.extend((where, problem) for problem in problems)
                    result.covered.setdefault(operation.name, set()).add(mode)
    return result
