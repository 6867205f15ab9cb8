"""Whether a file written into a host's definitions folder stays a definition, not code.

Skills, subagents, commands and output styles are Markdown files whose frontmatter the
host reads; some keys make it run code as the user, outside the sandbox (`hooks`, an agent's
`mcpServers`), or lift the guardrails of what the model runs (`permissionMode`), and a body
may carry inline shell the host runs when it expands the file (`` !`cmd` ``). A folder that
holds a `.claude-plugin/plugin.json`, a `hooks/` folder or a mod's JavaScript is loaded as a
plugin. So the file tools may write only a `.md` file here whose frontmatter holds nothing
but descriptive keys (SAFE_KEYS, each a plain value) and whose text has no inline shell and
no line that declares an executable key, read the way a looser parser than PyYAML might read
it (a byte-order mark, CRLF, quotes, any case). Anything else is refused: a guard that cannot
tell says no.
"""

from __future__ import annotations

import re

from forge_runtime.host_contract.claude_code import FRONTMATTER_SAFE

# The host's descriptive keys (host_contract/claude_code.py), as compared (in any case),
# and `when-to-use`, a spelling no host reads.
SAFE_KEYS = frozenset({*(key.lower() for key in FRONTMATTER_SAFE), "when-to-use"})
# A line declaring a key that runs code, wherever it stands (frontmatter or not).
EXECUTABLE_LINE = re.compile(
    r"""^[\s"'\ufeff-]*(hooks|mcp[\s_-]*servers|permission[\s_-]*mode)["']?\s*:""",
    re.IGNORECASE | re.MULTILINE)
INLINE_SHELL = re.compile(r"!\s*`|^\s*```\s*!", re.MULTILINE)


def problem(name: str, text: str) -> str | None:
    """Why `text`, written as the file `name` in a definitions folder, could make the host
    run code; None when it is a plain definition."""
    if not name.lower().endswith(".md"):
        return ("is not a Markdown definition (a plugin manifest, hooks file, script or "
                "mod there is loaded as code)")
    line = EXECUTABLE_LINE.search(text)
    if line is not None:
        return f"declares `{line.group(1)}` (code the host would run outside the sandbox)"
    if INLINE_SHELL.search(text):
        return "holds inline shell (!`...`), which the host runs when it loads the file"
    return _front_matter_problem(text)


def _front_matter_problem(text: str) -> str | None:
    from forge_runtime.protected.paths import front_matter

    plain = text.lstrip("\ufeff").replace("\r\n", "\n")
    block = front_matter(plain.lstrip())
    if block is None:
        return None if "\n---" not in plain[:4096] and not plain.lstrip().startswith("---") \
            else "has frontmatter forge cannot read"
    import yaml

    try:
        fields = yaml.safe_load(block.strip().strip("-").strip() or "{}")
    except yaml.YAMLError:
        return "has frontmatter that is not valid YAML"
    fields = {} if fields is None else fields
    if not isinstance(fields, dict):
        return "has frontmatter that is not a mapping"
    for key, value in fields.items():
        if not isinstance(key, str) or key.lower() not in SAFE_KEYS:
            return f"declares `{key}`, which forge does not know to be harmless"
        if not _plain(value, nested=key.lower() == "metadata"):
            return f"gives `{key}` a value that is not plain text or a list"
    return None


def _plain(value, nested: bool) -> bool:
    if value is None or isinstance(value, (str, int, float, bool)):
        return True
    if isinstance(value, list):
        return all(_plain(item, False) and not isinstance(item, list) for item in value)
    if isinstance(value, dict) and nested:
        return all(isinstance(key, str) and _plain(item, False) for key, item in value.items())
    return False
