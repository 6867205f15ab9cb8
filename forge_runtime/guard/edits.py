"""What the host's file tools (Write, Edit, MultiEdit, NotebookEdit) would do to protected paths.

Every protected tree is off limits. `.forge/local/state.md` is special: its Markdown body
(the checklist) belongs to the agent, its front matter (the hook-owned `goal:` fields) does
not. So an edit of state.md is simulated on the current text and allowed only when the
front matter comes out byte-for-byte unchanged; a state.md written from nothing may only
carry `goal: null`. Comparing text, not parsed YAML, keeps this on the standard library
and leaves no room for two spellings of one value. The host's settings files and Codex's
`config.toml` are simulated the same way, their resulting content judged by
`host_settings` (a permissions edit goes through, one that switches forge off does not);
so is a file in a host's definitions folder (skills, subagents, commands, output styles),
judged by `definitions` (a plain skill goes through, one that declares hooks does not).
"""

from __future__ import annotations

from forge_runtime import safeio
from forge_runtime.protected.paths import (
    CODEX_CONFIG,
    DEFINITIONS,
    FRONT_MATTER,
    SETTINGS,
    Finding,
    Protected,
    expand,
    front_matter,
    hit,
)

FILE_TOOLS = {"Write": "file_path", "Edit": "file_path", "MultiEdit": "file_path",
              "NotebookEdit": "notebook_path"}
EMPTY_FRONT_MATTER = "---\ngoal: null\n---\n"


def check(tool: str, tool_input: dict, cwd: str, env: dict[str, str],
          protected: list[Protected]) -> Finding | None:
    """Why this file-tool call must be refused, or None."""
    word = tool_input.get(FILE_TOOLS[tool])
    if not isinstance(word, str):
        return Finding(f"input has no {FILE_TOOLS[tool]} string, so forge cannot tell "
                       "what it writes")
    path = expand(word, cwd, env)
    if path is None:
        return Finding(f"names `{word}`, a path forge cannot resolve")
    entry = hit(path, protected, destructive=False)
    if entry is None:
        return None
    if entry.kind == DEFINITIONS and path != entry.path and tool != "NotebookEdit":
        return _check_definition(tool, tool_input, path, word, entry)
    if path == entry.path and tool != "NotebookEdit":
        if entry.kind == FRONT_MATTER:
            return _check_state_edit(tool, tool_input, path, entry)
        if entry.kind in (SETTINGS, CODEX_CONFIG):
            return _check_host_edit(tool, tool_input, path, entry)
    return Finding(f"would write {entry.label} ({word})", entry)


def _check_host_edit(tool: str, tool_input: dict, path: str,
                     entry: Protected) -> Finding | None:
    from forge_runtime.guard import host_settings

    current = _current(path)
    if current is False:
        return Finding(f"would write {entry.label}, which forge cannot read to tell "
                       "whether the edit switches forge off", entry)
    after = _apply(tool, tool_input, current)
    if after is None:
        return Finding(f"input for {entry.label} is malformed, so forge cannot tell whether "
                       "it switches forge off", entry)
    return host_settings.judge(entry, path, current, after)


def _check_definition(tool: str, tool_input: dict, path: str, word: str,
                      entry: Protected) -> Finding | None:
    """A file in a folder of the host's Markdown definitions: allowed when what the tool
    leaves is a plain definition (definitions.py)."""
    from forge_runtime.guard import definitions

    current = _current(path)
    after = None if current is False else _apply(tool, tool_input, current)
    if after is None:
        return Finding(f"would write {entry.label} ({word}), and forge cannot tell what the "
                       "file would hold", entry)
    problem = definitions.problem(path, after)
    if problem is None:
        return None
    return Finding(f"would write {entry.label} ({word}): the file {problem}", entry)


def _current(path: str) -> str | None | bool:
    """The file's text; None when it does not exist; False when it cannot be read."""
    try:
        with safeio.reader(path, encoding="utf-8", newline="", follow_links=True) as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except (OSError, UnicodeDecodeError):
        return False


def _check_state_edit(tool: str, tool_input: dict, path: str,
                      entry: Protected) -> Finding | None:
    try:
        with safeio.reader(path, encoding="utf-8", newline="", follow_links=True) as handle:
            current: str | None = handle.read()
    except FileNotFoundError:
        current = None
    after = _apply(tool, tool_input, current)
    if after is None:
        return Finding("input for state.md is malformed, so forge cannot tell whether "
                       "it changes the goal fields", entry)
    before_fm = front_matter(current) if current is not None else EMPTY_FRONT_MATTER
    if front_matter(after) != before_fm:
        return Finding(f"would change {entry.label} (only forge's hooks write the "
                       "`goal:` front matter; edit the checklist below it instead)", entry)
    return None


def _apply(tool: str, tool_input: dict, current: str | None) -> str | None:
    """The file text after the tool runs; None when the input is not what the tool takes."""
    if tool == "Write":
        content = tool_input.get("content")
        return content if isinstance(content, str) else None
    edits = tool_input.get("edits") if tool == "MultiEdit" else [tool_input]
    if not isinstance(edits, list):
        return None
    text = current or ""
    for edit in edits:
        if not isinstance(edit, dict):
            return None
        old, new = edit.get("old_string"), edit.get("new_string")
        if not isinstance(old, str) or not isinstance(new, str):
            return None
        if old == "":
            if text:  # "" creates a file; on a written one, replace_all would multiply new_string
                return None
            text = new
        elif edit.get("replace_all") is True:
            text = text.replace(old, new)
        else:
            text = text.replace(old, new, 1)
    return text


