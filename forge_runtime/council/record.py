"""`.forge/councils/<id>.md`: what a council was asked, said and cost, in Markdown, beside
`<id>.json`, the same council as data, which `forge council --resume` goes on from.

IDs are `COUNCIL-NNN`, taken by creating the file exclusively, so two councils convened at
once never share one. The front matter links the record to the goal it ran under and the
artifact it concerns, and says whether the council is whole (`status: complete`), lacks a
seat (`incomplete`) or has a chairman's answer without the requested shape (`unshaped`).
Everything a model said is written as it was said; only the front matter, which YAML reads,
is made one safe line.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from forge_runtime.errors import EXIT_USAGE, ForgeError
from forge_runtime.hints import sanitize

COUNCILS_DIR = "councils"
COMPLETE, INCOMPLETE, UNSHAPED = "complete", "incomplete", "unshaped"
_NUMBER = re.compile(r"^COUNCIL-(\d{3,})\.md$")
_ID = re.compile(r"^COUNCIL-\d{3,}$")
_STATE_KEYS = {"id": str, "question": str, "created": str, "convened_by": str, "charge": bool,
               "opinions": dict, "reviews": dict, "chair_attempts": list, "failures": dict,
               "sessions": list, "charged": int, "resumed": int}


def councils_dir(project) -> Path:
    return project.forge_dir / COUNCILS_DIR


def reserve(project) -> tuple[str, Path]:
    """The next free council id and its (now existing, empty) record file."""
    directory = councils_dir(project)
    directory.mkdir(parents=True, exist_ok=True)
    taken = [int(m.group(1)) for name in os.listdir(directory) if (m := _NUMBER.match(name))]
    number = max(taken, default=0) + 1
    while True:
        council_id = f"COUNCIL-{number:03d}"
        path = directory / f"{council_id}.md"
        try:
            os.close(os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o644))
            return council_id, path
        except FileExistsError:
            number += 1


def save(project, state: dict, shown: dict) -> dict:
    """Write the council's data and its Markdown record of `shown` (the council as
    convene.view shows it); returns `shown` with the record's path."""
    directory = councils_dir(project)
    data = directory / f"{state['id']}.json"
    temporary = data.with_suffix(".json.tmp")
    temporary.write_text(json.dumps(state, indent=1, ensure_ascii=False), encoding="utf-8")
    os.replace(temporary, data)
    council = dict(shown)
    path = directory / f"{state['id']}.md"
    path.write_text(render(council), encoding="utf-8")
    council["record"] = path.relative_to(project.root).as_posix()
    return council


def load(project, council_id: str) -> dict:
    """The data of council `council_id`, checked before anything goes on from it."""
    council_id = str(council_id).strip().upper()
    fix = "forge council --help"
    if not _ID.fullmatch(council_id):
        raise ForgeError(f"{council_id!r} is not a council id (they read like COUNCIL-001)",
                         fix, exit_code=EXIT_USAGE, code="FORGE_COUNCIL_UNKNOWN")
    path = councils_dir(project) / f"{council_id}.json"
    try:
        state = json.loads(path.read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise ForgeError(f"there is no council {council_id} to resume "
                         f"(no {path.relative_to(project.root).as_posix()})", fix,
                         exit_code=EXIT_USAGE, code="FORGE_COUNCIL_UNKNOWN") from None
    except (OSError, ValueError) as exc:
        raise ForgeError(f"council {council_id}'s data cannot be read ({exc})", fix,
                         exit_code=EXIT_USAGE, code="FORGE_COUNCIL_DATA_INVALID") from None
    wrong = [key for key, kind in _STATE_KEYS.items()
             if not isinstance(state, dict) or not isinstance(state.get(key), kind)]
    if wrong or state["id"] != council_id:
        raise ForgeError(f"council {council_id}'s data is not a council's "
                         f"({', '.join(wrong) or 'id'} missing or of the wrong type)", fix,
                         exit_code=EXIT_USAGE, code="FORGE_COUNCIL_DATA_INVALID")
    return state


def _quoted(text: str) -> str:
    """One YAML double-quoted line: control characters (which YAML refuses raw) dropped."""
    return '"' + sanitize(text).replace("\\", "\\\\").replace('"', '\\"') + '"'


def render(council: dict) -> str:
    """The record as Markdown with YAML front matter."""
    cost = council["cost"]
    front = [
        "---",
        f"id: {council['id']}",
        f"question: {_quoted(council['question'])}",
        f"created: {council['created']}",
        f"goal: {council.get('goal') or 'null'}",
        f"for: {council.get('for') or 'null'}",
        f"convened_by: {council['convened_by']}",
        f"status: {council['status']}",
        f"verdict: {_quoted(council['verdict'] or '')}",
        f"sessions: {cost['sessions']}",
        f"failed_sessions: {cost['failed']}",
        f"resumed: {council['resumed']}",
        f"turns: {cost['turns']}",
        f"input_tokens: {cost['input_tokens'] if cost['input_tokens'] is not None else 'null'}",
        f"output_tokens: {cost['output_tokens'] if cost['output_tokens'] is not None else 'null'}",
        f"charged_turns: {council.get('charged', 0)}",
        "---",
    ]
    body = [f"# {council['id']}: {' '.join(council['question'].split())}", ""]
    if council["missing"]:
        body += ["## Missing", "", *(f"- {seat}" for seat in council["missing"]), "",
                 f"Resume with `forge council --resume {council['id']}`: it asks only these.",
                 ""]
    body += ["## Verdict", "", council["verdict"] or "(the chairman gave none)", "",
             "## Reasons", "", council["reasons"] or "(none given)", "",
             "## Minority report", "", council["minority"] or "(none given)", ""]
    if council["chair_text"] is not None and council["status"] == UNSHAPED:
        body += ["## The chairman's answer, as said", "",
                 "It lacks the requested shape (Verdict, Reasons, Minority report).", "",
                 council["chair_text"], ""]
    body += ["## Advisors", ""]
    for opinion in council["opinions"]:
        body += [f"### {opinion['perspective']} ({opinion['label']})", "", opinion["text"], ""]
    body += ["## Anonymous peer review", ""]
    for review in council["reviews"]:
        body += [f"### review by {review['reviewer']}", "", review["text"], ""]
    body += ["## Cost", "", "| session | turns | input tokens | output tokens |",
             "| --- | --- | --- | --- |"]
    for session in cost["by_session"]:
        failed = f" failed: {_cell(session['failed'])}" if session.get("failed") else ""
        body.append(f"| {session['role']} ({session['round']}{failed}) | "
                    f"{_or_dash(session['turns'])} | {_or_dash(session['input_tokens'])} | "
                    f"{_or_dash(session['output_tokens'])} |")
    return "\n".join(front + [""] + body) + "\n"


def _cell(text) -> str:
    """Text as one table cell: one line, no column bar."""
    return " ".join(str(text).split()).replace("|", "/")


def _or_dash(value) -> str:
    return "-" if value is None else str(value)
