"""What a Codex `apply_patch` call would do to protected paths: the same rules as the file tools.

Codex's patch text (`tool_input.command`) names every file it touches on its own header
lines: `*** Add File: <path>`, `*** Update File: <path>` (optionally followed by
`*** Move to: <path>`) and `*** Delete File: <path>`. Each named path is checked like a
Write's `file_path`. `.forge/local/state.md` keeps its rule: an added file may only carry
`goal: null`, an update is applied to the current text hunk by hunk and allowed only when
the front matter comes out byte-identical; deleting or moving it is refused. A host settings
file or Codex's `config.toml` is patched the same way and its resulting content judged
(`host_settings`).
"""

from __future__ import annotations

from forge_runtime import safeio
from forge_runtime.guard.edits import EMPTY_FRONT_MATTER, front_matter
from forge_runtime.protected.paths import (
    CODEX_CONFIG,
    FRONT_MATTER,
    SETTINGS,
    Finding,
    Protected,
    expand,
    hit,
)

ADD, UPDATE, DELETE, MOVE = "*** Add File: ", "*** Update File: ", "*** Delete File: ", \
    "*** Move to: "
HEADERS = (ADD, UPDATE, DELETE, MOVE)


def operations(patch: str) -> list[tuple[str, str, list[str]]]:
    """(header, path, body lines) for each file operation the patch names, in order."""
    found: list[tuple[str, str, list[str]]] = []
    for line in patch.splitlines():
        header = next((h for h in HEADERS if line.startswith(h)), None)
        if header is not None:
            found.append((header, line[len(header):].strip(), []))
        elif found and not line.startswith("*** "):
            found[-1][2].append(line)
    return found


def check(tool_input: dict, cwd: str, env: dict[str, str],
          protected: list[Protected]) -> Finding | None:
    """Why this apply_patch call must be refused, or None."""
    patch = tool_input.get("command", tool_input.get("patch", tool_input.get("input")))
    if not isinstance(patch, str):
        return Finding("input has no patch text, so forge cannot tell what it writes")
    if "\0" in patch:
        return Finding("patch holds a NUL byte, so forge cannot read the paths it names")
    ops = operations(patch)
    if not ops and "*** Begin Patch" not in patch:
        return Finding("input is not a patch forge can read, so it cannot tell what it writes")
    for index, (header, word, body) in enumerate(ops):
        path = expand(word, cwd, env) if word else None
        if path is None:
            return Finding(f"names `{word}`, a path forge cannot resolve")
        entry = hit(path, protected, destructive=header == DELETE)
        if entry is None:
            continue
        moved = index + 1 < len(ops) and ops[index + 1][0] == MOVE
        if path == entry.path and header in (ADD, UPDATE) and not moved:
            if entry.kind == FRONT_MATTER:
                finding = _state_patch(header, body, path, entry)
            elif entry.kind in (SETTINGS, CODEX_CONFIG):
                finding = _host_patch(header, body, path, entry)
            else:
                finding = Finding(f"would write {entry.label} ({word})", entry)
            if finding is None:
                continue
            return finding
        return Finding(f"would write {entry.label} ({word})", entry)
    return None


def _state_patch(header: str, body: list[str], path: str, entry: Protected) -> Finding | None:
    if header == ADD:
        before, after = EMPTY_FRONT_MATTER, "".join(line[1:] + "\n" for line in body
                                                    if line.startswith("+"))
    else:
        current = _read(path) or ""
        before, after = front_matter(current), apply_hunks(current, body)
        if after is None:
            return Finding("patch for state.md does not apply to its current text, so forge "
                           "cannot tell whether it changes the goal fields", entry)
    if front_matter(after) != before:
        return Finding(f"would change {entry.label} (only forge's hooks write the `goal:` "
                       "front matter; patch the checklist below it instead)", entry)
    return None


def _host_patch(header: str, body: list[str], path: str, entry: Protected) -> Finding | None:
    from forge_runtime.guard import host_settings

    current = _read(path)
    if header == ADD:
        after = "".join(line[1:] + "\n" for line in body if line.startswith("+"))
    else:
        after = apply_hunks(current or "", body)
        if after is None:
            return Finding(f"patch for {entry.label} does not apply to its current text, so "
                           "forge cannot tell whether it switches forge off", entry)
    return host_settings.judge(entry, path, current, after)


def _read(path: str) -> str | None:
    try:
        with safeio.reader(path, encoding="utf-8", newline="", follow_links=True) as handle:
            return handle.read()
    except FileNotFoundError:
        return None


def apply_hunks(text: str, body: list[str]) -> str | None:
    """`text` with an Update's hunks applied in order (context and `-` lines must match);
    None when a hunk does not match."""
    lines = text.split("\n")
    position = 0
    for hunk in _hunks(body):
        old = [line[1:] for line in hunk if line[:1] in (" ", "-")]
        new = [line[1:] for line in hunk if line[:1] in (" ", "+")]
        at = _find(lines, old, position)
        if at is None:
            return None
        lines[at:at + len(old)] = new
        position = at + len(new)
    return "\n".join(lines)


def _hunks(body: list[str]) -> list[list[str]]:
    hunks: list[list[str]] = [[]]
    for line in body:
        if line.startswith("@@"):
            hunks.append([])
        elif line[:1] in (" ", "-", "+") or line == "":
            hunks[-1].append(line if line else " ")
    return [hunk for hunk in hunks if hunk]


def _find(lines: list[str], old: list[str], start: int) -> int | None:
    if not old:
        return len(lines) - 1 if lines and lines[-1] == "" else len(lines)
    for at in range(start, len(lines) - len(old) + 1):
        if lines[at:at + len(old)] == old:
            return at
    return None
