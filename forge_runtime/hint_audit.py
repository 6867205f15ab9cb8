"""`forge hints audit`: check the hint commands forge can enumerate without running anything.

Two places hold hints that can be read ahead of time:

- the Markdown forge ships and installs (workflows, skills): `Next:`/`Or:`/`Fix:` lines and
  inline `forge ...` code spans, which agents copy as they are;
- forge's own source: string literals handed to `hints.next_`, `hints.error`, `ForgeError`
  and `or_=[...]`, found by reading the syntax tree, never by importing or running code.

Each command must carry no placeholder such as `<id>`, and a `forge` command must parse
with forge's own parser. Hints assembled at run time (f-strings) are counted, not checked
here: `output_problems` and `json_problems` check what a command really printed, for the
CLI contract test and `forge demo` alike.

The project's documentation (README.md, docs/) is read the same way by `document_commands`,
which also tells a synopsis (`forge brief check [FILE|-]`) from a command to copy and checks
it against that command's `--help` (tests/test_docs.py).
"""

from __future__ import annotations

import ast
import itertools
import json
import re
from dataclasses import dataclass, field
from pathlib import Path

from forge_runtime import hints
from forge_runtime.cli.main import help_of, parses

_HINT_LINE = re.compile(r"^\s*(?:[-*>]\s*)?`?(Next|Or|Fix):\s+(.+?)`?\s*$")
_FORGE_SPAN = re.compile(r"`(forge(?:\s[^`]*)?)`")
# Call (as written) -> index of its command argument.
_HINT_CALLS = {"hints.next_": 0, "hints.error": 1, "ForgeError": 1, "errors.ForgeError": 1}
_FIX_KEYWORDS = {"fix", "command"}


@dataclass(frozen=True)
class Finding:
    where: str          # file:line
    command: str
    problem: str


@dataclass
class Audit:
    checked: int = 0
    dynamic: int = 0
    files: int = 0
    findings: list[Finding] = field(default_factory=list)

    def check(self, where: str, command: str) -> None:
        self.checked += 1
        command = command.strip()
        problem = command_problem(command)
        if problem:
            self.findings.append(Finding(where, command, problem))


def command_problem(command: str) -> str | None:
    """Why a command a hint names is not one to copy as it is, or None when it is."""
    if hints.has_placeholder(command):
        return "holds a placeholder"
    if command.split()[:1] == ["forge"] and not parses(command):
        return "does not parse as a forge command"
    return None


def _problems_of(commands: list[str]) -> list[str]:
    return [f"`{command}` {problem}" for command in commands
            if (problem := command_problem(command))]


def output_problems(text: str) -> list[str]:
    """Why one printed output breaks the contract; empty when it ends with exactly one hint
    whose commands are complete."""
    try:
        body, hint = hints.split_rendered(text)
    except ValueError as exc:
        return [str(exc)]
    earlier = [f"a {marker} line before the final hint"
               for marker, _ in hints.parse_lines("\n".join(body))]
    return earlier + _problems_of(hints.commands_of(hint))


def json_problems(stdout: str, stderr: str) -> list[str]:
    """The same for `--json` output: `_next_action` and `_hint` on an object, or a bare
    array with its hint on stderr."""
    try:
        payload = json.loads(stdout)
    except ValueError:
        return [f"stdout is not JSON: {stdout[:200]!r}"]
    if isinstance(payload, list):
        return output_problems(stderr)
    hint = payload.get("_hint") if isinstance(payload, dict) else None
    if not isinstance(hint, dict) or "_next_action" not in payload:
        return ["JSON lacks _next_action or _hint"]
    if hint.get("marker") not in (hints.NEXT, hints.WAIT, hints.DONE, hints.FIX):
        return [f"_hint marker is {hint.get('marker')!r}"]
    return _problems_of([c for c in [payload["_next_action"], *hint.get("or", [])] if c])


def markdown_commands(text: str) -> list[tuple[int, str]]:
    """(line number, command) for each hint line and inline `forge ...` span of a document."""
    found = []
    for number, line in enumerate(text.splitlines(), start=1):
        match = _HINT_LINE.match(line)
        if match:
            found.append((number, match.group(2).strip("`").strip()))
            continue
        found.extend((number, span) for span in _FORGE_SPAN.findall(line))
    return found


_FENCE = re.compile(r"^\s*(?:```|~~~)\s*([\w-]*)")
_SHELL_LANGUAGES = {"sh", "bash", "shell", "console"}
_SHELL_SEPARATOR = re.compile(r"&&|\|\||;|\|")
# What makes an inline span a synopsis (`forge new KIND [TITLE]`) rather than a command to
# copy: an optional part, alternatives, a slot, an ellipsis or a word in capitals (not an
# ID such as PRD-001).
_SYNOPSIS = re.compile(r"\[|\||<[^<>]+>|\.\.\.|(?<![\w-])[A-Z][A-Z_]*(?![\w-])")
_DOC_SPAN = re.compile(r"`(?:(?:Next|Or|Fix):\s+)?(forge(?:\s[^`]*)?)`")
_COMMAND_WORDS = re.compile(r"[a-z][a-z0-9-]*(?:\|[a-z][a-z0-9-]*)*")
_OPTION = re.compile(r"(?<![\w-])--[a-z][a-z0-9-]*")


def document_commands(text: str) -> tuple[list[tuple[int, str]], list[tuple[int, str]]]:
    """(commands, synopses) of forge that a page of documentation shows, each (line, text).

    Commands are what a reader copies: in a shell code block (```sh) every command of every
    line that runs forge (after a `$ ` prompt, `&&`, `;` or a pipe); in any other code block
    (printed output) every `Next:`/`Or:`/`Fix:` line naming forge; in prose every complete
    inline `forge ...` span, also one that wraps onto the next line. Synopses are inline
    spans that describe a command's form (`forge brief check [FILE|-]`), which
    `synopsis_problem` checks.
    """
    commands: list[tuple[int, str]] = []
    synopses: list[tuple[int, str]] = []
    prose: list[str] = []     # the paragraph being read, whose spans may wrap
    prose_start = 0

    def end_paragraph() -> None:
        joined = "\n".join(prose)
        for match in _DOC_SPAN.finditer(joined):
            span = " ".join(match.group(1).split())
            number = prose_start + joined.count("\n", 0, match.start())
            (synopses if _SYNOPSIS.search(span) else commands).append((number, span))
        prose.clear()

    language = None  # the open code block's language ("" when unnamed); None outside code
    for number, line in enumerate(text.splitlines(), start=1):
        fence = _FENCE.match(line)
        if fence or language is not None or not line.strip():
            end_paragraph()
        if fence:
            language = None if language is not None else fence.group(1).lower()
        elif language in _SHELL_LANGUAGES:
            code = line.split(" #", 1)[0].strip().removeprefix("$ ")
            commands.extend((number, part.strip()) for part in _SHELL_SEPARATOR.split(code)
                            if part.split()[:1] == ["forge"])
        elif language is not None:
            hint = _HINT_LINE.match(line)
            if hint and hint.group(2).split()[:1] == ["forge"]:
                commands.append((number, hint.group(2).strip("`").strip()))
        elif line.strip():
            prose_start = prose_start if prose else number
            prose.append(line)
    end_paragraph()
    return commands, synopses


def synopsis_problem(synopsis: str) -> str | None:
    """Why a synopsis does not describe a real forge command, or None: its leading lowercase
    words must name a command (each of `a|b` alternatives), and every `--option` it shows
    must be one that command's `--help` lists."""
    path = []
    for word in synopsis.split()[1:]:
        if not _COMMAND_WORDS.fullmatch(word):
            break
        path.append(word.split("|"))
    helps = []
    for alternative in itertools.product(*path):
        text = help_of(list(alternative))
        if text is None:
            return f"`forge {' '.join(alternative)}` is not a forge command"
        helps.append(text)
    unknown = [option for option in _OPTION.findall(synopsis)
               if not any(option in _OPTION.findall(text) for text in helps)]
    return f"no option {', '.join(unknown)} in its --help" if unknown else None


def _constants(tree: ast.Module) -> dict[str, str]:
    """Module-level `NAME = "text"` assignments, so `hints.error(msg, FIX)` can be resolved."""
    names = {}
    for node in tree.body:
        if (isinstance(node, ast.Assign) and isinstance(node.value, ast.Constant)
                and isinstance(node.value.value, str)):
            names.update({t.id: node.value.value for t in node.targets
                          if isinstance(t, ast.Name)})
    return names


def _call_name(node: ast.Call) -> str | None:
    """`hints.next_`, `ForgeError`: the callee as written, when it is a plain (dotted) name."""
    func = node.func
    if isinstance(func, ast.Name):
        return func.id
    if isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name):
        return f"{func.value.id}.{func.attr}"
    return None


def source_commands(source: str) -> tuple[list[tuple[int, str]], int]:
    """(line, command) for each literal hint command in Python source, and a count of the
    ones built at run time, which cannot be checked without running the code."""
    tree = ast.parse(source)
    names = _constants(tree)
    found: list[tuple[int, str]] = []
    dynamic = 0
    for node in ast.walk(tree):
        if not isinstance(node, ast.Call):
            continue
        name = _call_name(node)
        candidates: list[ast.expr] = []
        if name in _HINT_CALLS and len(node.args) > _HINT_CALLS[name]:
            candidates.append(node.args[_HINT_CALLS[name]])
        for keyword in node.keywords:
            if name in _HINT_CALLS and keyword.arg in _FIX_KEYWORDS:
                candidates.append(keyword.value)
            if keyword.arg == "or_" and isinstance(keyword.value, ast.List | ast.Tuple):
                candidates.extend(keyword.value.elts)
        for expr in candidates:
            if isinstance(expr, ast.Constant) and isinstance(expr.value, str):
                found.append((expr.lineno, expr.value))
            elif isinstance(expr, ast.Name) and expr.id in names:
                found.append((expr.lineno, names[expr.id]))
            else:
                dynamic += 1
    return found, dynamic


def audit(markdown_roots: list[tuple[Path, str]], source_root: Path) -> Audit:
    """Audit every Markdown file under each (directory, label) and every module under
    `source_root`; labels name where a finding is (e.g. `.forge` for an installed copy)."""
    result = Audit()
    for root, label in markdown_roots:
        for path in sorted(root.rglob("*.md")):
            result.files += 1
            shown = f"{label}/{path.relative_to(root).as_posix()}"
            for number, command in markdown_commands(path.read_text(encoding="utf-8")):
                result.check(f"{shown}:{number}", command)
    for path in sorted(source_root.rglob("*.py")):
        result.files += 1
        found, dynamic = source_commands(path.read_text(encoding="utf-8"))
        result.dynamic += dynamic
        shown = f"forge_runtime/{path.relative_to(source_root).as_posix()}"
        for number, command in found:
            result.check(f"{shown}:{number}", command)
    return result
