"""`.forge/councils/<id>.md`: what a council was asked, said and cost, in Markdown.

IDs are `COUNCIL-NNN`, taken by creating the file exclusively, so two councils convened at
once never share one. The front matter links the record to the goal it ran under and the
artifact it concerns.
"""

from __future__ import annotations

import os
import re
from pathlib import Path

COUNCILS_DIR = "councils"
_NUMBER = re.compile(r"^COUNCIL-(\d{3,})\.md$")


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


def _quoted(text: str) -> str:
    return '"' + " ".join(str(text).split()).replace("\\", "\\\\").replace('"', '\\"') + '"'


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
        f"verdict: {_quoted(council['verdict'] or '')}",
        f"sessions: {cost['sessions']}",
        f"turns: {cost['turns']}",
        f"input_tokens: {cost['input_tokens'] if cost['input_tokens'] is not None else 'null'}",
        f"output_tokens: {cost['output_tokens'] if cost['output_tokens'] is not None else 'null'}",
        f"charged_turns: {council.get('charged', 0)}",
        "---",
    ]
    body = [f"# {council['id']}: {' '.join(council['question'].split())}", "",
            "## Verdict", "", council["verdict"] or "(the chairman gave none)", "",
            "## Reasons", "", council["reasons"] or "(none given)", "",
            "## Minority report", "", council["minority"] or "(none given)", "",
            "## Advisors", ""]
    for opinion in council["opinions"]:
        body += [f"### {opinion['perspective']} ({opinion['label']})", "", opinion["text"], ""]
    body += ["## Anonymous peer review", ""]
    for review in council["reviews"]:
        body += [f"### review by {review['reviewer']}", "", review["text"], ""]
    body += ["## Cost", "", "| session | turns | input tokens | output tokens |",
             "| --- | --- | --- | --- |"]
    for session in cost["by_session"]:
        body.append(f"| {session['role']} ({session['round']}) | {session['turns']} | "
                    f"{_or_dash(session['input_tokens'])} | {_or_dash(session['output_tokens'])} |")
    return "\n".join(front + [""] + body) + "\n"


def _or_dash(value) -> str:
    return "-" if value is None else str(value)
